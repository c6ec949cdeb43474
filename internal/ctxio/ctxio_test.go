package ctxio

import (
	"bytes"
	"context"
	"errors"
	"io"
	"os"
	"path/filepath"
	"syscall"
	"testing"
	"time"
)

var errStop = errors.New("stopped by the test")

func fifo(t *testing.T) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), "fifo")
	if err := syscall.Mkfifo(p, 0o600); err != nil {
		t.Skipf("mkfifo: %v", err)
	}
	return p
}

// within fails the test if f does not return within 5 s (the goal is at
// once; the machine is shared).
func within(t *testing.T, what string, f func() error) error {
	t.Helper()
	done := make(chan error, 1)
	go func() { done <- f() }()
	select {
	case err := <-done:
		return err
	case <-time.After(5 * time.Second):
		t.Fatalf("%s still blocked 5 s after the cancel", what)
		return nil
	}
}

// Opening a FIFO no writer opens blocks in open(2); cancelling the context
// ends the wait with its cause.
func TestOpenFIFOCancelled(t *testing.T) {
	t.Parallel()
	p := fifo(t)
	ctx, cancel := context.WithCancelCause(context.Background())
	time.AfterFunc(100*time.Millisecond, func() { cancel(errStop) })
	err := within(t, "Open", func() error { _, err := Open(ctx, p); return err })
	if !errors.Is(err, errStop) {
		t.Fatalf("Open: %v, want the cause", err)
	}
	// The open left behind completes when a writer comes, and is closed.
	w, err := os.OpenFile(p, os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	w.Close()
}

// A Read blocked on a FIFO whose writer sends nothing wakes on the cancel.
func TestReaderWakesOnCancel(t *testing.T) {
	t.Parallel()
	p := fifo(t)
	opened := make(chan *os.File, 1)
	go func() {
		w, err := os.OpenFile(p, os.O_WRONLY, 0)
		if err == nil {
			w.Write([]byte("ab"))
		}
		opened <- w
	}()
	ctx, cancel := context.WithCancelCause(context.Background())
	f, err := Open(ctx, p)
	if err != nil {
		t.Fatal(err)
	}
	w := <-opened
	defer w.Close()
	r := NewReader(ctx, f)
	defer r.Close()
	buf := make([]byte, 2)
	if n, err := io.ReadFull(r, buf); n != 2 || err != nil || string(buf) != "ab" {
		t.Fatalf("read %q, %v", buf[:n], err)
	}
	time.AfterFunc(100*time.Millisecond, func() { cancel(errStop) })
	err = within(t, "Read", func() error { _, err := r.Read(buf); return err })
	if !errors.Is(err, errStop) {
		t.Fatalf("Read: %v, want the cause", err)
	}
}

// A regular file reads to EOF; after the cancel every Read fails at once.
func TestReaderRegularFile(t *testing.T) {
	t.Parallel()
	p := filepath.Join(t.TempDir(), "f")
	if err := os.WriteFile(p, []byte("hello"), 0o600); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancelCause(context.Background())
	f, err := Open(ctx, p)
	if err != nil {
		t.Fatal(err)
	}
	r := NewReader(ctx, f)
	defer r.Close()
	b, err := io.ReadAll(r)
	if err != nil || string(b) != "hello" {
		t.Fatalf("ReadAll %q, %v", b, err)
	}
	cancel(errStop)
	if _, err := r.Read(make([]byte, 1)); !errors.Is(err, errStop) {
		t.Fatalf("Read after cancel: %v", err)
	}
	if _, err := Open(ctx, p); !errors.Is(err, errStop) {
		t.Fatalf("Open after cancel: %v", err)
	}
}

func TestWriter(t *testing.T) {
	t.Parallel()
	ctx, cancel := context.WithCancelCause(context.Background())
	var out bytes.Buffer
	w := Writer{Ctx: ctx, W: &out}
	if _, err := w.Write([]byte("x")); err != nil || out.String() != "x" {
		t.Fatalf("Write: %v, %q", err, out.String())
	}
	cancel(errStop)
	if n, err := w.Write([]byte("y")); n != 0 || !errors.Is(err, errStop) || out.String() != "x" {
		t.Fatalf("Write after cancel: %d, %v, %q", n, err, out.String())
	}
}
