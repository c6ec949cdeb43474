// Command idlewatt measures the power storage drives draw and proves whether
// they reach their idle states. See README.md and docs/.
package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/signal"
	"syscall"

	"github.com/idlewatt/idlewatt/internal/outfile"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	root := newRootCmd()
	err := root.ExecuteContext(ctx)
	os.Exit(exitCode(err, root.ErrOrStderr()))
}

// Exit codes, per docs/cli.md.
const (
	exitOK      = 0
	exitFailure = 1 // a measurement, check or device failed
	exitUsage   = 2 // bad usage or bad input
)

// codedError carries the process exit code with the error.
type codedError struct {
	code int
	err  error
}

func (e *codedError) Error() string { return e.err.Error() }
func (e *codedError) Unwrap() error { return e.err }

// usageErr reports bad usage or bad input (exit 2).
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

// failErr reports a failed measurement, check or device (exit 1).
func failErr(format string, a ...any) error {
	return &codedError{code: exitFailure, err: fmt.Errorf(format, a...)}
}

func exitCode(err error, stderr interface{ Write([]byte) (int, error) }) int {
	if err == nil {
		return exitOK
	}
	fmt.Fprintln(stderr, "idlewatt:", err)
	if errors.Is(err, outfile.ErrRefused) {
		return exitUsage // an output that would destroy a file: bad usage, whatever wrapped it
	}
	var ce *codedError
	if errors.As(err, &ce) {
		return ce.code
	}
	if errors.Is(err, errCobraUsage) {
		return exitUsage
	}
	return exitFailure
}
