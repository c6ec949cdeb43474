package analysis

import (
	"math"
	"math/rand"
	"slices"
	"testing"
)

// sampleQ is the q-quantile of sorted xs at rank q·(n−1), as the order
// statistics below and above it.
func sampleQ(xs []float64, q float64) (lo, hi float64) {
	r := q * float64(len(xs)-1)
	return xs[int(math.Floor(r))], xs[int(math.Ceil(r))]
}

// TestHistogramQuantisedExact: values on a few ADC codes at least a bin
// apart (one code per bin) read back as one of the order statistics at the
// wanted rank, never a value between codes or outside the data. (Codes
// closer than a bin are within a bin width, TestHistogramContinuousWithinBin.)
func TestHistogramQuantisedExact(t *testing.T) {
	rng := rand.New(rand.NewSource(4))
	for trial := 0; trial < 50; trial++ {
		base := 0.01 + rng.Float64()*3
		lsb := base * (2 + 8*rng.Float64()) / (1 << histSub) // 2–10 bin widths
		var h Histogram
		var a acc
		xs := make([]float64, 5000)
		for i := range xs {
			xs[i] = (math.Round(base/lsb) + float64(rng.Intn(5))) * lsb
			h.Add(xs[i])
			a.add(xs[i])
		}
		slices.Sort(xs)
		for _, q := range []float64{0, 0.05, 0.25, 0.5, 0.75, 0.95, 0.99, 1} {
			got := h.QuantileIn(q, a.min, a.max)
			lo, hi := sampleQ(xs, q)
			if got != lo && got != hi {
				t.Fatalf("trial %d: q%g = %.9g, want the order statistic %.9g or %.9g", trial, q, got, lo, hi)
			}
		}
	}
}

// TestHistogramContinuousWithinBin: for continuous values a quantile is
// within one bin width of the sample quantile and inside [min, max].
func TestHistogramContinuousWithinBin(t *testing.T) {
	rng := rand.New(rand.NewSource(5))
	var h Histogram
	var a acc
	xs := make([]float64, 20000)
	for i := range xs {
		xs[i] = math.Exp(rng.NormFloat64()) * 0.3
		h.Add(xs[i])
		a.add(xs[i])
	}
	slices.Sort(xs)
	for q := 0.0; q <= 1; q += 0.01 {
		got := h.QuantileIn(q, a.min, a.max)
		lo, hi := sampleQ(xs, q)
		if got < a.min || got > a.max || got < lo*(1-1.0/(1<<histSub)) || got > hi*(1+1.0/(1<<histSub)) {
			t.Errorf("q%.2f = %.9g, sample %.9g–%.9g (data %.9g–%.9g)", q, got, lo, hi, a.min, a.max)
		}
	}
}

// TestHistogramMergeSame: merging two halves gives the histogram of the
// whole, lowest and highest values per bin included.
func TestHistogramMergeSame(t *testing.T) {
	rng := rand.New(rand.NewSource(6))
	var whole, h1, h2 Histogram
	for i := 0; i < 10000; i++ {
		x := 0.2 + 0.01*rng.NormFloat64()
		whole.Add(x)
		if i%3 == 0 {
			h1.Add(x)
		} else {
			h2.Add(x)
		}
	}
	h1.Merge(&h2)
	for i, c := range whole.bins {
		if h1.bins[i] != c || c > 0 && (h1.mins[i] != whole.mins[i] || h1.maxs[i] != whole.maxs[i]) {
			t.Fatalf("bin %d: merged %d [%v, %v], whole %d [%v, %v]", i, h1.bins[i], h1.mins[i], h1.maxs[i], c, whole.mins[i], whole.maxs[i])
		}
	}
}
