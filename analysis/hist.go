package analysis

import "math"

// Histogram bins power values logarithmically: each power of two is split
// into 2^histSub bins, so a bin is at most 1/256 of its lower edge wide. Each
// bin keeps the lowest and highest value it holds as well as their count,
// so a quantile is interpolated between the data in the bin, not across the
// bin (see Quantile): a bin holding one distinct value — a constant or
// quantised source — gives that value exactly, and any quantile is within
// one bin width (≤ 0.39 %) of the sample quantile and inside the data. The bin index comes straight from the float's exponent
// and top mantissa bits, with no logarithm per sample. Values below
// 2^histMinExp W (≈ 60 nW), zero and negative ones (noise on an unloaded
// rail) share an underflow bin that reads as 0 W.
type Histogram struct {
	n     uint64
	under uint64
	over  uint64
	maxV  float64
	bins  []uint32  // allocated on first use
	mins  []float64 // per bin, its lowest value (valid where bins > 0); allocated with bins
	maxs  []float64 // per bin, its highest value
}

const (
	histSub    = 8
	histMinExp = -24
	histMaxExp = 12 // 4096 W
	histBins   = (histMaxExp - histMinExp) << histSub
)

// Add counts x.
func (h *Histogram) Add(x float64) {
	h.n++
	bits := math.Float64bits(x)
	// See summarise, which inlines the same indexing for whole runs.
	e := uint(bits>>52) - (1023 + histMinExp)
	if e >= histMaxExp-histMinExp {
		h.addOut(x)
		return
	}
	h.alloc()
	i := e<<histSub | uint(bits>>(52-histSub))&(1<<histSub-1)
	c := h.bins[i]
	switch {
	case c == 0:
		h.mins[i], h.maxs[i] = x, x
	case x < h.mins[i]:
		h.mins[i] = x
	case x > h.maxs[i]:
		h.maxs[i] = x
	}
	if c == math.MaxUint32 {
		// A bin this full would overflow; 4 G samples in 0.4 % of range is
		// more than an hour at 1 MS/s of a constant signal. Keep the count
		// approximately rather than wrap.
		return
	}
	h.bins[i] = c + 1
}

func (h *Histogram) alloc() {
	if h.bins == nil {
		h.bins = make([]uint32, histBins)
		h.mins = make([]float64, histBins)
		h.maxs = make([]float64, histBins)
	}
}

// addOut files a value outside the binned range: below 2^histMinExp, zero,
// negative or NaN (underflow), or at least 2^histMaxExp (overflow). The
// caller counts it in n.
func (h *Histogram) addOut(x float64) {
	if !(x >= 1.0/(1<<-histMinExp)) { // also catches NaN
		h.under++
		return
	}
	h.over++
	h.maxV = math.Max(h.maxV, x)
}

// Count returns the number of values added.
func (h *Histogram) Count() uint64 { return h.n }

// binLow returns the lower edge of bin i and its width.
func binLow(i int) (lo, w float64) {
	e := i>>histSub + histMinExp
	m := i & (1<<histSub - 1)
	base := math.Ldexp(1, e)
	w = base / (1 << histSub)
	return base + float64(m)*w, w
}

// Quantile returns the q-quantile (0 ≤ q ≤ 1) of the values added, or NaN if
// none were. Within the bin holding the wanted rank, the bin's c values are
// taken as spread evenly from its lowest to its highest value (the first at
// the lowest, the last at the highest): a bin of one distinct value reads
// exactly that value, and the answer is within the bin's data, so within
// one bin width of the sample quantile. QuantileIn also clamps it to a
// range.
func (h *Histogram) Quantile(q float64) float64 {
	if h.n == 0 {
		return math.NaN()
	}
	q = math.Min(1, math.Max(0, q))
	rank := q * float64(h.n-1) // 0-based rank of the wanted value
	if rank < float64(h.under) {
		return 0
	}
	cum := float64(h.under)
	for i, c := range h.bins {
		if c == 0 {
			continue
		}
		if rank < cum+float64(c) {
			lo, hi := h.mins[i], h.maxs[i]
			if c == 1 || hi <= lo {
				return lo
			}
			f := math.Min(1, math.Max(0, (rank-cum)/float64(c-1)))
			return lo + (hi-lo)*f
		}
		cum += float64(c)
	}
	return h.maxV
}

// QuantileIn is Quantile clamped to [lo, hi], the range of the values added
// (which the histogram does not keep), so no quantile leaves the data.
func (h *Histogram) QuantileIn(q, lo, hi float64) float64 {
	v := h.Quantile(q)
	if math.IsNaN(v) || !(lo <= hi) {
		return v
	}
	return math.Min(hi, math.Max(lo, v))
}

// binMid returns the middle of bin i's values, or the bin's centre when
// empty.
func (h *Histogram) binMid(i int) float64 {
	if h.bins[i] == 0 {
		lo, w := binLow(i)
		return lo + w/2
	}
	return (h.mins[i] + h.maxs[i]) / 2
}

// Merge adds o's counts to h.
func (h *Histogram) Merge(o *Histogram) {
	h.n += o.n
	h.under += o.under
	h.over += o.over
	h.maxV = math.Max(h.maxV, o.maxV)
	if o.bins == nil {
		return
	}
	h.alloc()
	for i, c := range o.bins {
		if c == 0 {
			continue
		}
		if h.bins[i] == 0 {
			h.mins[i], h.maxs[i] = o.mins[i], o.maxs[i]
		} else {
			h.mins[i], h.maxs[i] = math.Min(h.mins[i], o.mins[i]), math.Max(h.maxs[i], o.maxs[i])
		}
		// Saturate as Add does rather than wrap.
		h.bins[i] = uint32(min(uint64(h.bins[i])+uint64(c), math.MaxUint32))
	}
}
