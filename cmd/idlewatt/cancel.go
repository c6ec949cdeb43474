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

	"github.com/spf13/cobra"

	"github.com/idlewatt/idlewatt/analysis"
	"github.com/idlewatt/idlewatt/capture"
	"github.com/idlewatt/idlewatt/internal/ctxio"
	"github.com/idlewatt/idlewatt/internal/serialport"
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

// captureOpener opens the capture at path once per analysis pass, each
// pass stopping when the command's context is done, and says how far the
// passes are (capture.Passes refuses a FIFO: analysis reads twice).
func captureOpener(cmd *cobra.Command, path string) (analysis.Opener, *capture.Pos, error) {
	open, at, err := capture.Passes(cmd.Context(), path, cmd.CommandPath())
	if err != nil {
		return nil, nil, err
	}
	return func() (analysis.Source, error) {
		r, err := open()
		if err != nil {
			return nil, err
		}
		return r, nil
	}, at, nil
}

// openMeterCtx is openMeterWith, given up when a signal arrives: opening
// waits for the meter to answer (up to a few seconds); the open finishes
// behind and its meter is closed.
func openMeterCtx(cmd *cobra.Command, kind, path string, s registry.Settings) (meter.Meter, bool, error) {
	type opened struct {
		m        meter.Meter
		replayed bool
		err      error
	}
	ch := make(chan opened, 1)
	goSafe(cmd.ErrOrStderr(), func() {
		m, replayed, err := openMeterWith(kind, path, s)
		ch <- opened{m, replayed, err}
	})
	select {
	case r := <-ch:
		return r.m, r.replayed, r.err
	case <-cmd.Context().Done():
		goSafe(cmd.ErrOrStderr(), func() {
			if r := <-ch; r.m != nil {
				r.m.Close()
			}
		})
		return nil, false, fmt.Errorf("--port %s: %w", path, context.Cause(cmd.Context()))
	}
}

// openMeterWith opens a meter of kind at path (or the kind's default port)
// through meter/registry. A regular file is replayed when the kind supports
// it; replayed says so. Bad usage or a recorded stream that does not decode
// is a usage error (exit 2); a device that does not answer properly is a
// failure.
func openMeterWith(kind, path string, s registry.Settings) (m meter.Meter, replayed bool, err error) {
	m, replayed, err = registry.Open(kind, path, s)
	if err == nil {
		return m, replayed, nil
	}
	path = registry.DefaultPort(kind, path)
	switch {
	case errors.Is(err, registry.ErrUnknownKind):
		return nil, replayed, usageErr("--meter %v", err)
	case errors.Is(err, registry.ErrUsage):
		return nil, replayed, inputErr(err)
	case replayed:
		return nil, replayed, inputErr(fmt.Errorf("--port %s: %w", path, err))
	}
	return nil, replayed, meterOpenErr(fmt.Errorf("--port %s: %w", path, err))
}

// meterOpenErr gives a failure to open a meter its exit code: a port another
// process holds, or a meter whose calibration is out of its physical bounds,
// is bad input (exit 2: nothing was measured, and retrying will not help
// until the user acts); anything else is a device failure (exit 1).
func meterOpenErr(err error) error {
	if errors.Is(err, serialport.ErrInUse) || errors.Is(err, meter.ErrCalibration) {
		return inputErr(err)
	}
	return &codedError{code: exitFailure, err: err}
}
