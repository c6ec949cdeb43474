package analysis

import (
	"math"
	"math/rand"
	"slices"
	"sort"
	"testing"
	"time"

	"github.com/idlewatt/idlewatt/analysis/decimate"
	"github.com/idlewatt/idlewatt/hostclock"
	"github.com/idlewatt/idlewatt/meter"
)

// TestClockFitDrift: 10 minutes of marks at 1 Hz on a meter clock running
// 100 ppm slow, each way delayed by 0.15 ms plus an exponential jitter of
// mean 2 ms (asymmetric on purpose). The fitted clock must place every
// sample within 0.5 ms of its true host time.
func TestClockFitDrift(t *testing.T) {
	const rate, ppm = 10000.0, 100.0
	start := hostclock.Time(7e12)
	period := 1e9 / rate * (1 + ppm*1e-6)
	truth := func(n uint64) float64 { return float64(start) + float64(n)*period }
	rng := rand.New(rand.NewSource(3))
	f := NewClockFitter(rate, 5*time.Second, 4096)
	for s := 1; s < 600; s++ {
		h := start + hostclock.Time(s)*1e9
		up := 150e3 + rng.ExpFloat64()*2e6
		down := 150e3 + rng.ExpFloat64()*2e6
		f.Add(meter.MarkEcho{HostSent: h - hostclock.Time(up), HostRecv: h + hostclock.Time(down), MeterIndex: uint64(float64(h-start) / period)})
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
	c := NewClockFitter(1000, 5*time.Second, 64).Fit(42e9)
	if c.Fitted || c.Host(1000) != 43e9 {
		t.Errorf("fallback %+v host(1000) %d", c, c.Host(1000))
	}
}

func TestClockFitterBounded(t *testing.T) {
	f := NewClockFitter(1000, time.Second, 64)
	for s := 0; s < 100000; s++ {
		f.Add(meter.MarkEcho{HostSent: hostclock.Time(s) * 1e9, HostRecv: hostclock.Time(s)*1e9 + 1e5, MeterIndex: uint64(s) * 1000})
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

// TestPeakWinsBruteForce pushes random data in random pieces, with resets
// (gaps), phase-like changes of the best so far and enough samples to force
// rebases, and checks every window's best mean against a direct sum.
func TestPeakWinsBruteForce(t *testing.T) {
	rng := rand.New(rand.NewSource(2))
	xs := make([]float64, 3*peakChunk)
	for i := range xs {
		xs[i] = rng.Float64() * 3
		if rng.Intn(5000) == 0 {
			xs[i] += 10 // rare spikes, so most pieces can be skipped
		}
	}
	ns := [numPeakWins]int{1, 7, 100, 1000}
	w := newPeakWins(ns)
	var floor [numPeakWins]float64
	var have [numPeakWins]bool
	since := 0 // samples since the last reset
	scanned := 0
	for i := 0; i < len(xs); {
		if rng.Intn(50) == 0 {
			w.reset()
			since = 0
		}
		if rng.Intn(20) == 0 {
			have = [numPeakWins]bool{} // a new phase: nothing to beat yet
		}
		m := min(1+rng.Intn(3000), len(xs)-i)
		piece := xs[i : i+m]
		best, ok := w.push(piece, slices.Max(piece), &floor, &have)
		for k, n := range ns {
			want, any := math.Inf(-1), false
			for e := i; e < i+m; e++ { // window ending at sample e
				if since+(e-i)+1 < n {
					continue
				}
				s := 0.0
				for _, x := range xs[e-n+1 : e+1] {
					s += x
				}
				want, any = math.Max(want, s/float64(n)), true
			}
			if ok[k] {
				scanned++
				if got := best[k] / float64(n); math.Abs(got-want) > 1e-9*want {
					t.Fatalf("at %d+%d, n=%d: best %v, want %v", i, m, n, got, want)
				}
			} else if any && (!have[k] || want > floor[k]+1e-9) {
				t.Fatalf("at %d+%d, n=%d: skipped, but %v beats %v (%v)", i, m, n, want, floor[k], have[k])
			}
			if any && (!have[k] || want > floor[k]) {
				floor[k], have[k] = want, true
			}
		}
		since += m
		i += m
	}
	if scanned == 0 {
		t.Error("no window was ever scanned")
	}
}

// TestSummariseMatchesAdd checks the run-wise histogram and summary against
// sample-by-sample accumulation, including values outside the binned range.
func TestSummariseMatchesAdd(t *testing.T) {
	rng := rand.New(rand.NewSource(3))
	xs := make([]float64, 20000)
	for i := range xs {
		xs[i] = math.Exp(rng.NormFloat64()*4 - 2)
	}
	xs[10], xs[20], xs[30], xs[40], xs[50] = 0, -0.5, 1e-9, 1e6, math.Inf(1)
	var h1, h2 Histogram
	var a1, a2 acc
	for _, x := range xs {
		h1.Add(x)
		a1.add(x)
	}
	for i := 0; i < len(xs); i += 777 {
		a2.merge(summarise(xs[i:min(i+777, len(xs))], &h2))
	}
	if h1.n != h2.n || h1.under != h2.under || h1.over != h2.over || h1.maxV != h2.maxV || !slices.Equal(h1.bins, h2.bins) {
		t.Errorf("histograms differ: n %d/%d under %d/%d over %d/%d", h1.n, h2.n, h1.under, h2.under, h1.over, h2.over)
	}
	if a1.n != a2.n || a1.min != a2.min || a1.max != a2.max || math.Abs(a1.sum-a2.sum) > 1e-12*math.Abs(a1.sum) && !math.IsInf(a1.sum, 0) {
		t.Errorf("acc %+v, want %+v", a2, a1)
	}
	under, over := uint64(0), uint64(0)
	for _, x := range xs {
		if !(x >= math.Ldexp(1, histMinExp)) {
			under++
		} else if x >= math.Ldexp(1, histMaxExp) {
			over++
		}
	}
	if h2.under != under || h2.over != over || under < 3 || over < 2 {
		t.Errorf("under %d over %d, want %d and %d", h2.under, h2.over, under, over)
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

// TestChartRunMatchesUniform feeds the same runs to the envelope through
// chartRun (summary points where a run fits a bucket) and sample by sample,
// growing and fixed-span, and wants the same envelope up to rounding.
func TestChartRunMatchesUniform(t *testing.T) {
	for _, do := range []decimate.Options{
		{Buckets: 200, InitialWidth: 1e-3},
		{Buckets: 100, Start: 0.5, Span: 3},
	} {
		rng := rand.New(rand.NewSource(4))
		a, _ := decimate.New(do)
		b, _ := decimate.New(do)
		d := &driveProc{dec: a, decStart: do.Start}
		var h Histogram
		const dt = 1e-4
		for i := 0; i < 60000; {
			n := 1 + rng.Intn(700)
			run := make([]float64, n)
			for k := range run {
				run[k] = 0.4 + rng.Float64()
			}
			if rng.Intn(100) == 0 {
				run[n/2] = math.NaN()
			}
			t0 := float64(i) * dt
			d.chartRun(t0, dt, run, summarise(run, &h))
			b.AddUniform(t0, dt, run)
			i += n
		}
		ea, eb := a.Envelope(), b.Envelope()
		if ea.Len() != eb.Len() || ea.Len() < 10 {
			t.Fatalf("%+v: %d rows, want %d", do, ea.Len(), eb.Len())
		}
		same := func(x, y float64) bool {
			return x == y || math.IsNaN(x) && math.IsNaN(y) || math.Abs(x-y) < 1e-12*math.Abs(y)
		}
		for i := range ea.T {
			if !same(ea.T[i], eb.T[i]) || !same(ea.Min[i], eb.Min[i]) || !same(ea.Max[i], eb.Max[i]) || !same(ea.Mean[i], eb.Mean[i]) {
				t.Fatalf("%+v row %d: %v %v %v %v, want %v %v %v %v", do, i, ea.T[i], ea.Min[i], ea.Max[i], ea.Mean[i], eb.T[i], eb.Min[i], eb.Max[i], eb.Mean[i])
			}
		}
		if a.Dropped() != b.Dropped() {
			t.Errorf("%+v: dropped %d, want %d", do, a.Dropped(), b.Dropped())
		}
	}
}

// TestClockWeighsMarksByRoundTrip: short captures (20–40 s, a mark every
// 0.5 s, 5 s windows) whose marks mostly echo in 0.05–0.1 ms, but where the
// host's load delayed every mark of one window by 5–25 ms, its midpoint
// anywhere within its round trip (where the meter may have seen it), as in
// campaign seed 17 drive 78 (RTT 10 ms, 5 ms off the line). The line is
// weighted by the marks' round trips: every sample within 0.1 ms of its
// true host time, the drift within 5 ppm; and the exit's clock term
// (ResidualMS.Excess) small — unweighted, the line tilted by up to
// ~200 ppm and placed samples ms off.
func TestClockWeighsMarksByRoundTrip(t *testing.T) {
	rng := rand.New(rand.NewSource(17))
	const rate = 10000.0
	worseBefore := 0
	for trial := range 20 {
		ppm := rng.Float64()*200 - 100
		start := hostclock.Time(5e12)
		period := 1e9 / rate * (1 + ppm*1e-6)
		dur := 20 + rng.Intn(21)
		badWin := rng.Intn(dur / 5)
		var marks []meter.MarkEcho
		for k := 1; k < 2*dur; k++ {
			n := uint64(k) * 5000
			h := float64(start) + float64(n)*period
			rtt := 5e4 + rng.Float64()*5e4
			if k*5000/50000 == badWin {
				rtt = 5e6 + rng.Float64()*20e6
			}
			at := rng.Float64() * rtt // when, within the round trip, the meter saw it
			marks = append(marks, meter.MarkEcho{HostSent: hostclock.Time(h - at), HostRecv: hostclock.Time(h - at + rtt), MeterIndex: n})
		}
		f := NewClockFitter(rate, 5*time.Second, 4096)
		for _, m := range marks {
			f.Add(m)
		}
		c := f.Fit(start)
		worst := 0.0
		for n := uint64(0); n < uint64(dur)*10000; n += 997 {
			worst = math.Max(worst, math.Abs(c.HostF(float64(n))-(float64(start)+float64(n)*period)))
		}
		if worst > 0.1e6 || math.Abs(c.DriftPPM-ppm) > 5 || c.ResidualMS.Excess > 0.1 {
			t.Errorf("trial %d (%d s, %.1f ppm, window %d delayed): worst %.3f ms, drift %.2f ppm, excess %.3f ms", trial, dur, ppm, badWin, worst/1e6, c.DriftPPM, float64(c.ResidualMS.Excess))
		}
		// The unweighted line through the same selected marks.
		pts := make([]meter.MarkEcho, 0, len(f.best))
		for _, m := range f.best {
			pts = append(pts, m)
		}
		sort.Slice(pts, func(i, j int) bool { return pts[i].MeterIndex < pts[j].MeterIndex })
		var n, sx, sy, sxx, sxy float64
		for _, p := range pts {
			x, y := float64(p.MeterIndex), float64(mid(p)-start)
			n, sx, sy, sxx, sxy = n+1, sx+x, sy+y, sxx+x*x, sxy+x*y
		}
		slope := (n*sxy - sx*sy) / (n*sxx - sx*sx)
		if u := (slope/(1e9/rate) - 1) * 1e6; math.Abs(u-ppm) > 5 {
			worseBefore++
		}
	}
	if worseBefore == 0 {
		t.Errorf("the unweighted line was within 5 ppm on every trial: the delayed windows do not exercise the weights")
	}
}
