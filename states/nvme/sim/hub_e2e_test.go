package sim_test

import (
	"context"
	"math"
	"sync"
	"testing"
	"time"

	"github.com/idlewatt/idlewatt/meter"
	"github.com/idlewatt/idlewatt/meter/hub"
	"github.com/idlewatt/idlewatt/meter/hub/hubemu"
	"github.com/idlewatt/idlewatt/states/nvme/sim"
	"github.com/idlewatt/idlewatt/units"
)

// powerSink keeps each channel's V·I per sample index.
type powerSink struct {
	mu sync.Mutex
	w  map[int]map[uint64]float64
	n  map[int]int
}

func (s *powerSink) Samples(b *meter.Block) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	for k := range b.I {
		s.w[b.Channel][b.Start+uint64(k)] = float64(b.V[k]) * float64(b.I[k])
	}
	s.n[b.Channel] += b.Len()
	return nil
}
func (s *powerSink) Gap(meter.Gap) error       { return nil }
func (s *powerSink) Mark(meter.MarkEcho) error { return nil }
func (s *powerSink) Event(meter.Event) error   { return nil }
func (s *powerSink) count(c int) int           { s.mu.Lock(); defer s.mu.Unlock(); return s.n[c] }
func (s *powerSink) at(c int, i uint64) (float64, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	w, ok := s.w[c][i]
	return w, ok
}

// TestSATAAndNVMeBehindTheHub: a SATA drive (a constant 5 V load) on port
// 1 and the simulated 980 PRO on an M.2 interposer on port 2, behind an
// emulated protocol-3 hub with a 3.3 V rail, read by the hub driver over a
// pty. Port 2's 3.3 V power must be the model's (PS0 idle, then PS4 after
// the APST timer) within the 20-bit LSB and the sensor noise; its 5 V and
// 12 V nothing; port 1's 3.3 V nothing.
func TestSATAAndNVMeBehindTheHub(t *testing.T) {
	p, _ := sim.ProfileByName("980pro-1tb")
	nv := sim.NewHubDrive(p, 100000, 20e-6, 1)
	emu, err := hubemu.New(hubemu.Options{Ports: 2, Seed: 3, Rail3V3: true,
		Drives: []meter.SimDrive{meter.ConstantDrive{V5: 5, I5: 0.08, V12: 12}, nv}})
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
	var names []string
	for _, c := range info.Channels {
		names = append(names, c.Name())
	}
	if info.ProtocolVersion != 3 || len(info.Channels) != 6 || names[2] != "p1.3v3" || names[5] != "p2.3v3" {
		t.Fatalf("protocol v%d, channels %v", info.ProtocolVersion, names)
	}
	sink := &powerSink{w: map[int]map[uint64]float64{}, n: map[int]int{}}
	for c := range 6 {
		sink.w[c] = map[uint64]float64{}
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	const rate = 10000
	go func() { done <- h.Stream(ctx, meter.StreamConfig{Rate: rate}, sink) }()
	// A hang guard, not a timing check: 400 ms of samples are waited for.
	deadline := time.Now().Add(time.Minute)
	for sink.count(5) < 4000 && time.Now().Before(deadline) { // 400 ms
		time.Sleep(10 * time.Millisecond)
	}
	cancel()
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	if sink.count(5) < 4000 {
		t.Fatalf("%d samples of p2.3v3", sink.count(5))
	}
	// The drive has been idle since the emulator started (its t = 0,
	// before START), so 300–400 ms into the stream it is long in PS4.
	mean := func(c int, from, to uint64) (float64, int) {
		var s float64
		n := 0
		for i := from; i < to; i++ {
			if w, ok := sink.at(c, i); ok {
				s += w
				n++
			}
		}
		return s / float64(n), n
	}
	d := nv.Drive()
	last, n := mean(5, 3000, 4000)
	if n < 900 || math.Abs(last-float64(d.Power(time.Hour))) > 0.5e-3 {
		t.Errorf("p2.3v3 over 300–400 ms: %.3f mW (%d samples), model PS4 %.3f mW", last*1e3, n, float64(d.Power(time.Hour))*1e3)
	}
	for _, c := range []struct {
		ch   int
		want units.Watts
	}{{0, 0.4}, {1, 0}, {2, 0}, {3, 0}, {4, 0}} {
		if w, _ := mean(c.ch, 0, 4000); math.Abs(w-float64(c.want)) > 1e-3 {
			t.Errorf("%s: %.4f W, want %.4f W", names[c.ch], w, float64(c.want))
		}
	}
}
