// Package replay executes a trace against a file or block device and times
// every I/O on the host monotonic clock.
//
// # Engines
//
// The "uring" engine drives one io_uring from one goroutine locked to its OS
// thread: it batches submissions, and in as-fast-as-possible mode waits for
// several completions per io_uring_enter (a quarter of the queue depth, at
// most 8), which is what lets one goroutine keep up with fio. Waits bounded
// by I/O latency use a raw system call that keeps the thread's P (see
// uring.EnterNoYield), which at QD 1 saves a thread hand-off per I/O. The "sync"
// engine is the portable fallback: QD goroutines doing pread/pwrite (or the
// calling goroutine alone at QD 1). Engine "" picks uring and falls back to
// sync when io_uring is unavailable (ENOSYS, EPERM).
//
// # Timing
//
// Recorded timing is open loop: op i is due at start + (t_i − t_0)/speed and
// is issued then, or as soon as a queue slot frees if all QD slots are busy;
// its lateness (issue − due) is measured, never fed back, so delays do not
// accumulate into drift. compress-idle=D first shrinks every gap between
// consecutive ops longer than D to D (like Storage Bench's expunged idle),
// then behaves as recorded. afap issues every op as soon as a slot is free
// (closed loop at depth QD). Waiting is done by sleeping to ~150 µs before
// the due time and spinning the rest, with the thread's timer slack set to
// 1 ns; while I/O is in flight the ring wait itself carries the timeout.
//
// # Data
//
// With a target opened O_DIRECT, buffers are page aligned (mmapped) and ops
// are widened to the alignment (Config.Align). Write buffers hold random
// bytes (incompressible) and each 512-byte sector's first 8 bytes are
// overwritten with that sector's byte offset (little endian), so a written
// target can be verified and compression gains nothing.
//
// # Span
//
// CheckSpan refuses, from the trace's summary (trace.Summarize), a trace
// whose furthest op the target cannot hold, before a target is created or
// opened for writing and again once an existing one is open; Run's own
// ErrBeyondTarget is then the backstop for what the summary cannot see.
//
// # Events and results
//
// Every completed op is passed to onEvent as a workload.IOEvent with issue and
// completion times on the host monotonic clock — the clock of
// hostclock.Now, read through the vDSO (clock.go) — one reading per
// submission batch and per completion batch. Result holds IOPS, MB/s, latency per op type
// (mean/p99/max from a log-linear histogram with 3 % buckets), the per-second
// completion series, the busy-time data rate and lateness statistics.
//
// cli.go is `idlewatt replay` and `bench`: their settings (Flags,
// BenchFlags), checked before a target is opened or created (Replay,
// Bench), the target's fill progress, the I/O event log and the result
// as text.
//
// # Where it sits
//
// The workload floor (rank 1), over workload, workload/trace,
// workload/gen, workload/target and workload/uring; app/rig, app/config,
// report (the IOPS chart) and cmd/idlewatt import it.
package replay
