package serialport

import (
	"bytes"
	"errors"
	"io"
	"os"
	"testing"
	"time"

	"github.com/creack/pty"
)

// TestPolledOnPTY: OpenPolled's port is raw (every byte value passes
// unchanged, both ways), honours read deadlines, is locked against a second
// opener, and Close ends a Read that is waiting with os.ErrClosed and frees
// the port.
func TestPolledOnPTY(t *testing.T) {
	m, s, err := pty.Open()
	if err != nil {
		t.Skipf("no pty: %v", err)
	}
	defer m.Close()
	defer s.Close()
	p, err := OpenPolled(s.Name(), 921600)
	if err != nil {
		t.Fatalf("OpenPolled %s: %v", s.Name(), err)
	}
	if _, err := OpenPolled(s.Name(), 921600); !errors.Is(err, ErrInUse) {
		t.Fatalf("second OpenPolled: %v, want ErrInUse", err)
	}
	want := []byte{0x00, 0x0d, 0x0a, 0x03, 0x04, 0x7f, 0xff, 0x11, 0x13, 0x1a}
	if _, err := m.Write(want); err != nil {
		t.Fatal(err)
	}
	got := make([]byte, len(want))
	_ = p.SetReadDeadline(time.Now().Add(2 * time.Second))
	if _, err := io.ReadFull(p, got); err != nil || !bytes.Equal(got, want) {
		t.Fatalf("read %x (%v), want %x", got, err, want)
	}
	if _, err := p.Write(want); err != nil {
		t.Fatal(err)
	}
	back := make([]byte, len(want))
	if _, err := io.ReadFull(m, back); err != nil || !bytes.Equal(back, want) {
		t.Fatalf("master read %x (%v), want %x", back, err, want)
	}
	_ = p.SetReadDeadline(time.Now().Add(50 * time.Millisecond))
	if n, err := p.Read(got); n != 0 || !errors.Is(err, os.ErrDeadlineExceeded) {
		t.Fatalf("read past the deadline: %d, %v", n, err)
	}
	_ = p.SetReadDeadline(time.Time{})
	done := make(chan error, 1)
	go func() {
		_, err := p.Read(got)
		done <- err
	}()
	time.Sleep(50 * time.Millisecond)
	if err := p.Close(); err != nil {
		t.Fatal(err)
	}
	select {
	case err := <-done:
		if !errors.Is(err, os.ErrClosed) {
			t.Fatalf("waiting Read after Close: %v, want os.ErrClosed", err)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("Close did not end the waiting Read")
	}
	q, err := OpenPolled(s.Name(), 115200)
	if err != nil {
		t.Fatalf("reopen after Close: %v", err)
	}
	q.Close()
}
