package ctxio

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"time"
)

// Open opens path for reading, giving up when ctx is done.
func Open(ctx context.Context, path string) (*os.File, error) {
	if err := context.Cause(ctx); err != nil {
		return nil, err
	}
	if fi, err := os.Stat(path); err == nil && fi.Mode().IsRegular() {
		return os.Open(path) // does not block
	}
	type result struct {
		f   *os.File
		err error
	}
	ch := make(chan result, 1)
	go func() { // os.Open does not panic
		f, err := os.Open(path)
		ch <- result{f, err}
	}()
	select {
	case r := <-ch:
		return r.f, r.err
	case <-ctx.Done():
		go func() { // close the file if the open completes after all
			if r := <-ch; r.f != nil {
				r.f.Close()
			}
		}()
		return nil, fmt.Errorf("opening %s: %w", path, context.Cause(ctx))
	}
}

// Reader reads a file until its context is done, then fails with
// context.Cause(ctx).
type Reader struct {
	ctx  context.Context
	f    *os.File
	stop func() bool
}

// NewReader wraps f; Close stops watching ctx and closes f.
func NewReader(ctx context.Context, f *os.File) *Reader {
	r := &Reader{ctx: ctx, f: f}
	// Wakes a Read blocked in the poller (FIFO, pty, socket); regular
	// files refuse deadlines, and their reads do not block.
	r.stop = context.AfterFunc(ctx, func() { _ = f.SetReadDeadline(time.Now()) })
	return r
}

func (r *Reader) Read(p []byte) (int, error) {
	if err := context.Cause(r.ctx); err != nil {
		return 0, err
	}
	n, err := r.f.Read(p)
	if err != nil && r.ctx.Err() != nil && !errors.Is(err, io.EOF) {
		return n, context.Cause(r.ctx)
	}
	return n, err
}

// Close stops watching the context and closes the file.
func (r *Reader) Close() error {
	r.stop()
	return r.f.Close()
}

// Writer writes to W until Ctx is done, then fails with its cause.
type Writer struct {
	Ctx context.Context
	W   io.Writer
}

func (c Writer) Write(p []byte) (int, error) {
	if err := context.Cause(c.Ctx); err != nil {
		return 0, err
	}
	return c.W.Write(p)
}
