package hub_test

import (
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"testing"

	"github.com/idlewatt/idlewatt/internal/conntest"
	"github.com/idlewatt/idlewatt/internal/serialport"
	"github.com/idlewatt/idlewatt/internal/testutil"
	"github.com/idlewatt/idlewatt/meter"
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

// streamSink counts a stream's samples and sums its current per channel,
// noting any gap or block that does not follow the one before; it cancels
// the stream once channel 0 holds n samples.
type streamSink struct {
	n       uint64
	cancel  func()
	count   map[int]uint64
	sumI    map[int]float64
	next    map[int]uint64
	gaps    []meter.Gap
	overlap int
}

func (s *streamSink) Samples(b *meter.Block) error {
	if b.Start != s.next[b.Channel] {
		s.overlap++
	}
	s.next[b.Channel] = b.Start + uint64(b.Len())
	s.count[b.Channel] += uint64(b.Len())
	for _, i := range b.I {
		s.sumI[b.Channel] += float64(i)
	}
	if s.count[0] >= s.n {
		s.cancel()
	}
	return nil
}
func (s *streamSink) Gap(g meter.Gap) error     { s.gaps = append(s.gaps, g); return nil }
func (s *streamSink) Mark(meter.MarkEcho) error { return nil }
func (s *streamSink) Event(e meter.Event) error { return nil }

// streamSession opens a 1-port hub, streams port 1 at 1 kS/s until 200
// samples a channel have arrived, stops and closes.
func streamSession(t *testing.T, rw io.ReadWriter) *streamSink {
	t.Helper()
	h, err := hub.New(rw, hub.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer h.Close()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	s := &streamSink{n: 200, cancel: cancel, count: map[int]uint64{}, sumI: map[int]float64{}, next: map[int]uint64{}}
	if err := h.Stream(ctx, meter.StreamConfig{Rate: 1000}, s); err != nil {
		t.Fatal(err)
	}
	return s
}

// TestPlaybackStream plays a recorded stream (fixtures/conn/hub-stream.txt:
// START with the negotiated packed format, the hub's SAMPLES frames, STOP
// and its ACK) to the driver: it must write the same START and STOP, read
// every frame, and decode samples that follow each other with no gap, at
// the emulated drive's 80 mA on 5 V and 250 mA on 12 V.
func TestPlaybackStream(t *testing.T) {
	path := filepath.Join("..", "..", "fixtures", "conn", "hub-stream.txt")
	if *testutil.Update {
		emu, err := hubemu.New(hubemu.Options{Ports: 1, Seed: 1,
			Drives: []meter.SimDrive{meter.ConstantDrive{V5: 5, I5: 0.080, V12: 12, I12: 0.250}}})
		if err != nil {
			t.Skipf("no pty: %v", err)
		}
		defer emu.Close()
		port, err := serialport.Open(emu.Path(), 921600)
		if err != nil {
			t.Fatal(err)
		}
		rec := conntest.Record(port)
		streamSession(t, rec)
		if err := os.WriteFile(path, rec.Script().Marshal(), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	sc, err := conntest.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (go test -update -run TestPlaybackStream ./meter/hub records it)", err)
	}
	p := conntest.NewPlayback(sc)
	s := streamSession(t, p)
	if len(s.gaps) > 0 || s.overlap > 0 {
		t.Errorf("played stream: gaps %v, %d blocks out of order", s.gaps, s.overlap)
	}
	for ch, want := range []float64{0.080, 0.250} {
		if s.count[ch] < 200 {
			t.Errorf("channel %d: %d samples, want at least 200", ch, s.count[ch])
			continue
		}
		testutil.Near(t, fmt.Sprintf("channel %d mean current (A)", ch), s.sumI[ch]/float64(s.count[ch]), want, 0.01)
	}
	if err := p.Verify(); err != nil {
		t.Error(err)
	}
}
