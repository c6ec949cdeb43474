package states

import (
	"math"
	"math/rand/v2"
	"sort"
)

// Step is a two-segment least-squares fit to a run of samples: the samples
// before K are at level Before, from K on at After.
type Step struct {
	K             int     // index of the first sample of the second segment
	Before, After float64 // segment means
	Sigma         float64 // noise σ, robust (MAD of first differences)
	// U95 is the 95 % half-width of K in samples: the 95th percentile of
	// |K* − K| over a parametric bootstrap of the fitted step with Gaussian
	// noise of σ, combined in quadrature with the ±½-sample uncertainty of
	// where inside a sample the change fell.
	U95 float64
	// known: Before was given (FitStepFrom), not fitted.
	known bool
}

// FitStepFrom is FitStep with the level before the change known (the
// pre-cycle power, measured over a longer stretch before w): only the
// change and the level after it are fitted. A change placed late then
// costs every sample before it that is not at the known level, so a small
// step under heavy noise is located where a free two-segment fit, whose
// first segment may be a few milliseconds long, can put it anywhere.
func FitStepFrom(w []float64, before float64, lo, hi int) (s Step, ok bool) {
	return fitStepFrom(w, before, lo, hi, bootstrapRuns)
}

// fitStepFrom is FitStepFrom with runs bootstrap refits.
func fitStepFrom(w []float64, before float64, lo, hi, runs int) (s Step, ok bool) {
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
	s.known = true
	s.K = bestSplitFrom(cum, before, lo, hi)
	s.Before = before
	s.After = (cum[n] - cum[s.K]) / float64(n-s.K)
	s.Sigma = robustSigma(w)
	s.U95 = s.bootstrap(n, lo, hi, runs)
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
func FitStep(w []float64, lo, hi int) (s Step, ok bool) {
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
	s.K = bestSplit(cum, lo, hi)
	s.Before = cum[s.K] / float64(s.K)
	s.After = (cum[n] - cum[s.K]) / float64(n-s.K)
	s.Sigma = robustSigma(w)
	s.U95 = s.bootstrap(n, lo, hi, bootstrapRuns)
	return s, true
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

// robustSigma estimates the noise σ from first differences (a step or a
// burst moves only a few of them): MAD / 0.6745 / √2.
func robustSigma(w []float64) float64 {
	if len(w) < 3 {
		return 0
	}
	d := make([]float64, len(w)-1)
	for i := range d {
		d[i] = math.Abs(w[i+1] - w[i])
	}
	sort.Float64s(d)
	return d[len(d)/2] / 0.6745 / math.Sqrt2
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

// bootstrap refits the fitted step with fresh noise. The location error of
// a well-resolved step depends only on the samples near it, so each run
// first refits a window of ±400 samples around K. When the refits' 95th
// percentile reaches half of that window the step is too small for its
// noise to be located there — the window, not the data, would bound the
// interval (a 4.5 mW step under 15 mW σ came out "1557 ± 40 ms" for a
// drive that entered at once) — so the bootstrap is redone over the whole
// search range. The generator is seeded from the fit, so the same data
// give the same interval.
func (s Step) bootstrap(n, lo, hi, runs int) float64 {
	quant := 0.5 // the change falls somewhere inside one sample
	if s.Sigma == 0 {
		return quant
	}
	q := s.bootstrapWindow(n, lo, hi, 400, runs)
	if q > 200 && (s.K-400 > lo || s.K+400 < hi) {
		q = s.bootstrapWindow(n, lo, hi, n, runs)
	}
	return math.Hypot(q, quant)
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
	errs := make([]float64, runs)
	for r := range errs {
		for i := range w {
			lvl := s.Before
			if i >= k0 {
				lvl = s.After
			}
			w[i] = lvl + s.Sigma*rng.NormFloat64()
			cum[i+1] = cum[i] + w[i]
		}
		k := 0
		if s.known {
			k = bestSplitFrom(cum, s.Before, klo, khi)
		} else {
			k = bestSplit(cum, klo, khi)
		}
		errs[r] = math.Abs(float64(k - k0))
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
