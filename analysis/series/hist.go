package series

import (
	"fmt"
	"math"
)

// Hist counts power values into fixed bins as they stream past, so a
// histogram or CDF of an hour of samples costs one counter per bin. Bins are
// evenly spaced in watts, or in log10(watts) when Log is set, which suits a
// drive that spends time at both mW (DevSlp) and W (active). Values below Lo
// or above Hi are counted as under/overflow and still weigh in the totals.
type Hist struct {
	lo, hi      float64
	log         bool
	a, b        float64 // bin = floor(a·x + b), x = w or log10(w)
	counts      []float64
	under, over float64
}

// NewHist returns an empty histogram of bins bins over [lo, hi] watts.
func NewHist(lo, hi float64, bins int, log bool) (*Hist, error) {
	if bins < 1 || bins > 1<<20 || !finite(lo) || !finite(hi) || hi <= lo || (log && lo <= 0) {
		return nil, fmt.Errorf("series: histogram [%g, %g] W with %d bins (log %v): want 0 < bins ≤ 2^20, lo < hi, lo > 0 if log", lo, hi, bins, log)
	}
	h := &Hist{lo: lo, hi: hi, log: log, counts: make([]float64, bins)}
	x0, x1 := lo, hi
	if log {
		x0, x1 = math.Log10(lo), math.Log10(hi)
	}
	h.a = float64(bins) / (x1 - x0)
	h.b = -x0 * h.a
	return h, nil
}

// Add counts one value. NaN is ignored (it is a gap, not a power).
func (h *Hist) Add(w float64) { h.AddN(w, 1) }

// AddN counts a value n times, e.g. a summary point's mean for its samples.
func (h *Hist) AddN(w, n float64) {
	if w != w || !(n > 0) || math.IsInf(n, 0) {
		return
	}
	switch {
	case w < h.lo:
		h.under += n
		return
	case w > h.hi:
		h.over += n
		return
	}
	x := w
	if h.log {
		x = math.Log10(w)
	}
	i := int(h.a*x + h.b)
	if i >= len(h.counts) { // w == hi
		i = len(h.counts) - 1
	}
	if i < 0 {
		i = 0
	}
	h.counts[i] += n
}

// Log reports whether the bins are evenly spaced in log10(watts).
func (h *Hist) Log() bool { return h.log }

// Hi is the top of the binned range (W).
func (h *Hist) Hi() float64 { return h.hi }

// Under is the weight counted below the binned range.
func (h *Hist) Under() float64 { return h.under }

// Counts is the weight per bin, bin i spanning Edge(i) to Edge(i+1). The
// slice is the histogram's own: read it, do not keep or change it.
func (h *Hist) Counts() []float64 { return h.counts }

// Occupied returns the first and last bins holding any weight.
func (h *Hist) Occupied() (first, last int, ok bool) {
	first, last = -1, -1
	for i, c := range h.counts {
		if c > 0 {
			if first < 0 {
				first = i
			}
			last = i
		}
	}
	return first, last, first >= 0
}

// Total returns the weight counted, including under- and overflow.
func (h *Hist) Total() float64 {
	t := h.under + h.over
	for _, c := range h.counts {
		t += c
	}
	return t
}

// Edge returns the lower edge of bin i in watts (i = len gives hi).
func (h *Hist) Edge(i int) float64 {
	x := (float64(i) - h.b) / h.a
	if h.log {
		return math.Pow(10, x)
	}
	return x
}

// Quantile returns the value (W) below which fraction q of the weight lies,
// interpolating inside a bin; NaN when the histogram is empty or the
// quantile falls in the under/overflow.
func (h *Hist) Quantile(q float64) float64 {
	t := h.Total()
	if t == 0 || !(q >= 0 && q <= 1) {
		return math.NaN()
	}
	want := q * t
	acc := h.under
	if want < acc {
		return math.NaN()
	}
	for i, c := range h.counts {
		if c > 0 && acc+c >= want {
			return h.Edge(i) + (want-acc)/c*(h.Edge(i+1)-h.Edge(i))
		}
		acc += c
	}
	if h.over > 0 {
		return math.NaN()
	}
	return h.hi
}

// Distribution is one drive's histogram for Histogram and CDF.
type Distribution struct {
	Name string
	Hist *Hist
	// P50 and P99 (W), when > 0, are the quantiles the CDF marks and its
	// legend prints: the report's own figures, printed as report.md prints
	// them (4 decimals in W, 0.1 mW in mW), so the chart shows the same
	// numbers. Zero or NaN: not given, neither printed nor marked (the
	// chart never estimates its own: one number, one place).
	P50, P99 float64
}

func finite(x float64) bool { return !math.IsNaN(x) && !math.IsInf(x, 0) }
