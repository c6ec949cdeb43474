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

// renderAR1 pushes a piecewise-constant trace with AR(1) noise of
// stationary σ sigma W and correlation time tau.
func renderAR1(c *Classifier, segs []seg, sigma float64, tau time.Duration, seed uint64) {
	r := rand.New(rand.NewPCG(seed, 2))
	rho := math.Exp(-float64(period) / float64(tau))
	e := r.NormFloat64() * sigma
	var t hostclock.Time
	for _, s := range segs {
		for range int(s.d / period) {
			c.Push(t, units.Watts(s.w+e), s.busy)
			e = rho*e + math.Sqrt(1-rho*rho)*sigma*r.NormFloat64()
			t = t.Add(period)
		}
	}
	c.Close()
}

// Idle excursions of 1.9 ms inside Partial are longer than half the
// smoothing window but shorter than the 2 ms dwell: the smoothed power
// leaves the Partial band and comes back, and the span stays Partial.
// Under correlated noise few of their samples are ClearSigmas σ inside the
// idle band, so Span.Clear sees a fraction of them; Hidden must count the
// excursions' samples (the residency interval adds them), and a trace
// without excursions must give next to none.
func TestHiddenCountsExcursionsTheDwellAbsorbed(t *testing.T) {
	const k, exN = 30, 19 // excursions, samples each (1.9 ms at 10 kS/s)
	build := func(excursions bool) []seg {
		segs := []seg{{powerstate.Idle, 0.40, 300 * time.Millisecond, false}}
		for range k {
			segs = append(segs, seg{powerstate.Partial, 0.30, 30 * time.Millisecond, false})
			if excursions {
				segs = append(segs, seg{powerstate.Idle, 0.40, exN * period, false})
			}
		}
		return append(segs, seg{powerstate.Slumber, 0.060, 200 * time.Millisecond, false})
	}
	run := func(segs []seg) (*Classifier, []Span) {
		var spans []Span
		c, err := New(Options{Levels: profile, Period: period, Adaptive: true}, func(s Span) { spans = append(spans, s) })
		if err != nil {
			t.Fatal(err)
		}
		renderAR1(c, segs, 0.010, 400*time.Microsecond, 11)
		return c, spans
	}
	c, spans := run(build(true))
	if w := c.Smooth(); w >= 2*time.Duration(exN)*period {
		t.Fatalf("window %v ≥ 2 × the excursion's half: the test needs excursions the window shows", w)
	}
	idleSpans, clear := 0, 0
	for _, sp := range spans {
		if sp.State == powerstate.Idle {
			idleSpans++
		}
		if sp.State == powerstate.Partial {
			clear += int(sp.Clear[powerstate.Idle])
		}
	}
	if idleSpans > 3 {
		t.Fatalf("%d idle spans: the excursions were not absorbed, the test does not test what it says", idleSpans)
	}
	h := c.Hidden()
	got := h[powerstate.Partial][powerstate.Idle]
	if lo, hi := k*exN*3/4, k*exN*5/4; got < lo || got > hi {
		t.Fatalf("hidden idle samples in partial spans: %d, want %d–%d (%d excursions × %d samples; Clear saw %d)", got, lo, hi, k, exN, clear)
	}
	t.Logf("window %v: hidden %d of %d excursion samples, Clear %d", c.Smooth(), got, k*exN, clear)
	if clear >= got {
		t.Fatalf("Clear counted %d ≥ Hidden %d: the noise does not hide the excursions from Clear, the test does not show why Hidden is needed", clear, got)
	}

	c, _ = run(build(false))
	total := 0
	for a := range c.Hidden() {
		for b, n := range c.Hidden()[a] {
			if a != b {
				total += n
			}
		}
	}
	if total > 2*(k+2) {
		t.Fatalf("no excursions: %d samples counted hidden, want ≤ %d", total, 2*(k+2))
	}
}

// The window Adaptive sizes for a given noise does not depend on the
// sample rate: AR(1) noise correlated over 10 ms gets about the same
// window at 100 kS/s (a Power Profiler's rate) as at 10 kS/s. Measured
// over 2048 samples, 20 ms at 100 kS/s, the correlation was not seen and
// the window came out as for white noise, a small fraction of it.
func TestAdaptiveWindowDoesNotDependOnTheRate(t *testing.T) {
	win := func(per time.Duration) time.Duration {
		c, err := New(Options{Levels: profile, Period: per, Adaptive: true}, func(Span) {})
		if err != nil {
			t.Fatal(err)
		}
		r := rand.New(rand.NewPCG(5, 6))
		rho := math.Exp(-float64(per) / float64(10*time.Millisecond))
		const sigma = 0.004
		e := r.NormFloat64() * sigma
		var ts hostclock.Time
		for range int(time.Second / per) {
			c.Push(ts, units.Watts(0.060+e), false)
			e = rho*e + math.Sqrt(1-rho*rho)*sigma*r.NormFloat64()
			ts = ts.Add(per)
		}
		c.Close()
		return c.Smooth()
	}
	slow, fast := win(100*time.Microsecond), win(10*time.Microsecond)
	t.Logf("window at 10 kS/s %v, at 100 kS/s %v", slow, fast)
	if fast < slow/2 || fast > 2*slow {
		t.Errorf("window at 100 kS/s %v, at 10 kS/s %v: the same noise, windows a factor %.1f apart", fast, slow, float64(slow)/float64(fast))
	}
}
