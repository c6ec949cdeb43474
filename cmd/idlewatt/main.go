package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"runtime/debug"
	"runtime/pprof"

	"github.com/spf13/cobra"

	"github.com/idlewatt/idlewatt/internal/ctxio"
	"github.com/idlewatt/idlewatt/internal/outfile"
	"github.com/idlewatt/idlewatt/internal/settings"
	"github.com/idlewatt/idlewatt/meter"
	"github.com/idlewatt/idlewatt/meter/registry"
)

func main() {
	setMemoryLimit(os.Args[1:])
	stop := startCPUProfile(os.Getenv("IDLEWATT_CPUPROFILE"), os.Stderr)
	code := runMain(os.Args[1:], os.Stdout, os.Stderr)
	stop()
	os.Exit(code)
}

// startCPUProfile writes a CPU profile of the whole command into path (a new
// file; an existing one is refused) when path is set: IDLEWATT_CPUPROFILE, a
// developer's switch for `go tool pprof` (docs/benchmarks.md). The returned
// func stops it.
func startCPUProfile(path string, stderr io.Writer) func() {
	if path == "" {
		return func() {}
	}
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o644)
	if err == nil {
		if err = pprof.StartCPUProfile(f); err != nil {
			f.Close()
		}
	}
	if err != nil {
		fmt.Fprintf(stderr, "idlewatt: IDLEWATT_CPUPROFILE: %v (no profile written)\n", err)
		return func() {}
	}
	return func() { pprof.StopCPUProfile(); f.Close() }
}

// analysisMemoryLimit is the soft memory limit of the commands that read a
// whole capture (docs/benchmarks.md, "24 hours"): their live heap is a few
// tens of MB whatever the capture's length, but with the default GOGC the
// heap grows to twice that between collections (a 6-hour report with its
// report.html peaked at 190 MB RSS, 98 MB with this limit, the same CPU
// time). GOMEMLIMIT, when set, wins.
const analysisMemoryLimit = 64 << 20

// setMemoryLimit applies analysisMemoryLimit to report, compare, plot and
// export, unless GOMEMLIMIT is set. It is a soft limit: a larger live heap
// is collected more often, never refused.
func setMemoryLimit(args []string) {
	if len(args) == 0 || os.Getenv("GOMEMLIMIT") != "" {
		return
	}
	switch args[0] {
	case "report", "compare", "plot", "export":
		debug.SetMemoryLimit(analysisMemoryLimit)
	}
}

// runMain runs one command line with signal handling and the panic guard,
// and returns the process exit code.
func runMain(args []string, stdout, stderr io.Writer) (code int) {
	ctx, cancel := context.WithCancelCause(context.Background())
	defer cancel(nil)
	stopSignals := ctxio.WatchSignals(cancel) // every command reads its input through ctx-aware readers (cancel.go)
	defer stopSignals()

	defer func() {
		if p := recover(); p != nil {
			code = internalError(stderr, p, debug.Stack())
		}
	}()
	cl := newCLI(stdout, stderr)
	c, err := cl.execute(ctx, args)
	if cause := context.Cause(ctx); err == nil && errors.Is(cause, errInterrupted) && c != nil && c.Annotations[annSignalEnds] == "" && !cl.placed {
		// The command returned as if done, but a signal cut its job short.
		err = fmt.Errorf("%w before %s finished", cause, c.CommandPath())
	}
	if cause := context.Cause(ctx); err != nil && errors.Is(cause, errInterrupted) && !errors.Is(err, errInterrupted) &&
		(errors.Is(err, context.Canceled) || errors.Is(err, os.ErrDeadlineExceeded)) {
		// A library stopped with the bare context error: say why.
		err = fmt.Errorf("%w (%v)", cause, err)
	}
	return cl.exitCode(err)
}

// Exit codes, per docs/cli.md: one code per kind of error, whatever the
// command.
const (
	exitOK       = 0
	exitFailure  = 1 // a measurement, check or device failed, or the run was interrupted
	exitUsage    = 2 // bad usage or bad input
	exitInternal = 3 // a bug in idlewatt (a panic); the stack is written to a file
)

// codedError carries the process exit code with the error.
type codedError struct {
	code int
	err  error
}

func (e *codedError) Error() string { return e.err.Error() }
func (e *codedError) Unwrap() error { return e.err }

// annSignalEnds marks a command (cobra Annotations) whose normal end is a
// signal — an emulator serving until SIGINT, record --duration 0 — so that
// returning nil after one is success; any other command that a signal
// reached before it returned exits 1.
const annSignalEnds = "idlewatt/signal-ends"

// signalEnds marks c with annSignalEnds and returns it.
func signalEnds(c *cobra.Command) *cobra.Command {
	if c.Annotations == nil {
		c.Annotations = map[string]string{}
	}
	c.Annotations[annSignalEnds] = "true"
	return c
}

// signalError is the cause of the command context when SIGINT or SIGTERM
// arrived (errInterrupted); it names which.
type signalError = ctxio.SignalError

// usageErr reports bad usage or bad input (exit 2). %w in format keeps the
// cause for errors.Is/As.
func usageErr(format string, a ...any) error {
	return &codedError{code: exitUsage, err: fmt.Errorf(format, a...)}
}

// inputErr marks err as bad input (exit 2), keeping it for errors.Is/As.
func inputErr(err error) error {
	if err == nil {
		return nil
	}
	return &codedError{code: exitUsage, err: err}
}

// failErr reports a failed measurement, check or device (exit 1). A cause
// wrapped with %w that is bad input (a usage error, a rate the meter does
// not support) still exits 2: see classify.
func failErr(format string, a ...any) error {
	return &codedError{code: exitFailure, err: fmt.Errorf(format, a...)}
}

// classify is the one place that maps an error to an exit code. An
// interruption (SIGINT/SIGTERM) is exit 1 whatever it interrupted (a read
// of an input cut short by the signal is not bad input); then bad input
// anywhere in the chain wins (a failed measurement caused by a rate the
// meter cannot do is the user's input, exit 2); then the code the command
// chose; then 1. preRunDone says cobra had parsed the command line (see
// cli.preRunDone).
func classify(err error, preRunDone bool) int {
	if err == nil {
		return exitOK
	}
	if errors.Is(err, errInterrupted) {
		return exitFailure
	}
	if !preRunDone || isUsage(err) {
		return exitUsage
	}
	var ce *codedError
	if errors.As(err, &ce) {
		return ce.code
	}
	return exitFailure
}

// isUsage reports whether err, or any error it wraps (also through
// errors.Join), is bad usage or input (an output refused because it would
// destroy a file is bad usage, whatever wrapped it).
func isUsage(err error) bool {
	if errors.Is(err, errCobraUsage) || errors.Is(err, meter.ErrUnsupported) || errors.Is(err, outfile.ErrRefused) ||
		errors.Is(err, registry.ErrUsage) || errors.Is(err, registry.ErrInput) || errors.Is(err, settings.ErrUsage) {
		return true
	}
	var ce *codedError
	if errors.As(err, &ce) {
		if ce.code == exitUsage {
			return true
		}
		return isUsage(ce.err)
	}
	switch u := err.(type) {
	case interface{ Unwrap() []error }:
		for _, e := range u.Unwrap() {
			if isUsage(e) {
				return true
			}
		}
	case interface{ Unwrap() error }:
		return isUsage(u.Unwrap())
	}
	return false
}

// exitNow ends the process; tests replace it.
var exitNow = os.Exit

// internalError writes the stack of a recovered panic to a file under
// os.TempDir, says where, and returns exit code 3.
func internalError(stderr io.Writer, p any, stack []byte) int {
	where := "stack not saved"
	f, err := os.CreateTemp("", "idlewatt-panic-*.txt")
	if err == nil {
		_, werr := fmt.Fprintf(f, "idlewatt %s: panic: %v\n\n%s", version, p, stack)
		if cerr := f.Close(); werr == nil && cerr == nil {
			where = "stack written to " + f.Name()
		} else {
			where = fmt.Sprintf("stack not saved: %v", errors.Join(werr, cerr))
		}
	} else {
		where = fmt.Sprintf("stack not saved: %v", err)
	}
	fmt.Fprintf(stderr, "idlewatt: internal error: %v (%s); please report it\n", p, where)
	return exitInternal
}

// goSafe runs f in a goroutine under the panic guard: a panic there ends
// the process with exit 3 and the stack in a file, as one in the command
// itself would. Every goroutine cmd/idlewatt starts goes through goSafe; a
// panic in a goroutine a library starts cannot be recovered here.
func goSafe(stderr io.Writer, f func()) {
	go func() {
		defer func() {
			if p := recover(); p != nil {
				exitNow(internalError(stderr, p, debug.Stack()))
			}
		}()
		f()
	}()
}
