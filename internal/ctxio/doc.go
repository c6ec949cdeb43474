// Package ctxio opens and reads input files so that a cancelled context
// (SIGINT or SIGTERM in the command line) stops the wait at once:
//
//   - Open of a FIFO, which blocks in open(2) until a writer appears, is
//     waited for in a goroutine the caller stops waiting for (the file is
//     closed if the open completes later);
//   - a Reader's Read blocked on a FIFO, a terminal or a socket (Go's
//     poller) is woken by a read deadline the moment the context is done;
//   - every Read and Write checks the context first, so a long pass over a
//     regular file (whose reads never block) stops within one call.
//
// The error is context.Cause(ctx), so the caller's cause (cmd/idlewatt's
// "interrupted by SIGINT") reaches the user whatever wrapped it.
// WatchSignals makes that cause (SignalError, ErrInterrupted); Stopped
// is the one check long loops make (a test's hook counts them), and
// Interrupted the one for work that must not write what a cut-short pass
// read.
//
// Where it sits: a leaf (rank 0) that imports nothing of the project;
// capture, workload/trace, report and cmd/idlewatt import it.
package ctxio
