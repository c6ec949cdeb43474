package analysis

import "math"

// Histogram bins power values logarithmically: each power of two is split
// into 2^histSub bins, so a bin is at most 1/256 of its lower edge wide and a
// percentile read from it (interpolated within the bin) is within 0.4 % of
// the true sample value, 0.2 % when it falls mid-bin. The bin index comes
// straight from the float's exponent and top mantissa bits, with no logarithm
// per sample. Values below 2^histMinExp W (≈ 60 nW), zero and negative ones
// (noise on an unloaded rail) share an underflow bin that reads as 0 W.
type Histogram struct {
	n     uint64
	under uint64
	over  uint64
	maxV  float64
	bins  []uint32 // allocated on first use
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
	if h.bins == nil {
		h.bins = make([]uint32, histBins)
	}
	i := e<<histSub | uint(bits>>(52-histSub))&(1<<histSub-1)
	if h.bins[i] == math.MaxUint32 {
		// A bin this full would overflow; 4 G samples in 0.4 % of range is
		// more than an hour at 1 MS/s of a constant signal. Keep the count
		// approximately rather than wrap.
		return
	}
	h.bins[i]++
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
// none were.
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
			lo, w := binLow(i)
			return lo + w*(rank-cum+0.5)/float64(c)
		}
		cum += float64(c)
	}
	return h.maxV
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
	if h.bins == nil {
		h.bins = make([]uint32, histBins)
	}
	for i, c := range o.bins {
		// Saturate as Add does rather than wrap.
		h.bins[i] = uint32(min(uint64(h.bins[i])+uint64(c), math.MaxUint32))
	}
}
