package main

// Inputs that SIGINT and SIGTERM can stop. main cancels the command context
// with a signalError on the first signal; every command that reads a file
// named on the command line (capture, trace, config, report.json) opens it
// here, through internal/ctxio, so that opening a FIFO, a read blocked on a
// FIFO or terminal, and every read and record of a regular file stop when
// ctx is done. The error is context.Cause(ctx), the signalError: exit 1,
// "interrupted by SIGINT", whatever wrapped it.

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"sync/atomic"

	"github.com/spf13/cobra"

	"github.com/idlewatt/idlewatt/analysis"
	"github.com/idlewatt/idlewatt/capture"
	"github.com/idlewatt/idlewatt/internal/ctxio"
	"github.com/idlewatt/idlewatt/internal/serialport"
	"github.com/idlewatt/idlewatt/meter"
	"github.com/idlewatt/idlewatt/meter/registry"
	"github.com/idlewatt/idlewatt/workload/trace"
)

// ctxSource is an analysis.Source that stops when ctx is done, and says
// how far it has read (for the progress line).
type ctxSource struct {
	ctx context.Context
	*capture.Reader
	at *readPos
}

func (s ctxSource) Next() (capture.Record, error) {
	if err := checkStop(s.ctx); err != nil {
		return capture.Record{}, err
	}
	rec, err := s.Reader.Next()
	if s.at != nil {
		s.at.off.Store(s.Reader.Offset())
	}
	return rec, err
}

// CaptureReader hands the reader to the analysis passes that read a
// capture run by run (capture.NewRows); they run under cancellable.
func (s ctxSource) CaptureReader() *capture.Reader { return s.Reader }

// readPos is how far the current pass over a capture has read, for a
// progress line: which pass, at which byte of how many.
type readPos struct {
	pass atomic.Int32
	off  atomic.Int64
	size int64
}

// frac is the current pass's fraction read.
func (p *readPos) frac() float64 {
	if p.size <= 0 {
		return -1
	}
	return min(1, float64(p.off.Load())/float64(p.size))
}

// Every check for a signal in a command's long loops — each record of a
// pass over a capture, each file of a report, each row group of an export —
// goes through checkStop. A test puts a stopHook in the command's context
// to count the checks and cancel the command at its n-th, stopping it at
// every stage without a clock.
type stopHookKey struct{}

// withStopHook returns ctx whose checks call hook first.
func withStopHook(ctx context.Context, hook func()) context.Context {
	return context.WithValue(ctx, stopHookKey{}, hook)
}

// checkStop returns ctx's cause once a signal (or a test's hook) has
// cancelled it, nil before.
func checkStop(ctx context.Context) error {
	if h, ok := ctx.Value(stopHookKey{}).(func()); ok {
		h()
	}
	if cause := context.Cause(ctx); cause != nil {
		return cause
	}
	return nil
}

// interrupted returns a check that says whether a signal has cancelled ctx
// (its cause), for work that must not write what a cut-short pass read.
func interrupted(ctx context.Context) func() error {
	return func() error {
		if cause := checkStop(ctx); errors.Is(cause, errInterrupted) {
			return cause
		}
		return nil
	}
}

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
// pass stopping when ctx is done. Analysis reads a capture twice, so a
// FIFO (or anything that is not a regular file) is refused up front.
func captureOpener(ctx context.Context, cmd *cobra.Command, path string) (analysis.Opener, error) {
	open, _, err := captureOpenerAt(ctx, cmd, path)
	return open, err
}

// captureOpenerAt is captureOpener with the position of its passes.
func captureOpenerAt(ctx context.Context, cmd *cobra.Command, path string) (analysis.Opener, *readPos, error) {
	fi, err := os.Stat(path)
	if err != nil {
		return nil, nil, inputErr(fmt.Errorf("capture: %w", err))
	}
	if !fi.Mode().IsRegular() {
		if fi.IsDir() {
			return nil, nil, usageErr("%s: %s is a directory, not a regular file (a capture)", cmd.CommandPath(), path)
		}
		return nil, nil, usageErr("%s: %s is not a regular file (%s); %s reads a capture twice: copy it to a file first",
			cmd.CommandPath(), path, fileKind(fi.Mode()), cmd.Name())
	}
	at := &readPos{size: fi.Size()}
	return func() (analysis.Source, error) {
		if err := checkStop(ctx); err != nil {
			return nil, err
		}
		r, err := capture.Open(path)
		if err != nil {
			return nil, err
		}
		at.pass.Add(1)
		at.off.Store(0)
		return ctxSource{ctx, r, at}, nil
	}, at, nil
}

// openCaptureStream opens a capture for one pass from its start; any file
// that can be read (a FIFO too). Close the returned closer after the reader.
func openCaptureStream(ctx context.Context, path string) (*capture.Reader, io.Closer, error) {
	f, err := ctxio.Open(ctx, path)
	if err != nil {
		return nil, nil, fmt.Errorf("capture: %w", err)
	}
	cr := ctxio.NewReader(ctx, f)
	r, err := capture.NewReader(stopReader{ctx, cr})
	if err != nil {
		cr.Close()
		return nil, nil, fmt.Errorf("%s: %w", path, err)
	}
	return r, cr, nil
}

// stopReader checks for a signal (checkStop) at every read of a stream
// (the reader above it reads 64 KiB at a time); ctxio's reader also wakes
// a read blocked on a FIFO.
type stopReader struct {
	ctx context.Context
	r   io.Reader
}

func (s stopReader) Read(p []byte) (int, error) {
	if err := checkStop(s.ctx); err != nil {
		return 0, err
	}
	return s.r.Read(p)
}

// cmdTrace is a trace opened by wlOpenTrace.
type cmdTrace struct {
	trace.Reader
	Format trace.Format
	in     *ctxio.Reader
}

func (t *cmdTrace) Close() error { return t.in.Close() }

// openTrace opens a trace file (any readable file), detecting its format
// unless format is given, reading it until ctx is done.
func openTrace(ctx context.Context, path string, format trace.Format) (*cmdTrace, error) {
	f, err := ctxio.Open(ctx, path)
	if err != nil {
		return nil, err
	}
	in := ctxio.NewReader(ctx, f)
	br := bufio.NewReaderSize(in, 64<<10)
	if format == "" {
		if format, err = trace.Detect(br); err != nil {
			in.Close()
			if ctx.Err() != nil {
				return nil, fmt.Errorf("%s: %w", path, context.Cause(ctx))
			}
			return nil, fmt.Errorf("%s: %w (expected fio iolog v2/v3, blkparse text, MSR CSV or %q)", path, err, trace.NativeHeader)
		}
	}
	r, err := trace.NewReader(br, format, path)
	if err != nil {
		in.Close()
		return nil, err
	}
	return &cmdTrace{Reader: r, Format: format, in: in}, nil
}

// ctxTrace is a trace.Reader (a generator) that stops when ctx is done.
type ctxTrace struct {
	ctx context.Context
	trace.Reader
}

func (t ctxTrace) Next() (trace.Op, error) {
	if err := checkStop(t.ctx); err != nil {
		return trace.Op{}, err
	}
	return t.Reader.Next()
}

// maxConfigBytes bounds a config file (a YAML file of drives and profiles
// is a few KiB; a bigger one is a mistake, such as a capture passed as
// --config).
const maxConfigBytes = 16 << 20

// readInput reads a whole small input file, stopping when ctx is done.
func readInput(ctx context.Context, path string, limit int64) ([]byte, error) {
	f, err := ctxio.Open(ctx, path)
	if err != nil {
		return nil, err
	}
	in := ctxio.NewReader(ctx, f)
	defer in.Close()
	b, err := io.ReadAll(io.LimitReader(in, limit+1))
	if err != nil {
		return nil, err
	}
	if int64(len(b)) > limit {
		return nil, fmt.Errorf("larger than %d MiB: not a config file", limit>>20)
	}
	return b, nil
}

// loadReportJSON reads a report.json (compare's inputs), stopping when ctx
// is done.
func loadReportJSON(ctx context.Context, path string) (*analysis.Report, error) {
	f, err := ctxio.Open(ctx, path)
	if err != nil {
		return nil, err
	}
	in := ctxio.NewReader(ctx, f)
	defer in.Close()
	r, err := analysis.ReadJSON(in)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return r, nil
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

// fileKind names what a non-regular file is, for a message.
func fileKind(m os.FileMode) string {
	switch {
	case m&os.ModeNamedPipe != 0:
		return "a named pipe"
	case m&os.ModeSocket != 0:
		return "a socket"
	case m&os.ModeCharDevice != 0:
		return "a character device"
	case m&os.ModeDevice != 0:
		return "a block device"
	}
	return "a special file"
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
