// Package gen generates synthetic traces, deterministically from a seed:
// PCMark-7-like application traces, iometer-style access patterns and the
// performance-consistency test. Every generator returns a streaming
// trace.Reader (nothing is held in memory), so callers can replay without a
// file, or write the native format with trace.Writer.
//
// # PCMark-7-like traces
//
// PCMark 7's Secondary Storage suite replays seven recorded traces. Two mixes
// are published (Windows Defender: 97.9 % reads, 93 % of them random;
// importing pictures: 68 images, 434 MB, write-heavy, mostly random writes);
// the other five were chosen from what each application does and are
// documented, with the reasoning, in docs/workload.md. Each trace is a series
// of bursts separated by idle gaps of seconds, so a drive with link power
// management falls to Partial/Slumber between them — the part of the run
// where the power story is.
//
// # Determinism
//
// The random source is math/rand/v2's PCG, whose output is specified, so a
// seed gives the same trace on every platform and Go release.
//
// # Where it sits
//
// The workload floor (rank 1), over workload and workload/trace; app/rig
// and cmd/idlewatt import it.
package gen
