package html

import (
	"errors"
	"math"
	"math/rand/v2"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/idlewatt/idlewatt/analysis"
	"github.com/idlewatt/idlewatt/analysis/synthcap"
	"github.com/idlewatt/idlewatt/capture"
	"github.com/idlewatt/idlewatt/internal/outfile"
	"github.com/idlewatt/idlewatt/units"
)

// synthReport writes a review-like synthetic capture of length d, analyses
// it with a Pyramid attached and writes report.html; it returns the paths
// and the report.
func synthReport(t testing.TB, d time.Duration, rateHz float64) (capPath, htmlPath string, rep *analysis.Report, p *Pyramid) {
	return scenarioReport(t, synthcap.Review(d, rateHz, 20))
}

func scenarioReport(t testing.TB, sc synthcap.Scenario) (capPath, htmlPath string, rep *analysis.Report, p *Pyramid) {
	t.Helper()
	dir := t.TempDir()
	capPath = filepath.Join(dir, "run.iwcap")
	if err := synthcap.Write(capPath, sc); err != nil {
		t.Fatal(err)
	}
	opts := analysis.DefaultOptions()
	p = NewPyramidFor(capPath, Budget{})
	opts.Samples = p
	rep, err := analysis.Analyze(capPath, opts)
	if err != nil {
		t.Fatal(err)
	}
	htmlPath = filepath.Join(dir, FileName)
	if err := Write(htmlPath, rep, p, Options{Capture: capPath, Out: outfile.Options{Inputs: []string{capPath}}}); err != nil {
		t.Fatal(err)
	}
	return capPath, htmlPath, rep, p
}

// The pyramid holds exactly the samples the report integrates: its bucket
// sums give energy_j, its extremes peak_w and min_w, its counts
// samples.count.
func TestPyramidMatchesReport(t *testing.T) {
	gappy := synthcap.Review(75*time.Second, 10000, 20)
	// Missing samples on every channel, and on one rail only (the drive's
	// sample is then missing, the other rail's is not).
	gappy.Gaps = []synthcap.Gap{{Channel: -1, Start: 100000, Count: 5000}, {Channel: 1, Start: 300000, Count: 777}}
	for name, sc := range map[string]synthcap.Scenario{"clean": synthcap.Review(75*time.Second, 10000, 20), "gaps": gappy} {
		t.Run(name, func(t *testing.T) { checkPyramid(t, sc) })
	}
}

func checkPyramid(t *testing.T, sc synthcap.Scenario) {
	_, _, rep, p := scenarioReport(t, sc)
	for _, d := range rep.Drives {
		l := p.drives[d.Port]
		if l == nil {
			t.Fatalf("port %d: no buckets", d.Port)
		}
		var sum float64
		var n uint64
		lo, hi := math.Inf(1), math.Inf(-1)
		for j := range l.n {
			sum += l.sumW[j]
			n += uint64(l.n[j])
			if l.n[j] > 0 {
				lo, hi = math.Min(lo, float64(l.min[j])), math.Max(hi, float64(l.max[j]))
			}
		}
		if e := sum * p.dt; math.Abs(e-float64(d.EnergyJ)) > 1e-9*float64(d.EnergyJ) {
			t.Errorf("port %d: buckets hold %.9f J, report %.9f J", d.Port, e, d.EnergyJ)
		}
		if n != d.Samples.Count {
			t.Errorf("port %d: buckets hold %d samples, report %d", d.Port, n, d.Samples.Count)
		}
		if hi != float64(float32(d.PeakW)) || lo != float64(float32(d.MinW)) { // the page's float32

			t.Errorf("port %d: buckets span %g…%g W, report min %g peak %g", d.Port, lo, hi, d.MinW, d.PeakW)
		}
		if len(d.Rails) == 0 {
			t.Fatalf("port %d: no rails", d.Port)
		}
	}
	// Rails sum to the drives where every rail is present; a sample one
	// rail lacks is in the other rail's buckets only.
	var railE float64
	for _, l := range p.rails {
		for j := range l.n {
			railE += l.sumW[j] * p.dt
		}
	}
	var tot float64
	var dropped uint64
	for _, d := range rep.Drives {
		tot += float64(d.EnergyJ)
		dropped += d.Samples.Dropped
	}
	if len(sc.Gaps) > 0 && dropped == 0 {
		t.Fatal("the scenario's gaps dropped no drive sample")
	}
	if dropped == 0 && math.Abs(railE-tot) > 1e-6*tot {
		t.Errorf("rails hold %.6f J, drives %.6f J", railE, tot)
	}
	if dropped > 0 && !(railE > tot) {
		t.Errorf("with %d drive samples dropped, rails hold %.6f J, not more than the drives' %.6f J", dropped, railE, tot)
	}
}

// Halving keeps every sum and extreme and aligns buckets to even indices.
func TestLevelHalve(t *testing.T) {
	l := level{rail: true}
	for k := int64(3); k < 12; k++ {
		l.add(k, float64(k), 1)
		l.add(k, float64(-k), 1)
	}
	l.halve()
	if l.k0 != 1 || len(l.n) != 5 {
		t.Fatalf("k0 %d n %d, want 1 and 5", l.k0, len(l.n))
	}
	if l.n[0] != 2 || l.n[1] != 4 || l.max[1] != 5 || l.min[1] != -5 || l.sumW[4] != 0 || l.sumI[2] != 4 {
		t.Errorf("after halve: %+v", l)
	}
}

// The budget bounds the base level: twice the run, about the same bytes
// once past LongS; never more buckets than the budget allows.
func TestBudgetBoundsBuckets(t *testing.T) {
	p := NewPyramid(Budget{ShortBytes: 20000, LongBytes: 40000, ShortS: 1, LongS: 2})
	p.Begin(analysis.Clock{NsPerSample: 1e5}, 0)
	w := make([]float64, 1000)
	for i := range w {
		w[i] = float64(i % 7)
	}
	for b := 0; b < 100; b++ { // 10 s at 10 kS/s
		p.DriveSamples(1, float64(b)*0.1, 1e-4, w)
	}
	n := len(p.drives[1].n)
	if limit := 40000 / bytesPerBucket; n > limit || n < limit/2 {
		t.Errorf("%d buckets, want between %d and %d", n, limit/2, limit)
	}
	var cnt uint64
	for _, c := range p.drives[1].n {
		cnt += uint64(c)
	}
	if cnt != 100000 {
		t.Errorf("%d samples in buckets, want 100000", cnt)
	}
}

// A capture without a single sample still gets a page (tables, notes, an
// empty chart), not an error.
func TestWriteWithoutSamples(t *testing.T) {
	out, rep, p, capPath := emptyReport(t)
	if err := Write(out, rep, p, Options{Capture: capPath}); !errors.Is(err, outfile.ErrRefused) {
		t.Errorf("writing over an existing report.html without Overwrite: %v, want a refusal", err)
	}
	if err := Write(out, rep, NewPyramid(Budget{}), Options{}); err == nil {
		t.Error("a pyramid that saw no analysis: no error")
	}
}

// emptyReport writes report.html for a capture with a header and no sample.
func emptyReport(t testing.TB) (out string, rep *analysis.Report, p *Pyramid, capPath string) {
	t.Helper()
	dir := t.TempDir()
	capPath = filepath.Join(dir, "empty.iwcap")
	sc := synthcap.Review(time.Second, 1000, 0)
	w, err := capture.Create(capPath, sc.Header(), capture.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	opts := analysis.DefaultOptions()
	p = NewPyramidFor(capPath, Budget{})
	opts.Samples = p
	rep, err = analysis.Analyze(capPath, opts)
	if err != nil {
		t.Fatal(err)
	}
	out = filepath.Join(dir, FileName)
	if err := Write(out, rep, p, Options{Capture: capPath}); err != nil {
		t.Fatal(err)
	}
	return out, rep, p, capPath
}

// A long gap between two runs does not allocate its empty buckets at the
// fine width: the width grows first, and memory stays within the budget.
func TestPyramidLongGap(t *testing.T) {
	p := NewPyramid(Budget{ShortBytes: 20000, LongBytes: 40000, ShortS: 1, LongS: 2})
	p.Begin(analysis.Clock{NsPerSample: 1e5}, 0)
	w := make([]float64, 1000)
	p.DriveSamples(1, 0, 1e-4, w)
	p.DriveSamples(1, 36000, 1e-4, w) // ten hours later
	limit := 40000 / bytesPerBucket
	if n := len(p.drives[1].n); n > limit {
		t.Errorf("%d buckets after a 10 h gap, budget %d", n, limit)
	}
	var cnt uint64
	for _, c := range p.drives[1].n {
		cnt += uint64(c)
	}
	if cnt != 2000 {
		t.Errorf("%d samples kept, want 2000", cnt)
	}
}

// The peak window holds every sample from rawBefore before the highest
// sample to rawAfter after it, across run boundaries.
func TestPeakWindow(t *testing.T) {
	p := NewPyramid(Budget{})
	p.Begin(analysis.Clock{NsPerSample: 1e5}, 0)
	const n, spike = 5000, 1234
	for r := 0; r < n/50; r++ {
		w := make([]float64, 50)
		for j := range w {
			g := r*50 + j
			w[j] = 0.4 + 1e-3*float64(g%7)
			if g == spike {
				w[j] = 2.5
			}
			if g == 4000 {
				w[j] = 1.0 // lower than the spike: no new window
			}
		}
		p.DriveSamples(1, float64(r*50)*1e-4, 1e-4, w)
	}
	pk := p.peaks[1]
	if pk == nil || pk.max != 2.5 {
		t.Fatalf("peak %+v", pk)
	}
	before, after := int(math.Ceil(rawBefore/1e-4)), int(math.Ceil(rawAfter/1e-4))
	if len(pk.seg.W) != before+1+after || pk.seg.W[before] != 2.5 {
		t.Errorf("window of %d samples with %v at %d; want %d with the spike at %d", len(pk.seg.W), pk.seg.W[min(before, len(pk.seg.W)-1)], before, before+1+after, before)
	}
	if want := float64(spike-before) * 1e-4; math.Abs(pk.seg.T-want) > 1e-9 {
		t.Errorf("window starts at %.6f s, want %.6f", pk.seg.T, want)
	}
	for i, x := range pk.seg.W {
		g := spike - before + i
		v := float32(0.4 + 1e-3*float64(g%7))
		if g == spike {
			v = 2.5
		}
		if x != v {
			t.Fatalf("sample %d of the window (global %d) is %v, want %v", i, g, x, v)
		}
	}
}

// CompareBudget: two runs share one report's buckets (each run's are at
// most half of its own report's) but keep every full-resolution window
// their own reports have; three runs keep the windows to twice one
// report's share in all.
func TestShareBudget(t *testing.T) {
	sc := synthcap.Review(4*time.Minute, 5000, 0)
	capPath := filepath.Join(t.TempDir(), "run.iwcap")
	if err := synthcap.Write(capPath, sc); err != nil {
		t.Fatal(err)
	}
	// One report's budget just holds every pin window: 12 edges (3 cycles,
	// 2 drives) of 0.14 s at 5 kS/s, 8,388 samples, within 15 % of it
	// (9,000 samples).
	one := Budget{ShortBytes: 300000, LongBytes: 600000, ShortS: 600, LongS: 3600}
	pyr := func(b Budget) *Pyramid {
		opts := analysis.DefaultOptions()
		p := NewPyramidFor(capPath, b)
		opts.Samples = p
		if _, err := analysis.Analyze(capPath, opts); err != nil {
			t.Fatal(err)
		}
		p.finish()
		return p
	}
	buckets := func(p *Pyramid) int {
		n := 0
		for _, l := range p.drives {
			n += len(l.n)
		}
		return n
	}
	own, two, three := pyr(one), pyr(shareBudget(one, 2)), pyr(shareBudget(one, 3))
	if own.rawDropped != 0 || own.rawN < 8000 {
		t.Fatalf("one report: %d samples in windows, %d windows dropped: the test's budget does not hold them all", own.rawN, own.rawDropped)
	}
	if two.rawDropped != 0 || two.rawN != own.rawN {
		t.Errorf("two runs: %d samples in windows (%d dropped), the run's own report %d", two.rawN, two.rawDropped, own.rawN)
	}
	if b2, b1 := buckets(two), buckets(own); b2 > b1/2+1 {
		t.Errorf("two runs: %d buckets per run, one report %d: not shared", b2, b1)
	}
	if float64(3*three.rawN) > 2*rawShare*float64(one.ShortBytes)/5+3*700 {
		t.Errorf("three runs: %d samples in windows each, more than twice one report's share in all", three.rawN)
	}
	if three.rawDropped == 0 {
		t.Errorf("three runs: no window dropped, so the test does not bind the shared limit")
	}
}

// TestBucketStats: finiteStats and railStats, two chains for the least
// and the greatest, give the bits of the sample-by-sample loops they
// replaced — NaN, ±Inf, −0 and +0 among the readings, 0 to 40 of them.
func TestBucketStats(t *testing.T) {
	rng := rand.New(rand.NewPCG(21, 22))
	odd := []float64{math.NaN(), math.Inf(1), math.Inf(-1), math.Copysign(0, -1), 0, 1e300, -1e300}
	same := func(a, b float64) bool { return math.Float64bits(a) == math.Float64bits(b) }
	for trial := range 5000 {
		n := rng.IntN(41)
		w := make([]float64, n)
		vs, is := make([]units.Volts, n), make([]units.Amps, n)
		for j := range n {
			w[j] = rng.NormFloat64()
			vs[j], is[j] = units.Volts(5+rng.NormFloat64()), units.Amps(rng.NormFloat64())
			if rng.IntN(6) == 0 {
				w[j] = odd[rng.IntN(len(odd))]
			}
			if rng.IntN(6) == 0 {
				is[j] = units.Amps(odd[rng.IntN(len(odd))])
			}
		}
		mn, mx, sum, c := math.Inf(1), math.Inf(-1), 0.0, uint32(0)
		for _, x := range w {
			if math.IsNaN(x) || math.IsInf(x, 0) {
				continue
			}
			mn, mx, sum, c = min(mn, x), max(mx, x), sum+x, c+1
		}
		gmn, gmx, gsum, gc := finiteStats(w)
		if !same(gmn, mn) || !same(gmx, mx) || !same(gsum, sum) || gc != c {
			t.Fatalf("trial %d: finiteStats %v %v %v %d, sample by sample %v %v %v %d", trial, gmn, gmx, gsum, gc, mn, mx, sum, c)
		}
		mn, mx, sw, si, c := math.Inf(1), math.Inf(-1), 0.0, 0.0, uint32(0)
		for j, v := range vs {
			pw, i := float64(units.Power(v, is[j])), float64(is[j])
			if math.IsNaN(pw) || math.IsInf(pw, 0) {
				continue
			}
			mn, mx, sw, si, c = min(mn, pw), max(mx, pw), sw+pw, si+i, c+1
		}
		rmn, rmx, rsw, rsi, rc := railStats(vs, is)
		if !same(rmn, mn) || !same(rmx, mx) || !same(rsw, sw) || !same(rsi, si) || rc != c {
			t.Fatalf("trial %d: railStats %v %v %v %v %d, sample by sample %v %v %v %v %d", trial, rmn, rmx, rsw, rsi, rc, mn, mx, sw, si, c)
		}
	}
}

// refRuns is runs as it was before a stretch's bucket was carried over
// from the one before: found afresh at each stretch's first sample.
func refRuns(t, dt, w float64, n int, f func(k int64, j0, j1 int)) {
	inv := 1 / w
	idx := func(j int) int64 { return int64(math.Floor((t + dt*float64(j)) * inv)) }
	for j := 0; j < n; {
		k := idx(j)
		e := int(math.Ceil((float64(k+1)*w - t) / dt))
		e = min(max(e, j+1), n)
		for e > j+1 && idx(e-1) > k {
			e--
		}
		for e < n && idx(e) == k {
			e++
		}
		f(k, j, e)
		j = e
	}
}

// TestRunsCarriesBucket: runs gives the stretches the reference gives, and
// each sample's stretch is its own bucket — over start times, periods and
// widths on and off a grid, negative times among them.
func TestRunsCarriesBucket(t *testing.T) {
	rng := rand.New(rand.NewPCG(23, 24))
	type stretch struct {
		k      int64
		j0, j1 int
	}
	for trial := range 3000 {
		dt := []float64{1e-4, 1e-4 * (1 + 1e-9), 3.3e-5, 0.1}[trial%4]
		w := dt * float64(int(1)<<rng.IntN(12)) * []float64{1, 1, 1.0000001, 0.7}[rng.IntN(4)]
		t0 := (rng.Float64() - 0.3) * 100
		n := rng.IntN(3000)
		var got, want []stretch
		runs(t0, dt, w, n, func(k int64, j0, j1 int) { got = append(got, stretch{k, j0, j1}) })
		refRuns(t0, dt, w, n, func(k int64, j0, j1 int) { want = append(want, stretch{k, j0, j1}) })
		if !slices.Equal(got, want) {
			t.Fatalf("trial %d (t %v dt %v w %v n %d): %d stretches, the reference %d", trial, t0, dt, w, n, len(got), len(want))
		}
		for _, s := range got {
			for j := s.j0; j < s.j1; j++ {
				if k := int64(math.Floor((t0 + dt*float64(j)) * (1 / w))); k != s.k {
					t.Fatalf("trial %d: sample %d in bucket %d's stretch, its own %d", trial, j, s.k, k)
				}
			}
		}
	}
}
