package battery

import (
	"bufio"
	"context"
	"errors"
	"math"
	"os"
	"path/filepath"
	"reflect"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/idlewatt/idlewatt/hostclock"
	"github.com/idlewatt/idlewatt/meter"
)

const fixtures = "../../fixtures/battery"

func bat(c string) string { return filepath.Join(fixtures, c, "class/power_supply/BAT0") }

func TestReadMethods(t *testing.T) {
	for _, tc := range []struct {
		fixture string
		method  Method
		power   float64
	}{
		{"power_now", MethodPower, 4.215},
		{"current_voltage", MethodIV, 0.355 * 11.873},
		{"energy_only", MethodEnergy, 0},
	} {
		r, err := Read(bat(tc.fixture), 0)
		if err != nil {
			t.Fatalf("%s: %v", tc.fixture, err)
		}
		if r.Method != tc.method || math.Abs(r.Power-tc.power) > 1e-9 {
			t.Errorf("%s: %s %.6f W, want %s %.6f W", tc.fixture, r.Method, r.Power, tc.method, tc.power)
		}
	}
	r, _ := Read(bat("energy_only"), 0)
	if math.Abs(r.Energy-41.23*3600) > 1e-6 {
		t.Errorf("energy %v J", r.Energy)
	}
}

func TestCharging(t *testing.T) {
	_, err := Open(filepath.Join(fixtures, "charging"), Options{})
	if !errors.Is(err, ErrNotDischarging) || !strings.Contains(err.Error(), "Charging") {
		t.Fatalf("charging battery: %v", err)
	}
}

func TestStepperStale(t *testing.T) {
	s := stepper{stale: 10 * time.Second}
	var reasons []string
	for k := range 15 {
		_, why := s.step(Reading{At: time.Duration(k) * time.Second, Power: 4.2, Method: MethodPower})
		reasons = append(reasons, why)
	}
	if reasons[10] != "" || reasons[11] != "stale" || reasons[14] != "stale" {
		t.Fatalf("reasons %q", reasons)
	}
	if p, why := s.step(Reading{At: 15 * time.Second, Power: 4.3, Method: MethodPower}); why != "" || p != 4.3 {
		t.Fatalf("after a change: %v %q", p, why)
	}
}

func TestStepperEnergy(t *testing.T) {
	s := stepper{stale: time.Minute}
	// Steps of 36 J (10 mWh) every 9 s: 4 W. The first reading is not a
	// step, so power starts after the second real step.
	var got []float64
	var why []string
	for k := 0; k <= 30; k++ {
		e := 1000 - 36*float64((k+4)/9)
		p, w := s.step(Reading{At: time.Duration(k) * time.Second, Energy: e, Method: MethodEnergy})
		got, why = append(got, p), append(why, w)
	}
	if why[13] != "warmup" || why[14] != "" || got[14] != 4 || got[30] != 4 {
		t.Fatalf("power %v reasons %q", got, why)
	}
}

// TestIdleSeries estimates idle power on fixtures/battery/idle-series.csv
// (10 minutes; the generator drew 4.2 W).
func TestIdleSeries(t *testing.T) {
	f, err := os.Open(filepath.Join(fixtures, "idle-series.csv"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	pe, ee := Estimator{Interval: time.Second}, Estimator{Interval: time.Second}
	sc := bufio.NewScanner(f)
	sc.Scan()
	for sc.Scan() {
		c := strings.Split(sc.Text(), ",")
		ts, _ := strconv.Atoi(c[0])
		pw, _ := strconv.ParseFloat(c[2], 64)
		e, _ := strconv.ParseFloat(c[3], 64)
		at := time.Duration(ts) * time.Second
		pe.Add(Reading{At: at, Power: pw * 1e-6, Method: MethodPower})
		ee.Add(Reading{At: at, Energy: e * 1e-6 * 3600, Method: MethodEnergy})
	}
	for _, est := range []*Estimator{&pe, &ee} {
		r, err := est.Result()
		if err != nil {
			t.Fatal(err)
		}
		t.Logf("idle-series.csv: %v", r)
		if math.Abs(float64(r.Power)-4.2) > 3*float64(r.Uncertainty)+0.05 || r.Uncertainty <= 0 || r.Uncertainty > 0.2 {
			t.Errorf("%s: %v, want 4.2 W within its uncertainty", r.Method, r)
		}
	}
}

func TestRAPLWrap(t *testing.T) {
	dir := t.TempDir()
	d := filepath.Join(dir, "class/powercap/intel-rapl:0")
	os.MkdirAll(d, 0o755)
	os.WriteFile(filepath.Join(d, "max_energy_range_uj"), []byte("1000000\n"), 0o644)
	os.WriteFile(filepath.Join(d, "energy_uj"), []byte("999000\n"), 0o644)
	r, err := OpenRAPL(dir)
	if err != nil {
		t.Fatal(err)
	}
	os.WriteFile(filepath.Join(d, "energy_uj"), []byte("4000\n"), 0o644)
	j, err := r.Delta()
	if err != nil || math.Abs(j-0.005001) > 1e-12 {
		t.Fatalf("delta across wrap %v J, %v", j, err)
	}
	if os.Geteuid() != 0 {
		os.Chmod(filepath.Join(d, "energy_uj"), 0)
		if _, err := r.Delta(); err == nil || !strings.Contains(err.Error(), "root") {
			t.Fatalf("EACCES: %v", err)
		}
	}
}

type stop struct {
	cancel  func()
	samples map[int]int
	gaps    []meter.Gap
	v       float64
	i       float64
}

func (s *stop) Samples(b *meter.Block) error {
	s.samples[b.Channel]++
	if b.Channel == 0 {
		s.v, s.i = float64(b.V[0]), float64(b.I[0])
	}
	if s.samples[0] >= 3 {
		s.cancel()
	}
	return nil
}
func (s *stop) Gap(g meter.Gap) error       { s.gaps = append(s.gaps, g); return nil }
func (s *stop) Mark(m meter.MarkEcho) error { return nil }
func (s *stop) Event(e meter.Event) error   { return nil }

func TestStreamFixture(t *testing.T) {
	b, err := Open(filepath.Join(fixtures, "power_now"), Options{Interval: time.Millisecond, RAPL: true})
	if err != nil {
		t.Fatal(err)
	}
	b.clock = virtualClock(time.Millisecond, nil) // a loaded host's late ticks are TestIndexIsPollTime's
	if len(b.Info().Channels) != 2 || b.Info().Channels[1].Port != 0 {
		t.Fatalf("info %+v", b.Info())
	}
	ctx, cancel := context.WithCancel(context.Background())
	s := &stop{cancel: cancel, samples: map[int]int{}}
	if err := b.Stream(ctx, meter.StreamConfig{}, s); err != nil {
		t.Fatal(err)
	}
	if math.Abs(s.v*s.i-4.215) > 1e-9 || s.samples[1] < 2 || len(s.gaps) != 1 || s.gaps[0].Channel != 1 {
		t.Fatalf("V %v I %v samples %v gaps %+v", s.v, s.i, s.samples, s.gaps)
	}
}

// TestImplausibleGauge: a gauge reading beyond a laptop's physics (a
// voltage_now in the wrong unit, 34 kW) is refused at Open and, if it
// appears while streaming, is a one-sample "implausible" gap, never a
// sample.
func TestImplausibleGauge(t *testing.T) {
	root := t.TempDir()
	dir := filepath.Join(root, "class", "power_supply", "BAT0")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	put := func(name, val string) {
		t.Helper()
		if err := os.WriteFile(filepath.Join(dir, name), []byte(val+"\n"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	put("type", "Battery")
	put("status", "Discharging")
	put("voltage_now", "11400000000") // 11 400 V: mV written as µV·1000
	put("power_now", "4200000")
	if _, err := Open(root, Options{}); !errors.Is(err, meter.ErrCalibration) || !strings.Contains(err.Error(), "voltage_now 11400 V") {
		t.Fatalf("open with 11 400 V: %v", err)
	}
	put("voltage_now", "11400000")
	put("power_now", "34000000000") // 34 kW
	if _, err := Open(root, Options{}); !errors.Is(err, meter.ErrCalibration) || !strings.Contains(err.Error(), "34000 W") {
		t.Fatalf("open with 34 kW: %v", err)
	}
	put("power_now", "4200000")
	b, err := Open(root, Options{Interval: time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	b.clock = virtualClock(time.Millisecond, nil)
	put("power_now", "34000000000")
	ctx, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
	defer cancel()
	s := &stop{cancel: func() {}, samples: map[int]int{}}
	if err := b.Stream(ctx, meter.StreamConfig{}, s); err != nil {
		t.Fatal(err)
	}
	if s.samples[0] != 0 || len(s.gaps) == 0 || s.gaps[0].Reason != "implausible" {
		t.Fatalf("samples %v gaps %+v", s.samples, s.gaps)
	}
}

// virtualClock steps Interval per poll, and jump more at the given polls.
func virtualClock(interval time.Duration, jump map[int]time.Duration) func() hostclock.Time {
	t, n := hostclock.Time(1e12), 0
	return func() hostclock.Time {
		now := t
		n++
		t = t.Add(interval + jump[n])
		return now
	}
}

// TestIndexIsPollTime: a tick the host missed (poll 3 comes 3.4 intervals
// after poll 2) leaves a "late" gap of the indices it skipped on every
// channel; every sample's index × Interval is its time since the first
// poll (issue 26: indices counted polls, which put the rest of the
// timeline early).
func TestIndexIsPollTime(t *testing.T) {
	b, err := Open(filepath.Join(fixtures, "power_now"), Options{Interval: time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	b.clock = virtualClock(time.Millisecond, map[int]time.Duration{2: 2400 * time.Microsecond})
	ctx, cancel := context.WithCancel(context.Background())
	s := &indexed{cancel: cancel}
	if err := b.Stream(ctx, meter.StreamConfig{}, s); err != nil {
		t.Fatal(err)
	}
	// polls at 0, 1, 4.4→4, 5.4→5, 6.4→6 ms (a sixth may come: after the
	// cancel, Stream's select may take a ready tick before ctx.Done)
	if want := []uint64{0, 1, 4, 5, 6}; len(s.starts) < 5 || !reflect.DeepEqual(s.starts[:5], want) {
		t.Errorf("sample indices %v, want %v", s.starts, want)
	}
	if len(s.gaps) != 1 || s.gaps[0].Start != 2 || s.gaps[0].Count != 2 || s.gaps[0].Reason != "late" {
		t.Errorf("gaps %+v, want one late gap [2, 4)", s.gaps)
	}
	if st := b.Stats(); st.SamplesLost != 2 {
		t.Errorf("SamplesLost %d, want 2", st.SamplesLost)
	}
}

type indexed struct {
	cancel func()
	starts []uint64
	gaps   []meter.Gap
}

func (s *indexed) Samples(b *meter.Block) error {
	s.starts = append(s.starts, b.Start)
	if len(s.starts) == 5 {
		s.cancel()
	}
	return nil
}
func (s *indexed) Gap(g meter.Gap) error       { s.gaps = append(s.gaps, g); return nil }
func (s *indexed) Mark(m meter.MarkEcho) error { return nil }
func (s *indexed) Event(e meter.Event) error   { return nil }
