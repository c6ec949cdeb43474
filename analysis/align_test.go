package analysis

import (
	"math"
	"math/rand"
	"sort"
	"testing"

	"github.com/idlewatt/idlewatt/meter"
)

// TestClockFitDrift: 10 minutes of marks at 1 Hz on a meter clock running
// 100 ppm slow, each way delayed by 0.15 ms plus an exponential jitter of
// mean 2 ms (asymmetric on purpose). The fitted clock must place every
// sample within 0.5 ms of its true host time.
func TestClockFitDrift(t *testing.T) {
	const rate, ppm = 10000.0, 100.0
	start := int64(7e12)
	period := 1e9 / rate * (1 + ppm*1e-6)
	truth := func(n uint64) float64 { return float64(start) + float64(n)*period }
	rng := rand.New(rand.NewSource(3))
	f := NewClockFitter(rate, 5, 4096)
	for s := 1; s < 600; s++ {
		h := start + int64(s)*1e9
		up := 150e3 + rng.ExpFloat64()*2e6
		down := 150e3 + rng.ExpFloat64()*2e6
		f.Add(meter.MarkEcho{HostSent: h - int64(up), HostRecv: h + int64(down), MeterIndex: uint64(float64(h-start) / period)})
	}
	c := f.Fit(start + 123456) // a wrong header start must not matter
	if !c.Fitted || c.Used < 50 {
		t.Fatalf("fit %+v", c)
	}
	worst := 0.0
	for n := uint64(0); n < 600*10000; n += 997 {
		worst = math.Max(worst, math.Abs(c.HostF(float64(n))-truth(n)))
	}
	if worst > 0.5e6 {
		t.Errorf("worst alignment error %.3f ms > 0.5 ms (drift %.2f ppm, residual %.3f ms)", worst/1e6, c.DriftPPM, c.ResidualMS.RMS)
	}
	if math.Abs(c.DriftPPM-ppm) > 2 {
		t.Errorf("drift %.2f ppm, want 100", c.DriftPPM)
	}
	t.Logf("worst %.4f ms, drift %.3f ppm, residual rms %.4f ms max %.4f ms, used %d", worst/1e6, c.DriftPPM, c.ResidualMS.RMS, c.ResidualMS.Max, c.Used)
}

func TestClockFallback(t *testing.T) {
	c := NewClockFitter(1000, 5, 64).Fit(42e9)
	if c.Fitted || c.Host(1000) != 43e9 {
		t.Errorf("fallback %+v host(1000) %d", c, c.Host(1000))
	}
}

func TestClockFitterBounded(t *testing.T) {
	f := NewClockFitter(1000, 1, 64)
	for s := 0; s < 100000; s++ {
		f.Add(meter.MarkEcho{HostSent: int64(s) * 1e9, HostRecv: int64(s)*1e9 + 1e5, MeterIndex: uint64(s) * 1000})
	}
	if len(f.best) > 64 {
		t.Errorf("%d windows kept, want ≤ 64", len(f.best))
	}
	if c := f.Fit(0); math.Abs(c.NsPerSample-1e6) > 1e-3 {
		t.Errorf("period %v", c.NsPerSample)
	}
}

func TestHistogramQuantiles(t *testing.T) {
	rng := rand.New(rand.NewSource(1))
	var h Histogram
	xs := make([]float64, 100000)
	for i := range xs {
		xs[i] = math.Exp(rng.NormFloat64()*2 - 3)
		h.Add(xs[i])
	}
	sortFloats(xs)
	for _, q := range []float64{0.01, 0.5, 0.95, 0.99} {
		want := xs[int(q*float64(len(xs)-1))]
		if got := h.Quantile(q); math.Abs(got-want) > want/(1<<histSub) {
			t.Errorf("q%.2f = %g, want %g within %.2f %%", q, got, want, 100.0/(1<<histSub))
		}
	}
	var z Histogram
	z.Add(-1)
	z.Add(0)
	if z.Quantile(0.5) != 0 {
		t.Errorf("underflow quantile %g", z.Quantile(0.5))
	}
}

func sortFloats(x []float64) { sort.Float64s(x) }

func TestSlidingMaxBruteForce(t *testing.T) {
	rng := rand.New(rand.NewSource(2))
	xs := make([]float64, 5000)
	for i := range xs {
		xs[i] = rng.Float64()
	}
	for _, n := range []int{1, 7, 100, 1000} {
		w := newSlidingMax(n)
		for _, x := range xs {
			w.push(x)
		}
		best := math.Inf(-1)
		for i := 0; i+n <= len(xs); i++ {
			s := 0.0
			for _, x := range xs[i : i+n] {
				s += x
			}
			best = math.Max(best, s/float64(n))
		}
		if math.Abs(w.best-best) > 1e-9 {
			t.Errorf("n=%d best %v, want %v", n, w.best, best)
		}
	}
}

func TestSpanSetMerge(t *testing.T) {
	var ss spanSet
	ss.gap = 10
	for _, s := range [][2]int64{{100, 200}, {150, 300}, {305, 400}, {50, 60}, {1000, 1100}, {55, 120}} {
		ss.add(s[0], s[1])
	}
	ss.merge()
	want := []span{{50, 400}, {1000, 1100}}
	if len(ss.spans) != len(want) || ss.spans[0] != want[0] || ss.spans[1] != want[1] {
		t.Errorf("spans %v, want %v", ss.spans, want)
	}
	c := activityCursor{spans: ss.spans, settle: 50}
	for _, tc := range []struct {
		t    int64
		want Activity
	}{{10, Idle}, {50, Busy}, {400, Busy}, {450, Settle}, {451, Idle}, {1050, Busy}, {1200, Idle}} {
		if got := c.at(tc.t); got != tc.want {
			t.Errorf("at(%d) = %v, want %v", tc.t, got, tc.want)
		}
	}
}
