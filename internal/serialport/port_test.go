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

// getMetadata is the PPK2's GetMetadata command byte: any byte must pass
// host→device unchanged.
const getMetadata = 0x19

// TestOnPTY opens a pty slave through go.bug.st/serial, as the drivers do
// for the emulators, and checks both directions and the deadline adapter: a
// timed-out read is os.ErrDeadlineExceeded, never (0, nil).
func TestOnPTY(t *testing.T) {
	m, s, err := pty.Open()
	if err != nil {
		t.Skipf("no pty: %v", err)
	}
	defer m.Close()
	defer s.Close()
	p, err := Open(s.Name(), 115200)
	if err != nil {
		t.Fatalf("serial open of %s: %v", s.Name(), err)
	}
	// Raw mode: every byte value must pass unchanged, \r and \n included.
	want := []byte{0x00, 0x0d, 0x0a, 0x03, 0x7f, 0xff, 0x11, 0x13}
	if _, err := m.Write(want); err != nil {
		t.Fatal(err)
	}
	_ = p.SetReadDeadline(time.Now().Add(2 * time.Second))
	got := make([]byte, len(want))
	if _, err := io.ReadFull(p, got); err != nil || !bytes.Equal(got, want) {
		t.Fatalf("read %x (%v), want %x", got, err, want)
	}
	if _, err := p.Write([]byte{getMetadata}); err != nil {
		t.Fatal(err)
	}
	b := make([]byte, 1)
	if _, err := io.ReadFull(m, b); err != nil || b[0] != getMetadata {
		t.Fatalf("master read %x (%v)", b, err)
	}
	_ = p.SetReadDeadline(time.Now().Add(120 * time.Millisecond))
	if n, err := p.Read(got); n != 0 || !errors.Is(err, os.ErrDeadlineExceeded) {
		t.Fatalf("read past the deadline: %d, %v", n, err)
	}
	// A deadline set from another goroutine ends a read that had none.
	_ = p.SetReadDeadline(time.Time{})
	go func() {
		time.Sleep(30 * time.Millisecond)
		_ = p.SetReadDeadline(time.Now())
	}()
	if _, err := p.Read(got); !errors.Is(err, os.ErrDeadlineExceeded) {
		t.Fatalf("read after a concurrent deadline: %v", err)
	}
	if err := p.Close(); err != nil {
		t.Fatal(err)
	}
	if _, err := p.Read(got); err == nil {
		t.Fatal("read after Close succeeded")
	}
}
