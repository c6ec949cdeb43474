package hub_test

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/idlewatt/idlewatt/internal/testutil"
	"github.com/idlewatt/idlewatt/meter"
	"github.com/idlewatt/idlewatt/meter/hub"
	"github.com/idlewatt/idlewatt/meter/hub/hubemu"
)

// recSink records what a stream delivers. Safe for the test goroutine to
// read while the driver writes.
type recSink struct {
	mu      sync.Mutex
	samples map[int]uint64 // per channel: samples received
	next    map[int]uint64 // per channel: next expected index
	sumI    map[int]float64
	gaps    []meter.Gap
	marks   []meter.MarkEcho
	events  []meter.Event
	overlap int
}

func newRecSink() *recSink {
	return &recSink{samples: map[int]uint64{}, next: map[int]uint64{}, sumI: map[int]float64{}}
}

func (s *recSink) Samples(b *meter.Block) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if b.Start != s.next[b.Channel] {
		s.overlap++
	}
	s.next[b.Channel] = b.Start + uint64(b.Len())
	s.samples[b.Channel] += uint64(b.Len())
	for _, i := range b.I {
		s.sumI[b.Channel] += float64(i)
	}
	return nil
}

func (s *recSink) Gap(g meter.Gap) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.gaps = append(s.gaps, g)
	for c := range s.next {
		if g.Channel == -1 || g.Channel == c {
			if s.next[c] == g.Start {
				s.next[c] = g.Start + g.Count
			}
		}
	}
	return nil
}

func (s *recSink) Mark(m meter.MarkEcho) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.marks = append(s.marks, m)
	return nil
}

func (s *recSink) Event(e meter.Event) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.events = append(s.events, e)
	return nil
}

func (s *recSink) snapshot() (events []meter.Event, marks []meter.MarkEcho, n uint64) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]meter.Event(nil), s.events...), append([]meter.MarkEcho(nil), s.marks...), s.samples[0]
}

// hangGuard bounds the tests' waits (testutil.WaitFor): a hang guard, not
// a timing check. What they wait for (the first samples, an echo, a second
// of samples) takes well under two seconds on an idle machine; 5 s left
// too little room on a 2-core machine at load 10 and more.
const hangGuard = time.Minute

func TestEndToEndOverPTY(t *testing.T) {
	emu, err := hubemu.New(hubemu.Options{Ports: 2, Seed: 7})
	if err != nil {
		t.Fatal(err)
	}
	defer emu.Close()
	h, err := hub.Open(emu.Path(), hub.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer h.Close()
	info := h.Info()
	if info.Kind != "hub" || info.Ports != 2 || len(info.Channels) != 4 || info.ProtocolVersion != 2 {
		t.Fatalf("info = %+v", info)
	}
	if info.Channels[0].Name() != "p1.5v" || info.Channels[3].Name() != "p2.12v" {
		t.Fatalf("channels = %+v", info.Channels)
	}

	sink := newRecSink()
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- h.Stream(ctx, meter.StreamConfig{Rate: 1000}, sink) }()
	testutil.WaitFor(t, hangGuard, "first samples", func() bool { _, _, n := sink.snapshot(); return n > 100 })

	if err := h.SetDevSlp(ctx, 2, true); err != nil {
		t.Fatal(err)
	}
	if err := h.Mark(ctx, 0xC0FFEE); err != nil {
		t.Fatal(err)
	}
	testutil.WaitFor(t, hangGuard, "devslp event and mark echo", func() bool {
		ev, mk, _ := sink.snapshot()
		return len(ev) > 0 && len(mk) > 0
	})
	testutil.WaitFor(t, hangGuard, "1 s of samples", func() bool { _, _, n := sink.snapshot(); return n >= 1000 })
	cancel()
	if err := <-done; err != nil {
		t.Fatalf("Stream: %v", err)
	}

	ev, mk, _ := sink.snapshot()
	if e := ev[0]; e.Kind != meter.EventDevSlp || e.Port != 2 || e.Value != 1 {
		t.Errorf("event = %+v, want devslp port 2 asserted", e)
	}
	m := mk[0]
	if m.ID != 0xC0FFEE || m.HostSent == 0 || m.HostRecv < m.HostSent || m.MeterIndex == 0 {
		t.Errorf("mark echo = %+v", m)
	}
	sink.mu.Lock()
	defer sink.mu.Unlock()
	if len(sink.gaps) != 0 || sink.overlap != 0 {
		t.Errorf("gaps %v, discontinuities %d on a clean link", sink.gaps, sink.overlap)
	}
	for c := range 4 {
		if sink.samples[c] != sink.samples[0] {
			t.Errorf("channel %d has %d samples, channel 0 %d", c, sink.samples[c], sink.samples[0])
		}
	}
	// 80 mA on 5 V, quantised to a ~50 µA LSB.
	if mean := sink.sumI[0] / float64(sink.samples[0]); mean < 0.0799 || mean > 0.0801 {
		t.Errorf("mean 5 V current = %g A, want 0.080", mean)
	}
	if st := h.Stats(); st.CRCErrors != 0 || st.Frames == 0 {
		t.Errorf("stats = %+v", st)
	}
}

func TestOpenErrors(t *testing.T) {
	_, err := hub.Open("/dev/does-not-exist", hub.Options{})
	if !errors.Is(err, meter.ErrNoDevice) {
		t.Errorf("missing path: %v, want ErrNoDevice", err)
	}
	f := filepath.Join(t.TempDir(), "plain")
	os.WriteFile(f, []byte("hello"), 0o644)
	if _, err := hub.Open(f, hub.Options{Timeout: 100 * time.Millisecond}); !errors.Is(err, meter.ErrNoDevice) {
		t.Errorf("regular file: %v, want ErrNoDevice", err)
	}
}
