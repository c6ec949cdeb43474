package main

// Inputs that SIGINT and SIGTERM can stop. main cancels the command context
// with a signalError on the first signal; every command that reads a file
// named on the command line opens it through internal/ctxio (capture.Passes
// and OpenStream, trace.OpenCtx, ctxio.ReadFile), so that opening a FIFO, a
// read blocked on a FIFO or terminal, and every read and record of a
// regular file stop when ctx is done. The error is context.Cause(ctx), the
// signalError: exit 1, "interrupted by SIGINT", whatever wrapped it.

import (
	"context"
	"errors"
	"fmt"
	"io"

	"github.com/spf13/cobra"

	"github.com/idlewatt/idlewatt/internal/ctxio"
	"github.com/idlewatt/idlewatt/meter"
	"github.com/idlewatt/idlewatt/meter/registry"
)

// errInterrupted is the cause of the command context when SIGINT or SIGTERM
// arrived; signalError names which.
var errInterrupted = ctxio.ErrInterrupted

// cancellable runs f — work with no effect outside memory, such as an
// analysis or rendering charts — and returns its error, or ctx's cause as
// soon as a signal arrives: loops inside libraries that check nothing (a
// chart being drawn, a finishing pass over every drive) cannot hold the
// command past the signal. f is left to finish on its own and what it
// builds is dropped; it writes nothing, so nothing is left behind.
func cancellable(cmd *cobra.Command, f func() error) error {
	ctx := cmd.Context()
	done := make(chan error, 1)
	goSafe(cmd.ErrOrStderr(), func() { done <- f() })
	select {
	case err := <-done:
		if cause := context.Cause(ctx); errors.Is(cause, errInterrupted) {
			return cause
		}
		return err
	case <-ctx.Done():
		return context.Cause(ctx)
	}
}

// openCtx runs open (a device that may take seconds to answer) and gives
// up when a signal arrives: the open finishes behind and what it opened is
// closed. path names it in the error.
func openCtx[T io.Closer](cmd *cobra.Command, path string, open func() (T, error)) (T, error) {
	type opened struct {
		v   T
		err error
	}
	ch := make(chan opened, 1)
	goSafe(cmd.ErrOrStderr(), func() {
		v, err := open()
		ch <- opened{v, err}
	})
	select {
	case r := <-ch:
		return r.v, r.err
	case <-cmd.Context().Done():
		goSafe(cmd.ErrOrStderr(), func() {
			if r := <-ch; r.err == nil {
				r.v.Close()
			}
		})
		var zero T
		return zero, fmt.Errorf("--port %s: %w", path, context.Cause(cmd.Context()))
	}
}

// openMeterCtx opens a meter (registry.OpenFor) under openCtx.
func openMeterCtx(cmd *cobra.Command, kind, path string, s registry.Settings) (meter.Meter, bool, error) {
	type opened struct {
		meter.Meter
		replayed bool
	}
	o, err := openCtx(cmd, path, func() (opened, error) {
		m, r, err := registry.OpenFor(kind, path, s)
		return opened{m, r}, err
	})
	return o.Meter, o.replayed, err
}
