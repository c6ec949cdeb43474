package scpi_test

import (
	"context"
	"errors"
	"math"
	"strings"
	"testing"
	"time"

	"github.com/idlewatt/idlewatt/meter"
	"github.com/idlewatt/idlewatt/meter/scpi"
	"github.com/idlewatt/idlewatt/meter/scpi/scpiemu"
	"github.com/idlewatt/idlewatt/units"
)

// arrays records an array-mode stream: each fetch's samples, the gaps
// between them, and every value.
type arrays struct {
	t       testing.TB
	next    uint64
	blocks  []meter.Block // Start and length only
	fetch   []meter.Gap
	other   []meter.Gap
	marks   []meter.MarkEcho
	sum     float64
	n       int
	vs      map[units.Volts]bool
	float32 bool // every value is a float32
}

func (s *arrays) at(start, n uint64) {
	if start != s.next {
		s.t.Errorf("index %d follows %d: samples and gaps must tile", start, s.next)
	}
	s.next = start + n
}
func (s *arrays) Samples(b *meter.Block) error {
	s.at(b.Start, uint64(b.Len()))
	s.blocks = append(s.blocks, meter.Block{Start: b.Start, I: make([]units.Amps, b.Len())})
	for k, x := range b.I {
		s.sum += float64(x)
		s.n++
		s.vs[b.V[k]] = true
		if float64(float32(x)) != float64(x) {
			s.float32 = false
		}
	}
	return nil
}
func (s *arrays) Gap(g meter.Gap) error {
	s.at(g.Start, g.Count)
	if g.Reason == "fetch" {
		s.fetch = append(s.fetch, g)
	} else {
		s.other = append(s.other, g)
	}
	return nil
}
func (s *arrays) Mark(m meter.MarkEcho) error { s.marks = append(s.marks, m); return nil }
func (*arrays) Event(meter.Event) error       { return nil }

// streamArrays streams an array-mode instrument until n arrays arrived,
// and returns what arrived and the time Stream ran (for upper bounds and
// the log: a loaded machine makes it longer, never shorter).
func streamArrays(t *testing.T, emu *scpiemu.Emulator, opts scpi.Options, n int) (*arrays, *scpi.Instrument, time.Duration) {
	t.Helper()
	opts.Array = true
	in, err := scpi.Open(emu.Path(), opts)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { in.Close() })
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	s := &countSink{arrays: arrays{t: t, vs: map[units.Volts]bool{}, float32: true}, want: n, cancel: cancel}
	ran := streamGuarded(t, ctx, func(ctx context.Context) error { return in.Stream(ctx, meter.StreamConfig{}, s) })
	return &s.arrays, in, ran
}

// checkArrays: every fetch is one block of exactly points consecutive
// indices, the arrays are apart by "fetch" gaps of at least the
// emulator's fetch delay (the host cannot start the next array sooner),
// nothing else is lost, and the values are the emulated current.
func checkArrays(t *testing.T, s *arrays, points int, tint float64, fetchDelay time.Duration, current float64, ran time.Duration) {
	t.Helper()
	if len(s.blocks) < 8 || len(s.other) != 0 {
		t.Fatalf("%d arrays, other gaps %+v", len(s.blocks), s.other)
	}
	for k, b := range s.blocks {
		if b.Len() != points {
			t.Errorf("array %d: %d samples, want %d", k, b.Len(), points)
		}
	}
	if len(s.fetch) != len(s.blocks)-1 {
		t.Errorf("%d fetch gaps between %d arrays", len(s.fetch), len(s.blocks))
	}
	least := uint64(fetchDelay.Seconds()/tint) - 1
	var dead uint64
	for k, g := range s.fetch {
		dead += g.Count
		if g.Count < least || g.Start != s.blocks[k].Start+uint64(points) {
			t.Errorf("gap %d: %+v after array at %d; want at least %d samples right after it", k, g, s.blocks[k].Start, least)
		}
	}
	if mean := s.sum / float64(s.n); math.Abs(mean-current) > 2e-5 {
		t.Errorf("mean %v A over %d samples, want %v A", mean, s.n, current)
	}
	if len(s.vs) != 1 || !s.vs[5] {
		t.Errorf("voltages %v, want the one reading taken at open (5 V)", s.vs)
	}
	if len(s.marks) < 1 || len(s.marks) > int(ran.Seconds())+2 {
		t.Errorf("%d marks in %v", len(s.marks), ran)
	}
	for _, m := range s.marks {
		if !m.Synthetic || m.HostRecv < m.HostSent || !slicesHasStart(s.blocks, m.MeterIndex) {
			t.Errorf("mark %+v is not at an array's first sample", m)
		}
	}
	// The figures docs/meters.md quotes.
	got := float64(s.n)
	t.Logf("%d arrays of %d at %.4g µs in %.2f s: %.0f S/s effective of %.0f S/s, duty cycle %.1f %% (dead %d samples)",
		len(s.blocks), points, tint*1e6, ran.Seconds(), got/ran.Seconds(), 1/tint, 100*got/(got+float64(dead)), dead)
}

func slicesHasStart(bs []meter.Block, i uint64) bool {
	for _, b := range bs {
		if b.Start == i {
			return true
		}
	}
	return false
}

// TestArrayN6705: MEAS:ARR:CURR? in ASCII and as FORM REAL blocks. The
// emulator rounds 100 µs to its 5.12 µs timebase (102.4 µs): the stream's
// rate is the interval read back.
func TestArrayN6705(t *testing.T) {
	if testing.Short() {
		t.Skip("live pty test")
	}
	for _, binary := range []bool{false, true} {
		name := map[bool]string{false: "ascii", true: "real"}[binary]
		t.Run(name, func(t *testing.T) {
			const delay = 20 * time.Millisecond
			emu := startEmu(t, scpiemu.Options{Noise: 1e-4, FetchDelay: delay, Seed: 1})
			s, in, ran := streamArrays(t, emu, scpi.Options{ArrayPoints: 256, ArrayInterval: 100 * time.Microsecond, ArrayBinary: binary}, 8)
			info := in.Info()
			if tint := 1 / float64(info.Rates[0]); math.Abs(tint-102.4e-6) > 1e-12 || info.Capabilities[0] != scpi.CapArray {
				t.Fatalf("info %+v: interval %v s, want 102.4 µs read back", info, tint)
			}
			checkArrays(t, s, 256, 102.4e-6, delay, 0.0125, ran)
			if binary && !s.float32 {
				t.Error("FORM REAL readings are not float32 values")
			}
			if st := in.Stats(); st.Frames != uint64(s.n) {
				t.Errorf("stats %+v for %d samples", st, s.n)
			}
		})
	}
}

// TestArrayK2280S: the trace buffer, armed by :TRAC:CLE, :INIT, *WAI before
// each :TRAC:DATA? "READ".
func TestArrayK2280S(t *testing.T) {
	if testing.Short() {
		t.Skip("live pty test")
	}
	const delay = 10 * time.Millisecond
	emu := startEmu(t, scpiemu.Options{Family: "k2280s", Current: 0.002, Voltage: 5, Noise: 1e-5, FetchDelay: delay})
	s, in, ran := streamArrays(t, emu, scpi.Options{ArrayPoints: 200, ArrayInterval: 100 * time.Microsecond}, 8)
	if in.Family().Name != "k2280s" {
		t.Fatalf("family %s", in.Family().Name)
	}
	checkArrays(t, s, 200, 100e-6, delay, 0.002, ran)
}

// TestArrayRefused: array options a family cannot do are refused at open.
func TestArrayRefused(t *testing.T) {
	if testing.Short() {
		t.Skip("live pty test")
	}
	for _, c := range []struct {
		family string
		opts   scpi.Options
		want   string
	}{
		{"dp800", scpi.Options{}, "no buffered acquisition"},
		{"k2280s", scpi.Options{ArrayBinary: true}, "ASCII only"},
		{"n6705", scpi.Options{ArrayPoints: 5000}, "5000 array points"},
		{"n6705", scpi.Options{ArrayInterval: time.Microsecond}, "array interval"},
	} {
		emu, err := scpiemu.New(scpiemu.Options{Family: c.family})
		if err != nil {
			t.Skipf("no pty: %v", err)
		}
		c.opts.Array, c.opts.Timeout = true, replyTimeout
		in, err := scpi.Open(emu.Path(), c.opts)
		if err == nil {
			in.Close()
		}
		if !errors.Is(err, meter.ErrUnsupported) || !strings.Contains(fmt0(err), c.want) {
			t.Errorf("%s %+v: %v, want ErrUnsupported saying %q", c.family, c.opts, err, c.want)
		}
		emu.Close()
	}
}

func fmt0(err error) string {
	if err == nil {
		return ""
	}
	return err.Error()
}

// TestArrayRejectedSetup: a set-up command the instrument does not know
// fails the open with the instrument's error, naming the command.
func TestArrayRejectedSetup(t *testing.T) {
	if testing.Short() {
		t.Skip("live pty test")
	}
	emu := startEmu(t, scpiemu.Options{})
	_, err := scpi.Open(emu.Path(), scpi.Options{Array: true, Timeout: replyTimeout,
		Override: &scpi.Family{Array: scpi.ArrayMode{Setup: []string{"SENS:SWE:BOGUS {points}"}}}})
	if !errors.Is(err, scpi.ErrInstrument) || !strings.Contains(fmt0(err), "SENS:SWE:BOGUS 4096") || !strings.Contains(fmt0(err), "-113") {
		t.Errorf("bogus set-up: %v", err)
	}
}

func TestResolveConfigArray(t *testing.T) {
	info := meter.Info{Rates: []units.Hertz{48828.125, 195312.5}, Capabilities: []string{scpi.CapArray}}
	for _, c := range []struct {
		rate units.Hertz
		ok   bool
	}{{0, true}, {50000, true}, {48828.125, true}, {200000, false}, {-1, false}, {units.Hertz(math.NaN()), false}} {
		got, err := scpi.ResolveConfig(info, meter.StreamConfig{Rate: c.rate})
		if (err == nil) != c.ok || (c.ok && got.Rate != 48828.125) {
			t.Errorf("rate %v → %v, %v", c.rate, got.Rate, err)
		}
	}
}

// countSink cancels the stream after n arrays.
type countSink struct {
	arrays
	want   int
	cancel func()
}

func (s *countSink) Samples(b *meter.Block) error {
	s.arrays.Samples(b)
	if len(s.blocks) >= s.want {
		s.cancel()
	}
	return nil
}

// BenchmarkArrayStream: the N6705's default array (4096 × 20.48 µs, 84 ms)
// from the emulator with no fetch delay, so the dead time is the host's:
// the reply's transfer over the pty, its parsing, the next command.
// Reports the effective sample rate and the duty cycle (samples over
// samples plus fetch gaps). docs/meters.md quotes the figures.
func BenchmarkArrayStream(b *testing.B) {
	for _, binary := range []bool{false, true} {
		b.Run(map[bool]string{false: "ascii", true: "real"}[binary], func(b *testing.B) {
			emu := startEmu(b, scpiemu.Options{Noise: 1e-4})
			in, err := scpi.Open(emu.Path(), scpi.Options{Array: true, ArrayBinary: binary})
			if err != nil {
				b.Fatal(err)
			}
			defer in.Close()
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			s := &countSink{arrays: arrays{t: b, vs: map[units.Volts]bool{}}, want: b.N + 1, cancel: cancel}
			b.ResetTimer()
			start := time.Now()
			if err := in.Stream(ctx, meter.StreamConfig{}, s); err != nil {
				b.Fatal(err)
			}
			ran := time.Since(start)
			var dead uint64
			for _, g := range s.fetch {
				dead += g.Count
			}
			b.ReportMetric(float64(s.n)/ran.Seconds(), "S/s")
			b.ReportMetric(100*float64(s.n)/(float64(s.n)+float64(dead)), "duty_%")
		})
	}
}
