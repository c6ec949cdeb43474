package ppk2_test

import (
	"context"
	"math"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/idlewatt/idlewatt/meter"
	"github.com/idlewatt/idlewatt/meter/ppk2"
	"github.com/idlewatt/idlewatt/meter/ppk2/ppk2emu"
)

// offAmps: a sample below it was taken with the DUT off (0 A through the
// converter's quantisation; the DUT draws 12.5 mA).
const offAmps = 1e-4

type sink struct {
	mu     sync.Mutex
	n      int
	i      map[uint64]float64 // current by output index
	v      float64
	next   uint64
	broken string
	gaps   []meter.Gap
	marks  int
	events []meter.Event
	zeros  atomic.Int64 // samples below offAmps (DUT off)
}

func (s *sink) Samples(b *meter.Block) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.i == nil {
		s.i = map[uint64]float64{}
	}
	if b.Start != s.next && s.broken == "" {
		s.broken = "samples do not follow"
	}
	s.next = b.Start + uint64(b.Len())
	for k := range b.I {
		s.i[b.Start+uint64(k)] = float64(b.I[k])
		if math.Abs(float64(b.I[k])) < offAmps {
			s.zeros.Add(1)
		}
		s.v = float64(b.V[k])
	}
	s.n += b.Len()
	return nil
}
func (s *sink) Gap(g meter.Gap) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.next = g.Start + g.Count
	s.gaps = append(s.gaps, g)
	return nil
}
func (s *sink) Mark(meter.MarkEcho) error { s.mu.Lock(); s.marks++; s.mu.Unlock(); return nil }
func (s *sink) Event(e meter.Event) error {
	s.mu.Lock()
	s.events = append(s.events, e)
	s.mu.Unlock()
	return nil
}

// hangGuard bounds a wait for something the emulator does in real time. It
// is a guard against a hang, not a timing check: the bound is a minute where
// an idle machine takes well under a second, so only a test that would
// never finish fails on it.
const hangGuard = time.Minute

// waitUntil polls cond until it holds, failing the test after hangGuard.
func waitUntil(t *testing.T, what string, cond func() bool) {
	t.Helper()
	for deadline := time.Now().Add(hangGuard); !cond(); time.Sleep(5 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("still waiting for %s after %v", what, hangGuard)
		}
	}
}

// TestDriverAgainstEmulator streams the emulated PPK2 past an injected drop
// of 17 raw samples, switches the DUT off, and streams on until the 0 A
// samples arrive. Every wait is for an event (a frame count, the samples of
// the power-off), never for a time, so a loaded machine only makes it
// slower: the mean is taken over the samples before the power-off event's
// index, which the driver stamps before the command leaves.
func TestDriverAgainstEmulator(t *testing.T) {
	emu, err := ppk2emu.New(ppk2emu.Options{
		Drive: meter.ConstantDrive{V5: 3.3, I5: 0.0125},
		Drops: []ppk2emu.Drop{{At: 20_000, Count: 17}},
		Logic: func(t time.Duration) uint8 {
			if t > 0 {
				return 0x80
			}
			return 0
		},
	})
	if err != nil {
		t.Skipf("no pty: %v", err)
	}
	defer emu.Close()
	p, err := ppk2.Open(emu.Path(), ppk2.Options{Supply: 3.3})
	if err != nil {
		t.Fatal(err)
	}
	defer p.Close()
	// The emulator handles commands asynchronously: wait for the last one.
	waitUntil(t, "the emulator to switch the DUT on", func() bool { return emu.State().DUTOn })
	if st := emu.State(); st.Mode != 2 || st.VDD != 3300 || !st.DUTOn {
		t.Fatalf("emulator state after open: %+v", st)
	}
	if p.Metadata().GS[0] != 1 || p.Info().Channels[0].Rail != meter.Rail3V3 {
		t.Fatalf("metadata GS0 %v, info %+v", p.Metadata().GS[0], p.Info())
	}
	// Stream until the drop has been passed and some more.
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	s := &sink{}
	done := make(chan error, 1)
	go func() { done <- p.Stream(ctx, meter.StreamConfig{Rate: 10_000}, s) }()
	waitUntil(t, "40 000 raw samples", func() bool { return p.Stats().Frames >= 40_000 })
	if s.zeros.Load() != 0 {
		t.Fatalf("%d samples read 0 A with the DUT on", s.zeros.Load())
	}
	if err := p.SetPortPower(ctx, 1, false); err != nil {
		t.Fatal(err)
	}
	waitUntil(t, "the samples of the DUT switched off", func() bool { return s.zeros.Load() >= 10 })
	cancel()
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	if s.broken != "" {
		t.Fatal(s.broken)
	}
	// Raw samples 20000–20016 are missing: output windows 2000 and 2001.
	if len(s.gaps) != 1 || s.gaps[0].Start != 2000 || s.gaps[0].Count != 2 {
		t.Fatalf("gaps %+v, want windows 2000–2001", s.gaps)
	}
	if s.n < 3000 || s.v != 3.3 {
		t.Fatalf("%d samples, V %v", s.n, s.v)
	}
	var power, logic bool
	var off uint64
	for _, e := range s.events {
		if e.Kind == meter.EventPortPower && e.Value == 0 {
			power, off = true, e.Index
		}
		logic = logic || (e.Kind == meter.EventLogic && e.Value == 0x80)
	}
	if !power || !logic {
		t.Fatalf("events %+v", s.events)
	}
	if emu.State().DUTOn {
		t.Fatal("DUT still on after SetPortPower(false)")
	}
	// Every sample before the power-off event was taken with the DUT on:
	// 12.5 mA within the converter's quantisation; those after it read 0 A
	// once the emulator has switched (the samples already in flight were
	// taken on).
	var sum float64
	var on, zerosBefore int
	for idx, i := range s.i {
		if idx < off {
			sum += i
			on++
			if math.Abs(i) < offAmps {
				zerosBefore++
			}
		}
	}
	if on < 3000 || zerosBefore != 0 {
		t.Fatalf("%d samples before the power-off at index %d, %d of them 0 A", on, off, zerosBefore)
	}
	mean := sum / float64(on)
	t.Logf("mean %.6f mA over the %d samples before the power-off at index %d; %d samples after", 1e3*mean, on, off, s.n-on)
	if math.Abs(mean-0.0125) > 0.0125*0.01 {
		t.Fatalf("mean %v A with the DUT on, want 12.5 mA ± 1 %%", mean)
	}
}

func TestNoEndFromDevice(t *testing.T) {
	emu, err := ppk2emu.New(ppk2emu.Options{Metadata: "R0: 1000\nVDD: 3000\n"})
	if err != nil {
		t.Skipf("no pty: %v", err)
	}
	defer emu.Close()
	_, err = ppk2.Open(emu.Path(), ppk2.Options{Timeout: 300 * time.Millisecond})
	if err == nil {
		t.Fatal("metadata without END accepted")
	}
	t.Log(err)
}
