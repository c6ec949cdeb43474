package ppk2_test

import (
	"context"
	"math"
	"testing"
	"time"

	"github.com/idlewatt/idlewatt/meter"
	"github.com/idlewatt/idlewatt/meter/ppk2"
	"github.com/idlewatt/idlewatt/meter/ppk2/ppk2emu"
)

type sink struct {
	n      int
	sum    float64
	v      float64
	next   uint64
	broken string
	gaps   []meter.Gap
	marks  int
	events []meter.Event
}

func (s *sink) Samples(b *meter.Block) error {
	if b.Start != s.next && s.broken == "" {
		s.broken = "samples do not follow"
	}
	s.next = b.Start + uint64(b.Len())
	for k := range b.I {
		s.sum += float64(b.I[k])
		s.v = float64(b.V[k])
	}
	s.n += b.Len()
	return nil
}
func (s *sink) Gap(g meter.Gap) error {
	s.next = g.Start + g.Count
	s.gaps = append(s.gaps, g)
	return nil
}
func (s *sink) Mark(meter.MarkEcho) error { s.marks++; return nil }
func (s *sink) Event(e meter.Event) error { s.events = append(s.events, e); return nil }

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
	st := emu.State()
	for wait := time.Now().Add(5 * time.Second); !st.DUTOn && time.Now().Before(wait); st = emu.State() {
		time.Sleep(5 * time.Millisecond)
	}
	if st.Mode != 2 || st.VDD != 3300 || !st.DUTOn {
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
	deadline := time.Now().Add(20 * time.Second)
	for p.Stats().Frames < 40_000 && time.Now().Before(deadline) {
		time.Sleep(20 * time.Millisecond)
	}
	if err := p.SetPortPower(ctx, 1, false); err != nil {
		t.Fatal(err)
	}
	time.Sleep(50 * time.Millisecond)
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
	for _, e := range s.events {
		power = power || (e.Kind == meter.EventPortPower && e.Value == 0)
		logic = logic || (e.Kind == meter.EventLogic && e.Value == 0x80)
	}
	if !power || !logic {
		t.Fatalf("events %+v", s.events)
	}
	for wait := time.Now().Add(5 * time.Second); emu.State().DUTOn && time.Now().Before(wait); {
		time.Sleep(5 * time.Millisecond)
	}
	if emu.State().DUTOn {
		t.Fatal("DUT still on after SetPortPower(false)")
	}
	// The mean is dominated by the powered samples: 12.5 mA within
	// quantisation, except for the tail after power-off (0 A).
	mean := s.sum / float64(s.n)
	if math.Abs(mean-0.0125) > 0.0125*0.2 {
		t.Fatalf("mean %v A, want about 12.5 mA", mean)
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
