package ctxio

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
)

// ErrInterrupted is the cause of a context a signal cancelled (the command
// line's SIGINT or SIGTERM; its error unwraps to this).
var ErrInterrupted = errors.New("interrupted")

// Every check for a signal in a long loop — each record of a pass over a
// capture, each file of a report, each row group of an export — goes
// through Stopped. A test puts a hook in the context (WithStopHook) to
// count the checks and cancel the command at its n-th, stopping it at
// every stage without a clock.
type stopHookKey struct{}

// WithStopHook returns ctx whose Stopped checks call hook first.
func WithStopHook(ctx context.Context, hook func()) context.Context {
	return context.WithValue(ctx, stopHookKey{}, hook)
}

// Stopped returns ctx's cause once it is cancelled (or a test's hook
// cancelled it), nil before.
func Stopped(ctx context.Context) error {
	if h, ok := ctx.Value(stopHookKey{}).(func()); ok {
		h()
	}
	return context.Cause(ctx)
}

// Interrupted returns a check that says whether a signal has cancelled ctx
// (its cause, ErrInterrupted), for work that must not write what a
// cut-short pass read.
func Interrupted(ctx context.Context) func() error {
	return func() error {
		if cause := Stopped(ctx); errors.Is(cause, ErrInterrupted) {
			return cause
		}
		return nil
	}
}

// StopReader checks Stopped at every read of R (a reader above it reads
// 64 KiB at a time).
type StopReader struct {
	Ctx context.Context
	R   io.Reader
}

func (s StopReader) Read(p []byte) (int, error) {
	if err := Stopped(s.Ctx); err != nil {
		return 0, err
	}
	return s.R.Read(p)
}

// ReadFile reads a whole small file, stopping when ctx is done; a file
// longer than limit is an error that says what it is not (what).
func ReadFile(ctx context.Context, path string, limit int64, what string) ([]byte, error) {
	f, err := Open(ctx, path)
	if err != nil {
		return nil, err
	}
	in := NewReader(ctx, f)
	defer in.Close()
	b, err := io.ReadAll(io.LimitReader(in, limit+1))
	if err != nil {
		return nil, err
	}
	if int64(len(b)) > limit {
		return nil, fmt.Errorf("larger than %d MiB: not %s", limit>>20, what)
	}
	return b, nil
}

// OpenBuffered opens path (any readable file, a FIFO too) for one
// buffered pass that stops when ctx is done; Close the returned closer
// when done.
func OpenBuffered(ctx context.Context, path string) (*bufio.Reader, io.Closer, error) {
	f, err := Open(ctx, path)
	if err != nil {
		return nil, nil, err
	}
	in := NewReader(ctx, f)
	return bufio.NewReaderSize(in, 64<<10), in, nil
}

// FileKind names what a file that is not a regular one is, for a message.
func FileKind(m os.FileMode) string {
	switch {
	case m.IsDir():
		return "a directory"
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
