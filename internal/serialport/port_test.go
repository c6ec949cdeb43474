package serialport

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
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

// TestSecondOpenerRefused: a port idlewatt holds cannot be opened again
// (root included, which TIOCEXCL alone would let through), the error names
// the holder's PID, the first opener keeps working, and closing it frees
// the port. A symlink to the port is the same port.
func TestSecondOpenerRefused(t *testing.T) {
	m, s, err := pty.Open()
	if err != nil {
		t.Skipf("no pty: %v", err)
	}
	defer m.Close()
	defer s.Close()
	first, err := Open(s.Name(), 115200)
	if err != nil {
		t.Fatal(err)
	}
	link := filepath.Join(t.TempDir(), "tty")
	if err := os.Symlink(s.Name(), link); err != nil {
		t.Fatal(err)
	}
	for _, path := range []string{s.Name(), link} {
		second, err := Open(path, 115200)
		if err == nil {
			second.Close()
			t.Fatalf("second open of %s succeeded", path)
		}
		want := fmt.Sprintf("port %s in use by PID %d", path, os.Getpid())
		if !errors.Is(err, ErrInUse) || !strings.HasPrefix(err.Error(), want) {
			t.Fatalf("second open of %s: %v; want %q…, matching ErrInUse", path, err, want)
		}
	}
	// The refused opener must not have disturbed the first one.
	if _, err := m.Write([]byte("ok")); err != nil {
		t.Fatal(err)
	}
	_ = first.SetReadDeadline(time.Now().Add(2 * time.Second))
	got := make([]byte, 2)
	if _, err := io.ReadFull(first, got); err != nil || string(got) != "ok" {
		t.Fatalf("first opener read %q, %v after a refused second open", got, err)
	}
	if err := first.Close(); err != nil {
		t.Fatal(err)
	}
	again, err := Open(link, 115200)
	if err != nil {
		t.Fatalf("open after the holder closed: %v", err)
	}
	again.Close()
}

// TestInUseErrorWithoutHolder: with no holder found the message still says
// what happened.
func TestInUseErrorWithoutHolder(t *testing.T) {
	e := &InUseError{Path: "/dev/ttyX"}
	if !errors.Is(e, ErrInUse) || !strings.Contains(e.Error(), "/dev/ttyX in use by another process") {
		t.Fatalf("%v", e)
	}
	if lockHolder(filepath.Join(t.TempDir(), "none")) != 0 {
		t.Fatal("holder of a missing path")
	}
}

// TestHeldByAnotherProcess: the test binary re-run as a helper holds the
// port; this process is refused with the helper's PID and command name,
// and gets the port once the helper has exited (its lock dies with it).
func TestHeldByAnotherProcess(t *testing.T) {
	if path := os.Getenv("SERIALPORT_TEST_HOLD"); path != "" {
		p, err := Open(path, 115200)
		if err != nil {
			fmt.Println("error:", err)
			os.Exit(1)
		}
		fmt.Println("held")
		io.Copy(io.Discard, os.Stdin) //nolint:errcheck // hold until the parent closes stdin
		p.Close()
		os.Exit(0)
	}
	m, s, err := pty.Open()
	if err != nil {
		t.Skipf("no pty: %v", err)
	}
	defer m.Close()
	defer s.Close()
	cmd := exec.Command(os.Args[0], "-test.run", "^TestHeldByAnotherProcess$")
	cmd.Env = append(os.Environ(), "SERIALPORT_TEST_HOLD="+s.Name())
	stdin, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer stdin.Close()
	defer cmd.Process.Kill() //nolint:errcheck // already gone when the test passes
	line, err := bufio.NewReader(stdout).ReadString('\n')
	if err != nil || line != "held\n" {
		t.Fatalf("helper: %q, %v", line, err)
	}
	_, err = Open(s.Name(), 115200)
	var iu *InUseError
	if !errors.As(err, &iu) || iu.PID != cmd.Process.Pid || iu.Comm == "" {
		t.Fatalf("open while the helper (PID %d) holds %s: %v", cmd.Process.Pid, s.Name(), err)
	}
	if want := fmt.Sprintf("in use by PID %d", cmd.Process.Pid); !strings.Contains(err.Error(), want) {
		t.Fatalf("%v; want %q", err, want)
	}
	// kill -9: the kernel drops the flock with the process.
	if err := cmd.Process.Kill(); err != nil {
		t.Fatal(err)
	}
	cmd.Wait() //nolint:errcheck // killed
	p, err := Open(s.Name(), 115200)
	if err != nil {
		t.Fatalf("open after the holder was killed: %v", err)
	}
	p.Close()
}
