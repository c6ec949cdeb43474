package analysis

import "math"

// Histogram bins power values logarithmically: each power of two is split
// into 2^histSub bins, so a bin is at most 1/256 of its lower edge wide. Each
// bin keeps the first two moments of its values (about its lower edge, so
// without cancellation) as well as their count, so a quantile is read from
// the bin's mean and spread, not its centre (see Quantile): a bin holding
// one distinct value — a constant or quantised source — gives that value
// exactly, and any quantile is within one bin width (≤ 0.39 %) of the
// sample quantile. The bin index comes straight from the float's exponent
// and top mantissa bits, with no logarithm per sample. Values below
// 2^histMinExp W (≈ 60 nW), zero and negative ones (noise on an unloaded
// rail) share an underflow bin that reads as 0 W.
type Histogram struct {
	n     uint64
	under uint64
	over  uint64
	maxV  float64
	bins  []uint32  // allocated on first use
	sums  []float64 // per bin, Σ(x − lower edge); allocated with bins
	sqs   []float64 // per bin, Σ(x − lower edge)²
}

// binOffset returns x minus the lower edge of its bin: the mantissa bits
// below the bin index.
func binOffset(x float64, bits uint64) float64 {
	return x - math.Float64frombits(bits&^(1<<(52-histSub)-1))
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
	if h.bins[i] == math.MaxUint32 {
		// A bin this full would overflow; 4 G samples in 0.4 % of range is
		// more than an hour at 1 MS/s of a constant signal. Keep the count
		// approximately rather than wrap.
		return
	}
	h.bins[i]++
	d := binOffset(x, bits)
	h.sums[i] += d
	h.sqs[i] += d * d
}

func (h *Histogram) alloc() {
	if h.bins == nil {
		h.bins = make([]uint32, histBins)
		h.sums = make([]float64, histBins)
		h.sqs = make([]float64, histBins)
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
// taken as spread evenly over [m−a, m+a], the uniform distribution with
// their mean m and standard deviation s (a = √3·s), narrowed to stay inside
// the bin: a bin of one distinct value (s = 0) reads exactly that value, a
// bin filled evenly reads as plain interpolation. Either way the answer lies
// in the bin, so within one bin width of the sample quantile; QuantileIn
// also clamps it to the data's range.
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
			mo := math.Min(w, math.Max(0, h.sums[i]/float64(c))) // mean, from lo
			sd := math.Sqrt(math.Max(0, h.sqs[i]/float64(c)-mo*mo))
			a := math.Min(math.Sqrt(3)*sd, math.Min(mo, w-mo))
			return lo + mo - a + 2*a*(rank-cum+0.5)/float64(c)
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

// binMean returns the mean of bin i's values, or its centre when empty.
func (h *Histogram) binMean(i int) float64 {
	if h.bins[i] == 0 {
		lo, w := binLow(i)
		return lo + w/2
	}
	lo, _ := binLow(i)
	return lo + h.sums[i]/float64(h.bins[i])
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
		// Saturate as Add does rather than wrap.
		h.bins[i] = uint32(min(uint64(h.bins[i])+uint64(c), math.MaxUint32))
		h.sums[i] += o.sums[i]
		h.sqs[i] += o.sqs[i]
	}
}
