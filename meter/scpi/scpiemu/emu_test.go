package scpiemu

import (
	"bufio"
	"os"
	"testing"
	"time"

	"golang.org/x/sys/unix"
)

// TestCloseWithHostAttached: Close returns while a host still holds the
// slave open (the master is in Go's poller, so Close interrupts the serving
// goroutine's Read), and the host then sees the line drop.
func TestCloseWithHostAttached(t *testing.T) {
	e, err := New(Options{})
	if err != nil {
		t.Skipf("no pty: %v", err)
	}
	host, err := os.OpenFile(e.Path(), os.O_RDWR|unix.O_NOCTTY, 0)
	if err != nil {
		e.Close()
		t.Fatal(err)
	}
	defer host.Close()
	if _, err := host.Write([]byte("*IDN?\n")); err != nil {
		t.Fatal(err)
	}
	if line, err := bufio.NewReader(host).ReadString('\n'); err != nil || line != "Keysight Technologies,N6705C,MY00000001,D.01.09\n" {
		t.Fatalf("*IDN? → %q, %v", line, err)
	}
	done := make(chan struct{})
	go func() { e.Close(); close(done) }()
	select {
	case <-done:
	case <-time.After(20 * time.Second):
		t.Fatal("Close hung with a host attached")
	}
}
