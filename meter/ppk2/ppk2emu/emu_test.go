package ppk2emu

import (
	"os"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"github.com/idlewatt/idlewatt/meter/ppk2"
)

// TestCloseWithStalledHost: a host that starts the stream and never reads
// fills the pty; Close must still return (the master is in Go's poller, so
// Close interrupts the blocked Write).
func TestCloseWithStalledHost(t *testing.T) {
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
	if _, err := host.Write([]byte{ppk2.CmdAverageStart}); err != nil {
		t.Fatal(err)
	}
	// Wait until the emulator is stuck writing to the full pty: Sent stops
	// moving.
	last := uint64(0)
	for wait := time.Now().Add(10 * time.Second); time.Now().Before(wait); {
		time.Sleep(200 * time.Millisecond)
		sent := e.State().Sent
		if sent > 0 && sent == last {
			break
		}
		last = sent
	}
	if last == 0 {
		t.Fatal("emulator never streamed")
	}
	t.Logf("stalled after %d samples", last)
	done := make(chan struct{})
	go func() { e.Close(); close(done) }()
	select {
	case <-done:
	case <-time.After(20 * time.Second):
		t.Fatal("Close hung with a stalled host")
	}
}

func TestWithVDD(t *testing.T) {
	meta, err := WithVDD(DefaultMetadata, 3300)
	if err != nil {
		t.Fatal(err)
	}
	m, err := ppk2.ParseMetadata([]byte(meta), ppk2.NordicApp)
	if err != nil || m.VDD != 3300 || m.HW != 9173 {
		t.Fatalf("VDD %d HW %d (%v)", m.VDD, m.HW, err)
	}
	if _, err := WithVDD("HW: 1\nEND\n", 3300); err == nil {
		t.Fatal("metadata without VDD accepted")
	}
}
