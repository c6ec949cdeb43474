// Package workload is the I/O side of idlewatt: what was asked of the drive
// while the meter watched. This package holds only the I/O vocabulary every
// stage shares — Op (read, write, flush, trim) and IOEvent (one completed
// I/O on the host clock) — so the capture, which stores IOEvents, imports the
// workload side and not the reverse (capture.Op and capture.IOEvent are
// aliases of these). The work is split by stage so each can be read alone.
//
// # Packages
//
//   - workload/trace: the trace model (trace.Op), streaming readers for fio iolog
//     v2/v3, blkparse text, SNIA/MSR Cambridge CSV and the native format,
//     format detection, writers and trace statistics.
//   - workload/gen: deterministic generators (PCMark-7-like application
//     traces, iometer patterns, the consistency test) that return streaming
//     trace.Readers, so no file is needed.
//   - workload/replay: the replay engine (io_uring or portable sync engine),
//     timing modes, per-op events on the host clock, results.
//   - workload/uring: a minimal io_uring binding on golang.org/x/sys/unix.
//   - workload/target: opening a file or block device safely.
//
// # Data path
//
// A trace.Reader yields Ops one at a time (memory is constant in the trace
// length). replay.Run schedules them by the chosen timing mode, executes them
// on a Target and reports every completed I/O as an IOEvent carrying
// hostclock.Now() (a hostclock.Time) at issue and at completion, which the capture writer stores
// beside the power samples. See docs/workload.md and docs/trace-formats.md.
//
// # Where it sits
//
// The workload floor (rank 1), beside the meter: the I/O vocabulary the
// capture stores, over hostclock only; capture, workload's sub-packages,
// the simulated drives and app/rig import it.
package workload
