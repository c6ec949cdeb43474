package judge

import (
	"math"
	"math/rand/v2"
	"sort"

	"github.com/idlewatt/idlewatt/internal/stat"
)

// Step is a two-segment least-squares fit to a run of samples: the samples
// before K are at level Before, from K on at After.
type Step struct {
	K             int     // index of the first sample of the second segment
	Before, After float64 // segment means
	// Sigma is the noise σ of one sample: the plateau of the robust
	// variogram of the samples (stat.Noise), which neither the step nor a
	// correlation between neighbouring samples makes too small or too large.
	Sigma float64
	// U95 is the 95 % half-width of K in samples from the noise: the 95th
	// percentile of |K* − K| over refits of the fitted step plus noise
	// resampled from the fit's own residuals (see bootstrap). Where inside
	// its sample the change fell is not in it (withGrid adds the grid).
	U95 float64
	// known: Before was given (FitStepFrom), not fitted.
	known bool
	// resid are the residuals of the longer segment about its level, the
	// noise the bootstrap resamples, in blocks of block samples; nm is
	// their noise model; beforeSE the standard error of a known Before.
	resid    []float64
	block    int
	nm       stat.Noise
	beforeSE float64
	// pole is the sensor's (sensorFit; 0: none, the step is sharp): the
	// bootstrap refits the step as the sensor saw it.
	pole float64
}

// FitStepFrom is FitStep with the level before the change known (the
// pre-cycle power, measured over a longer stretch before w): only the
// change and the level after it are fitted. A change placed late then
// costs every sample before it that is not at the known level, so a small
// step under heavy noise is located where a free two-segment fit, whose
// first segment may be a few milliseconds long, can put it anywhere.
func FitStepFrom(w []float64, before float64, lo, hi int) (s Step, ok bool) {
	return fitStepFrom(w, before, 0, lo, hi, bootstrapRuns, 0)
}

// fitStepFrom is FitStepFrom with the known level's standard error and
// runs bootstrap refits of the step through a sensor of pole pole.
func fitStepFrom(w []float64, before, beforeSE float64, lo, hi, runs int, pole float64) (s Step, ok bool) {
	n := len(w)
	if n < 2 {
		return Step{}, false
	}
	lo, hi = max(lo, 1), min(hi, n-1)
	if lo > hi {
		return Step{}, false
	}
	cum := make([]float64, n+1)
	for i, x := range w {
		cum[i+1] = cum[i] + x
	}
	s.known, s.pole = true, pole
	s.K = bestSplitFrom(cum, before, lo, hi)
	s.Before, s.beforeSE = before, beforeSE
	s.After = (cum[n] - cum[s.K]) / float64(n-s.K)
	s.noise(w)
	s.U95 = math.Max(s.bootstrap(n, lo, hi, runs), s.levelCI(cum, lo, hi))
	return s, true
}

// bestSplitFrom returns the k in [lo, hi] that minimises the squared error
// of w[:k] about the known level b plus that of w[k:] about its mean: it
// maximises 2b·S(k) − k·b² + (T−S(k))²/(n−k).
func bestSplitFrom(cum []float64, b float64, lo, hi int) int {
	n := len(cum) - 1
	tot := cum[n]
	best, bk := math.Inf(-1), lo
	for k := lo; k <= hi; k++ {
		a := cum[k]
		v := 2*b*a - float64(k)*b*b + (tot-a)*(tot-a)/float64(n-k)
		if v > best {
			best, bk = v, k
		}
	}
	return bk
}

// FitStep fits a step to w, the change falling in [lo, hi] (clamped to
// 1…len(w)-1). It needs at least two samples; ok is false otherwise.
func FitStep(w []float64, lo, hi int) (s Step, ok bool) { return fitStep(w, lo, hi, 0) }

// fitStep is FitStep whose bootstrap refits the step through a sensor of
// pole pole.
func fitStep(w []float64, lo, hi int, pole float64) (s Step, ok bool) {
	n := len(w)
	if n < 2 {
		return Step{}, false
	}
	lo, hi = max(lo, 1), min(hi, n-1)
	if lo > hi {
		return Step{}, false
	}
	cum := make([]float64, n+1)
	for i, x := range w {
		cum[i+1] = cum[i] + x
	}
	s.pole = pole
	s.K = bestSplit(cum, lo, hi)
	s.Before = cum[s.K] / float64(s.K)
	s.After = (cum[n] - cum[s.K]) / float64(n-s.K)
	s.noise(w)
	s.U95 = math.Max(s.bootstrap(n, lo, hi, bootstrapRuns), s.levelCI(cum, lo, hi))
	return s, true
}

// levelCI is the farthest displacement from K, in samples, of a change
// point the samples do not rule out, by inverting a test of levels: a
// change at K' < K would put the samples [K', K) — which the fit gave the
// level before — at the level after, and it is ruled out when their mean
// stands more than 1.96 standard deviations beyond that level towards the
// level before (and alike for K' > K). The standard deviation is the
// noise model's for a mean of that many samples (correlation included)
// with the level's own standard error. The bootstrap refits the fitted
// step, so a change that noise put late is found late again: under AR(1)
// noise of 4 ms, a 6 mW step under 8 mW σ was fitted 104 ± 47 ms after a
// pin at which the drive entered; its samples over those 104 ms were
// within the noise of the floor, which this interval sees.
func (s *Step) levelCI(cum []float64, lo, hi int) float64 {
	n := len(cum) - 1
	d := s.Before - s.After
	if d == 0 || !(s.Sigma > 0) || n < 2 {
		return 0
	}
	sgn := 1.0
	if d < 0 {
		sgn = -1
	}
	span := max(s.K-lo, hi-s.K, 1)
	mv := meanVars(s.nm, s.Sigma, max(span, n-s.K, s.K)+1)
	empiricalMeanVars(mv, s.resid)
	seA2 := mv[n-s.K]
	seB2 := s.beforeSE * s.beforeSE
	if !s.known {
		seB2 = mv[s.K]
	}
	// Not 1.96: the fit picked K as the best of every split, so the
	// samples it gave the wrong level stand out by more than one test at
	// a fixed split would allow; the supremum of a standardised running
	// mean over the search is nearer 3 (z = 1.96 held 92.4 % of 498 cycles
	// of TestDevSlpIntervalsUnderMeterNoise, 3 held 95.8 %).
	const z = levelCIZ
	far := 0
	for k := s.K - 1; k >= max(lo, 0); k-- {
		m := s.K - k
		mean := (cum[s.K] - cum[k]) / float64(m)
		if sgn*(mean-s.After) <= z*math.Sqrt(mv[m]+seA2) {
			far = m
		}
	}
	for k := s.K + 1; k <= min(hi, n); k++ {
		m := k - s.K
		mean := (cum[k] - cum[s.K]) / float64(m)
		if sgn*(s.Before-mean) <= z*math.Sqrt(mv[m]+seB2) {
			far = max(far, m)
		}
	}
	return float64(far)
}

// levelCIZ is levelCI's critical value (see there).
const levelCIZ = 3

// empiricalMeanVars raises mv[m] to the variance of the means of m
// consecutive residuals where the residuals measure it (m up to an eighth
// of them, at m = 1, 2, 4, …, interpolated log-linearly between): noise
// the model's autocorrelation misses — mains hum, whose mean over half a
// period does not shrink as 1/m — widens the interval as it should.
func empiricalMeanVars(mv []float64, resid []float64) {
	n := len(resid)
	if n < 16 {
		return
	}
	cum := make([]float64, n+1)
	for i, x := range resid {
		cum[i+1] = cum[i] + x
	}
	var ms []int
	var vs []float64
	for m := 1; m <= n/8; m *= 2 {
		var s, ss float64
		k := n - m + 1
		for i := 0; i < k; i++ {
			x := (cum[i+m] - cum[i]) / float64(m)
			s += x
			ss += x * x
		}
		mean := s / float64(k)
		ms, vs = append(ms, m), append(vs, math.Max(0, ss/float64(k)-mean*mean))
	}
	for j := range ms {
		hi := len(mv) - 1
		if j+1 < len(ms) {
			hi = min(hi, ms[j+1])
		} else {
			hi = min(hi, ms[j])
		}
		for m := ms[j]; m <= hi; m++ {
			v := vs[j]
			if j+1 < len(ms) && vs[j] > 0 && vs[j+1] > 0 {
				f := math.Log(float64(m)/float64(ms[j])) / math.Log(float64(ms[j+1])/float64(ms[j]))
				v = vs[j] * math.Pow(vs[j+1]/vs[j], f)
			}
			mv[m] = math.Max(mv[m], v)
		}
	}
}

// meanVars is the variance of the noise of a mean of m consecutive
// samples, for m < size, from the noise model nm (σ sigma when the model
// has none): σ²/m · (1 + 2 Σ_{k<m} (1 − k/m) ρ_k), by prefix sums of ρ_k
// and k·ρ_k.
func meanVars(nm stat.Noise, sigma float64, size int) []float64 {
	out := make([]float64, size)
	s2 := sigma * sigma
	var s1, sk float64
	for m := 1; m < size; m++ {
		if m > 1 && nm.Ok {
			r := nm.Rho(m - 1)
			s1 += r
			sk += float64(m-1) * r
		}
		f := math.Max(1, 1+2*(s1-sk/float64(m)))
		out[m] = s2 * f / float64(m)
	}
	if size > 0 {
		out[0] = s2
	}
	return out
}

// noise measures the fit's noise: σ, and the residuals of the longer
// segment about its level — the noise the bootstrap resamples — in blocks
// twice the correlation length (at least 1). The longer segment only: the
// shorter one may hold what follows the change (a wake spike after the
// rise, a burst), which is no noise of the level it is fitted with.
func (s *Step) noise(w []float64) {
	seg, lvl := w[s.K:], s.After
	if s.K > len(w)-s.K {
		seg, lvl = w[:s.K], s.Before
	}
	nm := stat.NoiseOf(seg)
	s.Sigma, s.nm = nm.Sigma, nm
	if !nm.Ok {
		s.Sigma = stat.DiffSigma(w)
	}
	if len(seg) < 2 {
		return
	}
	s.resid = make([]float64, len(seg))
	for i, x := range seg {
		s.resid[i] = x - lvl
	}
	s.block = min(max(1, 2*nm.CorrLen), len(seg))
}

// bestSplit returns the k in [lo, hi] that minimises the two segments'
// squared error: it maximises S(k)²/k + (T−S(k))²/(n−k).
func bestSplit(cum []float64, lo, hi int) int {
	n := len(cum) - 1
	tot := cum[n]
	best, bk := math.Inf(-1), lo
	for k := lo; k <= hi; k++ {
		a := cum[k]
		v := a*a/float64(k) + (tot-a)*(tot-a)/float64(n-k)
		if v > best {
			best, bk = v, k
		}
	}
	return bk
}

// bootstrapRuns is the number of synthetic steps refitted per estimate;
// jointBootstrapRuns for the joint entry fit over a drive's cycles (one
// fit per drive, and the interval that decides whether more cycles are
// run: at 200 refits one drive's joint entry read ±0.8 and ±1.1 ms in two
// runs; 1000 everywhere doubled the report time of a capture with 24
// cycles, 2.9 → 6.2 s).
const (
	bootstrapRuns      = 200
	jointBootstrapRuns = 1000
)

// bootstrap refits the fitted step with noise resampled from the
// residuals of its longer segment by the circular block bootstrap (Politis
// & Romano 1992): blocks of twice the noise's correlation length, so
// correlated noise (AR(1), 1/f, hum) moves the refits as it moves the fit.
// Gaussian white noise of σ, as before, located a change under AR(1) noise
// of a 10 ms correlation time far too well: the interval held the truth in
// a fraction of the cycles. The location error of
// a well-resolved step depends only on the samples near it, so each run
// first refits a window of ±400 samples around K. When the refits' 95th
// percentile reaches half of that window the step is too small for its
// noise to be located there — the window, not the data, would bound the
// interval (a 4.5 mW step under 15 mW σ came out "1557 ± 40 ms" for a
// drive that entered at once) — so the bootstrap is redone over the whole
// search range. The generator is seeded from the fit, so the same data
// give the same interval.
func (s Step) bootstrap(n, lo, hi, runs int) float64 {
	if s.Sigma == 0 || len(s.resid) == 0 {
		return 0
	}
	q := s.bootstrapWindow(n, lo, hi, 400, runs)
	if q > 200 && (s.K-400 > lo || s.K+400 < hi) {
		q = s.bootstrapWindow(n, lo, hi, n, runs)
	}
	return q
}

// bootstrapWindow is the 95th percentile of |K* − K| over refits of the
// samples within ±half of K.
func (s Step) bootstrapWindow(n, lo, hi, half, runs int) float64 {
	a, b := max(0, s.K-half), min(n, s.K+half)
	m := b - a
	k0 := s.K - a
	klo, khi := max(1, lo-a), min(m-1, hi-a)
	rng := rand.New(rand.NewPCG(uint64(s.K)*0x9e3779b97f4a7c15, math.Float64bits(s.Sigma)))
	w := make([]float64, m)
	cum := make([]float64, m+1)
	// Through a sensor the step is an exponential approach, located less
	// well than a sharp one under the same noise: the refits are of that
	// shape, their displacement from where the same fit puts it without
	// noise (sensorEdge's delay is corrected apart).
	var shape []float64
	ref := k0
	if s.pole > 0 {
		shape = filteredStep(s.pole, m, k0)
		for i := range shape {
			w[i] = s.Before + (s.After-s.Before)*shape[i]
			cum[i+1] = cum[i] + w[i]
		}
		if s.known {
			ref = bestSplitFrom(cum, s.Before, klo, khi)
		} else {
			ref = bestSplit(cum, klo, khi)
		}
	}
	errs := make([]float64, runs)
	nr := len(s.resid)
	for r := range errs {
		j := 0
		for i := range w {
			if i%s.block == 0 {
				j = rng.IntN(nr)
			}
			lvl := s.Before
			switch {
			case shape != nil:
				lvl += (s.After - s.Before) * shape[i]
			case i >= k0:
				lvl = s.After
			}
			w[i] = lvl + s.resid[j]
			if j++; j == nr {
				j = 0
			}
			cum[i+1] = cum[i] + w[i]
		}
		k := 0
		if s.known {
			k = bestSplitFrom(cum, s.Before, klo, khi)
		} else {
			k = bestSplit(cum, klo, khi)
		}
		errs[r] = math.Abs(float64(k - ref))
	}
	sort.Float64s(errs)
	return errs[int(0.95*float64(len(errs)))-1]
}

// MeanU is a mean with its standard uncertainty.
type MeanU struct {
	Mean float64
	U    float64 // standard uncertainty of the mean
	N    int     // samples
}

// MeanBatches is the mean of w with its standard uncertainty by batch
// means: the samples are cut into batches of batch samples and the
// uncertainty is the standard deviation of the batch means over √batches,
// which holds for correlated noise too. With fewer than 8 batches it falls
// back to s/√n. The mean is unbiased under dithering noise, where the
// median of quantised readings is not.
func MeanBatches(w []float64, batch int) MeanU {
	n := len(w)
	if n == 0 {
		return MeanU{Mean: math.NaN(), U: math.NaN()}
	}
	var sum float64
	for _, x := range w {
		sum += x
	}
	mean := sum / float64(n)
	batch = max(batch, 1)
	nb := n / batch
	if nb < 8 {
		if n < 2 {
			return MeanU{Mean: mean, U: math.NaN(), N: n}
		}
		var ss float64
		for _, x := range w {
			ss += (x - mean) * (x - mean)
		}
		return MeanU{Mean: mean, U: math.Sqrt(ss/float64(n-1)) / math.Sqrt(float64(n)), N: n}
	}
	bm := make([]float64, nb)
	for i := range bm {
		var s float64
		for _, x := range w[i*batch : (i+1)*batch] {
			s += x
		}
		bm[i] = s / float64(batch)
	}
	var bmean, ss float64
	for _, x := range bm {
		bmean += x
	}
	bmean /= float64(nb)
	for _, x := range bm {
		ss += (x - bmean) * (x - bmean)
	}
	sd := math.Sqrt(ss / float64(nb-1))
	return MeanU{Mean: mean, U: sd / math.Sqrt(float64(nb)), N: n}
}

// withGrid is the 95 % half-width of a latency between a pin edge and a
// change point (entry, power rise), in samples, from the step fit's
// displacement u95 (its bootstrap's) and the sample grid twice over: where
// within its sample the change fell, and the pin stamp's quantisation (the
// meter stamps the pin's edge with the nearest sample, so the edge lies
// anywhere within ±½ period of it) — each uniform over one period
// (standard uncertainty 1/√12 of a period), combined with u95 ÷ 1.96 and
// expanded again by 1.96: at least ±0.80 of a period. Without the stamp's
// term an entry at the pin stated ±0.5 samples for a difference of two
// sample-quantised times; without both the power rise, which had neither,
// held the truth in 54 of 144 cycles (docs/analysis.md).
func withGrid(u95 float64) float64 {
	const z = stat.Z975
	return z * math.Sqrt(u95*u95/(z*z)+2.0/12)
}
