package scpi_test

import (
	"context"
	"errors"
	"math"
	"testing"
	"time"

	"github.com/idlewatt/idlewatt/hostclock"
	"github.com/idlewatt/idlewatt/meter"
	"github.com/idlewatt/idlewatt/meter/scpi"
	"github.com/idlewatt/idlewatt/meter/scpi/scpiemu"
	"github.com/idlewatt/idlewatt/units"
)

// tally records a stream: samples and gaps must tile the indices from 0.
type tally struct {
	t       *testing.T
	want    int    // cancel once this many samples arrived
	cancel  func() // (nil: never)
	next    uint64
	samples int
	late    uint64 // samples in "late" gaps
	lateN   int    // "late" gaps
	other   int    // other gaps
	marks   []meter.MarkEcho
	i, v    float64
}

func (s *tally) at(start, n uint64) {
	if start != s.next {
		s.t.Errorf("index %d follows %d: samples and gaps must tile", start, s.next)
	}
	s.next = start + n
}
func (s *tally) Samples(b *meter.Block) error {
	s.at(b.Start, uint64(b.Len()))
	s.samples += b.Len()
	s.i, s.v = float64(b.I[0]), float64(b.V[0])
	if s.cancel != nil && s.samples >= s.want {
		s.cancel()
	}
	return nil
}
func (s *tally) Gap(g meter.Gap) error {
	s.at(g.Start, g.Count)
	if g.Reason == "late" {
		s.late += g.Count
		s.lateN++
	} else {
		s.other++
	}
	return nil
}
func (s *tally) Mark(m meter.MarkEcho) error { s.marks = append(s.marks, m); return nil }
func (*tally) Event(meter.Event) error       { return nil }

// hangGuard bounds a stream that waits for a number of samples: a guard
// against a hang, not a timing check (the streams take a few seconds).
const hangGuard = 2 * time.Minute

// streamGuarded runs stream until it returns (its sink cancels ctx once it
// has what it wants), failing the test if hangGuard passes first. It
// returns how long stream ran.
func streamGuarded(t *testing.T, ctx context.Context, stream func(context.Context) error) time.Duration {
	t.Helper()
	ctx, cancel := context.WithTimeout(ctx, hangGuard)
	defer cancel()
	start := time.Now()
	if err := stream(ctx); err != nil {
		t.Fatal(err)
	}
	if errors.Is(ctx.Err(), context.DeadlineExceeded) {
		t.Fatalf("the stream still lacked what the test waits for after %v", hangGuard)
	}
	return time.Since(start)
}

// stream polls emu at rate until n samples arrived (one more may follow:
// a tick and the cancel can be ready at once), and returns what
// arrived, the instrument and the time Stream ran (for upper bounds and
// the log: a loaded machine makes it longer, never shorter), and the host
// time before Stream started.
func stream(t *testing.T, emu *scpiemu.Emulator, opts scpi.Options, rate units.Hertz, n int) (*tally, *scpi.Instrument, time.Duration, hostclock.Time) {
	t.Helper()
	in, err := scpi.Open(emu.Path(), opts)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { in.Close() })
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	s := &tally{t: t, want: n, cancel: cancel}
	t0 := hostclock.Now()
	ran := streamGuarded(t, ctx, func(ctx context.Context) error { return in.Stream(ctx, meter.StreamConfig{Rate: rate}, s) })
	return s, in, ran, t0
}

// TestPacedPolling: the driver polls once per period of the stream's rate,
// not as fast as the instrument answers (the emulator answers thousands of
// polls a second), and marks about once a second. Every bound here holds
// however loaded the machine: a late poll only adds periods (as an exact
// "late" gap), so the counts are bounded above by the elapsed time and the
// samples are a count the test waits for. That late polls become gaps is
// TestLatePolls'.
func TestPacedPolling(t *testing.T) {
	if testing.Short() {
		t.Skip("live pty test")
	}
	emu := startEmu(t, scpiemu.Options{})
	lines0 := emu.Lines()
	const rate, want = 50, 100 // the N6705's 50 Hz, 2 s of samples
	s, in, ran, t0 := stream(t, emu, scpi.Options{}, 0, want)
	periods := float64(s.next)
	t.Logf("%.2f s at 50 Hz: %d samples, %d late in %d gaps, %d other gaps, %d marks, %d lines",
		ran.Seconds(), s.samples, s.late, s.lateN, s.other, len(s.marks), emu.Lines()-lines0)
	// Indices follow the host clock: no more periods than elapsed; polling
	// back to back would have had the samples in a few milliseconds.
	if s.samples < want || periods < float64(s.samples) || periods > rate*ran.Seconds()+2 || s.other != 0 {
		t.Errorf("%v periods, %d samples in %.2f s at %d Hz", periods, s.samples, ran.Seconds(), rate)
	}
	// Two queries a poll (current, voltage), one poll a sample, and the
	// open's few lines.
	if n := emu.Lines() - lines0; n > 2*s.samples+10 {
		t.Errorf("%d command lines for %d polls", n, s.samples)
	}
	if math.Abs(s.i-0.0125) > 1e-12 || s.v != 5 {
		t.Errorf("last reading %v A %v V", s.i, s.v)
	}
	if len(s.marks) < 1 || len(s.marks) > int(ran.Seconds())+2 {
		t.Errorf("%d marks in %.2f s, want about one a second", len(s.marks), ran.Seconds())
	}
	period := time.Second / rate
	for k, m := range s.marks {
		if !m.Synthetic || m.HostRecv < m.HostSent || m.ID != uint32(k+1) {
			t.Errorf("mark %d: %+v", k, m)
		}
		if k > 0 && m.HostRecv.Sub(s.marks[k-1].HostRecv) < time.Second {
			t.Errorf("marks %d and %d less than a second apart", k-1, k)
		}
		// The mark's sample is the period its query was sent in (or an
		// earlier one, if the poll started late): never a later one.
		if at := time.Duration(m.MeterIndex) * period; at > m.HostSent.Sub(t0) {
			t.Errorf("mark %d: sample %d (%v into the stream) for a query sent %v after the start", k, m.MeterIndex, at, m.HostSent.Sub(t0))
		}
	}
	if st := in.Stats(); st.Frames != uint64(s.samples) || st.SamplesLost != s.late {
		t.Errorf("stats %+v for %d samples, %d late", st, s.samples, s.late)
	}
}

// TestLatePolls: an instrument slower than the asked rate (two 30 ms
// queries a poll at 100 Hz) gives one sample per poll and gaps of exactly
// the periods the polls overran. A poll takes at least its 60 ms of
// emulated delay, so at least 5 periods after each are late, more on a
// loaded machine.
func TestLatePolls(t *testing.T) {
	if testing.Short() {
		t.Skip("live pty test")
	}
	emu := startEmu(t, scpiemu.Options{Delay: 30 * time.Millisecond})
	s, _, ran, _ := stream(t, emu, scpi.Options{}, 100, 10)
	t.Logf("%.2f s at 100 Hz, 60 ms polls: %d samples, %d late in %d gaps", ran.Seconds(), s.samples, s.late, s.lateN)
	if s.samples < 10 || s.lateN < s.samples-1 || s.late < uint64(5*(s.samples-1)) || s.other != 0 {
		t.Errorf("%d samples, %d late in %d gaps: want at least 5 periods late after each poll", s.samples, s.late, s.lateN)
	}
	if float64(s.next) > 100*ran.Seconds()+2 {
		t.Errorf("%d periods in %.2f s at 100 Hz", s.next, ran.Seconds())
	}
}

// TestFamiliesOnEmulator: every family is detected from its *IDN? and
// polled with its own commands, at up to its maximum rate.
func TestFamiliesOnEmulator(t *testing.T) {
	if testing.Short() {
		t.Skip("live pty test")
	}
	for _, f := range scpi.Families {
		t.Run(f.Name, func(t *testing.T) {
			emu := startEmu(t, scpiemu.Options{Family: f.Name, Current: 0.002, Voltage: 3.3})
			s, in, _, _ := stream(t, emu, scpi.Options{Voltage: 12}, units.Hertz(f.MaxRate), 3)
			if in.Family().Name != f.Name || s.samples < 2 || s.other != 0 {
				t.Fatalf("family %q, %d samples, %d failed polls", in.Family().Name, s.samples, s.other)
			}
			wantV := 3.3
			if f.MeasVolt == "" {
				wantV = 12 // current only: Options.Voltage
			}
			if math.Abs(s.i-0.002) > 1e-12 || s.v != wantV {
				t.Errorf("%v A %v V, want 2 mA at %v V", s.i, s.v, wantV)
			}
			if err := in.Stream(context.Background(), meter.StreamConfig{Rate: units.Hertz(f.MaxRate) * 1.01}, s); !errors.Is(err, meter.ErrUnsupported) {
				t.Errorf("above the maximum rate: %v", err)
			}
		})
	}
}

func TestResolveConfig(t *testing.T) {
	info := meter.Info{Rates: []units.Hertz{50, 100}}
	for _, c := range []struct {
		rate, want units.Hertz
		ports      []int
		ok         bool
	}{
		{0, 50, nil, true}, {100, 100, nil, true}, {0.5, 0.5, []int{1}, true},
		{101, 0, nil, false}, {-1, 0, nil, false}, {units.Hertz(math.NaN()), 0, nil, false},
		{1e-6, 0, nil, false}, {50, 0, []int{2}, false},
	} {
		got, err := scpi.ResolveConfig(info, meter.StreamConfig{Rate: c.rate, Ports: c.ports})
		if (err == nil) != c.ok || (c.ok && got.Rate != c.want) {
			t.Errorf("rate %v ports %v → %v, %v", c.rate, c.ports, got.Rate, err)
		}
		if err != nil && !errors.Is(err, meter.ErrUnsupported) {
			t.Errorf("rate %v: %v is not ErrUnsupported", c.rate, err)
		}
	}
	if _, err := scpi.ResolveConfig(meter.Info{Rates: []units.Hertz{50}}, meter.StreamConfig{}); err == nil {
		t.Error("an info without a maximum rate resolved")
	}
}
