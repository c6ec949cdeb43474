// Package trace is idlewatt's I/O trace model and its file formats.
//
// # Model
//
// An Op is one I/O request: when it was issued relative to the start of the
// trace, its type (read, write, flush, trim), byte offset and size, and the
// file or device it named. A Reader yields Ops in trace order, one per call
// to Next, and returns io.EOF after the last one. Every reader in this
// package streams: it holds one line at a time, so memory does not grow with
// the length of the trace.
//
// # Formats
//
// One reader per file: fio iolog v2 and v3 (fio.go), blkparse default text
// (blkparse.go), SNIA IOTTA / MSR Cambridge CSV (msr.go) and the native
// idlewatt format (native.go). Detect (detect.go) picks the format from the
// first lines. Writers for every format are in write.go. The formats, and how
// each corner case is handled, are described in docs/trace-formats.md.
//
// # Errors
//
// A malformed line yields a *ParseError naming file:line and what was
// expected; errors.Is(err, ErrSyntax) holds for all of them. No input panics
// (every reader has a Fuzz target).
//
// # Where it sits
//
// The workload floor (rank 1), over workload; workload/gen,
// workload/replay, app/rig and cmd/idlewatt import it.
package trace
