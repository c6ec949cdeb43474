package detect

import (
	"math"
	"math/rand/v2"
	"testing"
	"time"

	"github.com/idlewatt/idlewatt/hostclock"
	"github.com/idlewatt/idlewatt/states/powerstate"
	"github.com/idlewatt/idlewatt/units"
)

const period = 100 * time.Microsecond // 10 kS/s

type seg struct {
	state powerstate.State
	w     float64
	d     time.Duration
	busy  bool
}

// render pushes a piecewise-constant trace with Gaussian noise of sigma W.
func render(c *Classifier, segs []seg, sigma float64, seed uint64) (truth []Span) {
	r := rand.New(rand.NewPCG(seed, 1))
	var t hostclock.Time
	for _, s := range segs {
		n := int(s.d / period)
		truth = append(truth, Span{State: s.state, Start: t, End: t.Add(time.Duration(n) * period)})
		for k := 0; k < n; k++ {
			c.Push(t, units.Watts(s.w+r.NormFloat64()*sigma), s.busy)
			t = t.Add(period)
		}
	}
	c.Close()
	return truth
}

var profile = Levels{Idle: 0.40, Partial: 0.30, Slumber: 0.060, DevSlp: 0.0025}

var script = []seg{
	{powerstate.Idle, 0.40, 200 * time.Millisecond, false},
	{powerstate.Active, 2.5, 50 * time.Millisecond, true},
	{powerstate.Idle, 0.40, 100 * time.Millisecond, false},
	{powerstate.Partial, 0.30, 100 * time.Millisecond, false},
	{powerstate.Slumber, 0.060, 300 * time.Millisecond, false},
	{powerstate.DevSlp, 0.0025, 500 * time.Millisecond, false},
	{powerstate.Slumber, 0.060, 50 * time.Millisecond, false},
	{powerstate.Active, 1.8, 20 * time.Millisecond, true},
	{powerstate.Idle, 0.40, 100 * time.Millisecond, false},
}

func TestClassifierRecoversScript(t *testing.T) {
	var got []Span
	var sum Summary
	c, err := New(Options{Levels: profile, Period: period}, func(s Span) { got = append(got, s); sum.Add(s) })
	if err != nil {
		t.Fatal(err)
	}
	// 2 mW of noise per sample: comparable to the DevSlp level itself.
	truth := render(c, script, 0.002, 1)
	if len(got) != len(truth) {
		t.Fatalf("got %d spans, want %d: %+v", len(got), len(truth), got)
	}
	for i := range truth {
		g, w := got[i], truth[i]
		if g.State != w.State {
			t.Errorf("span %d: state %v, want %v", i, g.State, w.State)
		}
		// Boundaries within the smoothing window plus one sample.
		if d := time.Duration(g.Start - w.Start).Abs(); d > 1100*time.Microsecond {
			t.Errorf("span %d (%v): start off by %v", i, w.State, d)
		}
		want := script[i].w
		if math.Abs(float64(g.MeanW)-want) > 0.001+0.01*want {
			t.Errorf("span %d (%v): mean %.4f W, want %.4f W", i, w.State, g.MeanW, want)
		}
	}
	var total time.Duration
	for _, s := range script {
		total += s.d
	}
	if sum.Total() != total {
		t.Errorf("classified %v of %v", sum.Total(), total)
	}
	if r := sum.Residency(powerstate.DevSlp); math.Abs(r-0.5/1.42) > 0.01 {
		t.Errorf("devslp residency %.3f, want %.3f", r, 0.5/1.42)
	}
	if p := float64(sum.MeanPower(powerstate.DevSlp)); math.Abs(p-0.0025) > 0.0002 {
		t.Errorf("devslp power %.5f W, want 0.0025 W ±0.2 mW", p)
	}
	if n := sum.Transitions[[2]powerstate.State{powerstate.Slumber, powerstate.DevSlp}]; n != 1 {
		t.Errorf("slumber→devslp transitions = %d, want 1", n)
	}
}

func TestSpikeDoesNotSplitSpan(t *testing.T) {
	var got []Span
	c, _ := New(Options{Levels: profile, Period: period}, func(s Span) { got = append(got, s) })
	for k := 0; k < 1000; k++ {
		w := 0.06
		if k == 500 {
			w = 3 // one-sample glitch
		}
		c.Push(at(k), units.Watts(w), false)
	}
	c.Close()
	if len(got) != 1 || got[0].State != powerstate.Slumber {
		t.Fatalf("spans = %+v, want one slumber span", got)
	}
	if got[0].MaxW != 3 {
		t.Errorf("the glitch must stay in the span's max: %v", got[0].MaxW)
	}
}

func TestGapSplitsSpans(t *testing.T) {
	var got []Span
	c, _ := New(Options{Levels: profile, Period: period}, func(s Span) { got = append(got, s) })
	for k := 0; k < 100; k++ {
		c.Push(at(k), 0.4, false)
	}
	c.Gap()
	for k := 200; k < 300; k++ {
		c.Push(at(k), 0.4, false)
	}
	c.Close()
	if len(got) != 2 || got[0].End != at(100) || got[1].Start != at(200) {
		t.Fatalf("spans across a gap = %+v", got)
	}
}

func TestLevelsValidate(t *testing.T) {
	bad := Levels{Idle: 0.4, Slumber: 0.06, DevSlp: 0.1}
	if err := bad.Validate(); err == nil {
		t.Fatal("devslp above slumber accepted")
	}
	if _, err := New(Options{Levels: Levels{}, Period: period}, nil); err == nil {
		t.Fatal("no level at all accepted")
	}
	if _, err := New(Options{Levels: profile}, nil); err == nil {
		t.Fatal("zero period accepted")
	}
}

func TestLearnLevels(t *testing.T) {
	r := rand.New(rand.NewPCG(7, 7))
	var h LevelHistogram
	add := func(w, sigma float64, n int) {
		for k := 0; k < n; k++ {
			h.Add(units.Watts(w + r.NormFloat64()*sigma))
		}
	}
	add(0.40, 0.004, 40000)
	add(0.30, 0.003, 10000)
	add(0.060, 0.001, 30000)
	add(0.0025, 0.0002, 20000)
	l, err := h.Levels(0.02)
	if err != nil {
		t.Fatal(err)
	}
	check := func(name string, got, want float64) {
		if math.Abs(got-want) > 0.03*want {
			t.Errorf("%s level %.4f W, want %.4f W ±3 %%", name, got, want)
		}
	}
	check("idle", float64(l.Idle), 0.40)
	check("partial", float64(l.Partial), 0.30)
	check("slumber", float64(l.Slumber), 0.060)
	check("devslp", float64(l.DevSlp), 0.0025)

	// A drive with no DevSlp and no Partial: only idle and slumber.
	var h2 LevelHistogram
	h = h2
	add(0.2, 0.002, 30000)
	add(0.05, 0.001, 30000)
	l, err = h.Levels(0.02)
	if err != nil {
		t.Fatal(err)
	}
	if l.DevSlp != 0 || l.Partial != 0 || l.Slumber == 0 {
		t.Errorf("levels %+v, want idle and slumber only", l)
	}
	// A drive that sat in DevSlp throughout: one level of a few mW is
	// DevSlp, not idle.
	var h3 LevelHistogram
	h = h3
	add(0.0045, 0.0003, 30000)
	if l, err = h.Levels(0.02); err != nil || l.Idle != 0 || math.Abs(float64(l.DevSlp)-0.0045) > 0.0003 {
		t.Errorf("all-DevSlp levels %+v (%v), want DevSlp 4.5 mW and no idle", l, err)
	}
	var empty LevelHistogram
	if _, err := empty.Levels(0.02); err == nil {
		t.Error("empty histogram gave levels")
	}
}

func TestLatencies(t *testing.T) {
	ms := hostclock.Time(time.Millisecond)
	spans := []Span{
		{State: powerstate.Active, Start: 0, End: 100 * ms},
		{State: powerstate.Idle, Start: 100 * ms, End: 130 * ms},
		{State: powerstate.Slumber, Start: 130 * ms, End: 300 * ms},
		{State: powerstate.DevSlp, Start: 305 * ms, End: 800 * ms},
		{State: powerstate.Active, Start: 800 * ms, End: 900 * ms},
	}
	ios := []IO{{Issue: 10 * ms, Complete: 100 * ms}, {Issue: 802 * ms, Complete: 850 * ms}}
	pins := []Pin{{At: 300 * ms, Asserted: true}, {At: 800 * ms, Asserted: false}}
	entries, exits := Latencies(spans, ios, pins, 50*time.Millisecond)
	if len(entries) != 2 {
		t.Fatalf("entries %+v", entries)
	}
	if e := entries[0]; e.State != powerstate.Slumber || e.Cause != "io" || e.Latency != 30*time.Millisecond {
		t.Errorf("slumber entry %+v, want io, 30ms", e)
	}
	if e := entries[1]; e.State != powerstate.DevSlp || e.Cause != "pin" || e.Latency != 5*time.Millisecond {
		t.Errorf("devslp entry %+v, want pin, 5ms", e)
	}
	if len(exits) != 1 {
		t.Fatalf("exits %+v", exits)
	}
	if x := exits[0]; x.State != powerstate.DevSlp || x.Cause != "pin" || x.Latency != 50*time.Millisecond {
		t.Errorf("devslp exit %+v, want pin → 850ms completion = 50ms", x)
	}
}

func FuzzClassifier(f *testing.F) {
	f.Add([]byte{1, 2, 3, 200, 0, 0, 255})
	f.Fuzz(func(t *testing.T, data []byte) {
		c, err := New(Options{Levels: profile, Period: period}, func(s Span) {
			if s.End < s.Start || s.Samples <= 0 {
				t.Fatalf("bad span %+v", s)
			}
		})
		if err != nil {
			t.Fatal(err)
		}
		ca, err := New(Options{Levels: profile, Period: period, Adaptive: true}, func(s Span) {
			if s.End < s.Start || s.Samples <= 0 {
				t.Fatalf("adaptive: bad span %+v", s)
			}
		})
		if err != nil {
			t.Fatal(err)
		}
		defer ca.Close()
		var h LevelHistogram
		for i, b := range data {
			w := math.Pow(10, float64(b)/64-4) // 0.1 mW .. ~1 kW
			if b == 0 {
				w = math.NaN()
			}
			c.Push(at(i), units.Watts(w), b&1 == 1)
			ca.Push(at(i), units.Watts(w), b&1 == 1)
			h.Add(units.Watts(w))
			if b == 17 {
				c.Gap()
			}
		}
		c.Close()
		_, _ = h.Levels(0.01)
	})
}

func TestOnlineLagsHalfWindow(t *testing.T) {
	o, err := NewOnline(profile, period, time.Millisecond)
	if err != nil {
		t.Fatal(err)
	}
	for k := 0; k < 100; k++ {
		if s := o.Classify(0.06, false); s != powerstate.Slumber {
			t.Fatalf("sample %d: %v, want slumber", k, s)
		}
	}
	// Step down to DevSlp: 11-sample window, so the 6th new sample flips it.
	for k := 1; k <= 10; k++ {
		s := o.Classify(0.0025, false)
		if want := powerstate.Slumber; k >= 6 {
			want = powerstate.DevSlp
			if s != want {
				t.Fatalf("step sample %d: %v, want %v", k, s, want)
			}
		} else if s != want {
			t.Fatalf("step sample %d: %v, want %v", k, s, want)
		}
	}
	if s := o.Classify(3, false); s != powerstate.DevSlp {
		t.Errorf("a lone spike changed the label to %v", s)
	}
	if s := o.Classify(0.0025, true); s != powerstate.Active {
		t.Errorf("busy sample labelled %v", s)
	}
}

// BenchmarkClassifierPush: one op is one sample of a trace with a
// transition every 1000 samples — noisy (2 mW σ) with the fixed window, the
// same with the adaptive one (sized for that noise: 55 samples), and
// noise-free (runs of one value, as a simulated capture has).
func BenchmarkClassifierPush(b *testing.B) {
	for _, bc := range []struct {
		name     string
		sigma    float64
		adaptive bool
	}{{"noisy", 0.002, false}, {"adaptive", 0.002, true}, {"runs", 0, true}} {
		b.Run(bc.name, func(b *testing.B) {
			c, _ := New(Options{Levels: profile, Period: period, Adaptive: bc.adaptive}, func(Span) {})
			w := benchTrace(bc.sigma)
			for i := range 2 * AdaptSamples {
				c.Push(at(i), units.Watts(w[i&(len(w)-1)]), false)
			}
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				k := i + 2*AdaptSamples
				c.Push(at(k), units.Watts(w[k&(len(w)-1)]), false)
			}
		})
	}
}

// benchTrace is 2¹⁶ samples stepping through the profile's levels every
// 1000, with gaussian noise of σ sigma.
func benchTrace(sigma float64) []float64 {
	r := rand.New(rand.NewPCG(1, 2))
	levels := []float64{0.4, 0.3, 0.06, 0.0025}
	w := make([]float64, 1<<16)
	for i := range w {
		w[i] = levels[(i/1000)%4] + r.NormFloat64()*sigma
	}
	return w
}

func BenchmarkLevelHistogramAdd(b *testing.B) {
	var h LevelHistogram
	for i := 0; i < b.N; i++ {
		h.Add(units.Watts(0.001 + float64(i&1023)*0.001))
	}
}

// at is the host time of sample k.
func at(k int) hostclock.Time { return hostclock.Time(int64(k) * int64(period)) }
