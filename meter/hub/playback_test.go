package hub_test

import (
	"context"
	"io"
	"os"
	"path/filepath"
	"testing"

	"github.com/idlewatt/idlewatt/internal/conntest"
	"github.com/idlewatt/idlewatt/internal/serialport"
	"github.com/idlewatt/idlewatt/internal/testutil"
	"github.com/idlewatt/idlewatt/meter/hub"
	"github.com/idlewatt/idlewatt/meter/hub/hubemu"
)

// hubSession is one conversation with a 4-port hub: HELLO and the
// protocol negotiation, a PING, DEVSLP asserted and released on port 2,
// port 3's power off and on, and close.
func hubSession(t *testing.T, rw io.ReadWriter) hub.Identity {
	t.Helper()
	h, err := hub.New(rw, hub.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer h.Close()
	ctx := context.Background()
	if err := h.Ping(ctx, []byte("idlewatt")); err != nil {
		t.Fatal(err)
	}
	for _, on := range []bool{true, false} {
		if err := h.SetDevSlp(ctx, 2, on); err != nil {
			t.Fatal(err)
		}
	}
	for _, on := range []bool{false, true} {
		if err := h.SetPortPower(ctx, 3, on); err != nil {
			t.Fatal(err)
		}
	}
	return h.Identity()
}

// TestPlayback plays a recorded conversation with the emulated hub
// (fixtures/conn/hub.txt, written by -update from the emulator over a
// pty) to the driver with no emulator: it must write exactly the frames
// it wrote then (sequence numbers, CRCs and all), read everything it was
// sent, and identify the same hub.
func TestPlayback(t *testing.T) {
	path := filepath.Join("..", "..", "fixtures", "conn", "hub.txt")
	if *testutil.Update {
		emu, err := hubemu.New(hubemu.Options{Ports: 4, Seed: 1})
		if err != nil {
			t.Skipf("no pty: %v", err)
		}
		defer emu.Close()
		port, err := serialport.Open(emu.Path(), 921600)
		if err != nil {
			t.Fatal(err)
		}
		rec := conntest.Record(port)
		hubSession(t, rec)
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, rec.Script().Marshal(), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	s, err := conntest.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (go test -update -run TestPlayback ./meter/hub records it)", err)
	}
	p := conntest.NewPlayback(s)
	id := hubSession(t, p)
	if id.Ports != 4 {
		t.Errorf("identity %+v, want the recorded 4-port hub", id)
	}
	if err := p.Verify(); err != nil {
		t.Error(err)
	}
}
