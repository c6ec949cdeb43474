package stat

import (
	"math"
	"slices"
	"sort"
)

// MADScale turns a median absolute deviation into a standard deviation for
// gaussian data: 1/Φ⁻¹(3/4).
const MADScale = 1.482602218505602

// QuartileZ is Φ⁻¹(3/4), the upper quartile of the standard normal
// distribution: a half inter-quartile distance of gaussian data over it is
// σ (1/MADScale).
const QuartileZ = 0.6744897501960817

// Z975 is the 0.975 quantile of the standard normal distribution.
const Z975 = 1.959963984540054

// Median is the median of x (x is not changed); NaN when x is empty.
func Median(x []float64) float64 {
	if len(x) == 0 {
		return math.NaN()
	}
	s := slices.Clone(x)
	slices.Sort(s)
	return SortedQuantile(s, 0.5)
}

// SortedQuantile is the q-quantile of the sorted s, interpolated linearly
// between order statistics (s[0] at 0, s[n−1] at 1); NaN when s is empty.
func SortedQuantile(s []float64, q float64) float64 {
	if len(s) == 0 {
		return math.NaN()
	}
	r := q * float64(len(s)-1)
	i := int(r)
	if i+1 >= len(s) {
		return s[len(s)-1]
	}
	if i < 0 {
		return s[0]
	}
	return s[i] + (r-float64(i))*(s[i+1]-s[i])
}

// MAD is the robust standard deviation of x: MADScale × the median absolute
// deviation from the median. 0 for fewer than two values.
func MAD(x []float64) float64 {
	if len(x) < 2 {
		return 0
	}
	if !allFinite(x) {
		m := Median(x)
		d := make([]float64, len(x))
		for i, v := range x {
			d[i] = math.Abs(v - m)
		}
		slices.Sort(d)
		return MADScale * SortedQuantile(d, 0.5)
	}
	// Finite values: both medians by selection (MedianSelecting, O(n),
	// Median's value bit for bit) in one scratch buffer, not two sorted
	// copies. A zero median's sign, which the two may place differently,
	// does not reach |v − m|.
	d := floatScratches.Get(len(x))
	defer floatScratches.Put(d)
	copy(d, x)
	m := MedianSelecting(d)
	for i, v := range x {
		d[i] = math.Abs(v - m)
	}
	return MADScale * MedianSelecting(d)
}

// DiffSigma is the robust standard deviation of one value of x from its
// first differences: MADScale × the median |x[i+1] − x[i]| ÷ √2. A change of
// level makes one large difference, which the median ignores; but for
// correlated noise it is σ·√(1 − ρ₁), not σ (see Noise for the corrected
// figure). 0 for fewer than two values.
func DiffSigma(x []float64) float64 {
	if len(x) < 2 {
		return 0
	}
	d := make([]float64, len(x)-1)
	for i := range d {
		d[i] = math.Abs(x[i+1] - x[i])
	}
	slices.Sort(d)
	return MADScale * SortedQuantile(d, 0.5) / math.Sqrt2
}

// UpperMedian is the upper median of x, its ⌊n/2⌋-th smallest value (0-based;
// for an even count the larger middle value): always one of the values. x
// is not changed; NaN when x is empty.
func UpperMedian(x []float64) float64 {
	if len(x) == 0 {
		return math.NaN()
	}
	return selectK(slices.Clone(x), len(x)/2)
}

// LowerMedian is the lower median of x, its ⌊(n−1)/2⌋-th smallest value
// (0-based; for an even count the smaller middle value): always one of the
// values, never the mean of a good and a bad one. x is not changed; NaN
// when x is empty.
func LowerMedian(x []float64) float64 {
	if len(x) == 0 {
		return math.NaN()
	}
	return selectK(slices.Clone(x), (len(x)-1)/2)
}

// OrderQuantile is the ⌊q·(n−1)⌋-th smallest value of x (0-based): an
// order statistic, one of the values, never interpolated (at q = 0.5 the
// lower median). x is not changed (a sorted copy: NaN first); NaN when x
// is empty.
func OrderQuantile(x []float64, q float64) float64 {
	if len(x) == 0 {
		return math.NaN()
	}
	s := slices.Clone(x)
	sort.Float64s(s)
	return s[int(q*float64(len(s)-1))]
}

// NearestRank is the q-quantile of the sorted s by nearest rank: its
// ⌈q·n⌉-th smallest value (1-based; the first for q = 0), never
// interpolated. NaN when s is empty.
func NearestRank(s []float64, q float64) float64 {
	if len(s) == 0 {
		return math.NaN()
	}
	i := int(math.Ceil(q*float64(len(s)))) - 1
	return s[max(0, min(i, len(s)-1))]
}

// UpperMedianSorting is the upper median of x, its ⌊n/2⌋-th smallest value
// (0-based), found by sorting x in place (NaN, a broken reading, first):
// for a caller's scratch window, where it allocates nothing. NaN when x is
// empty.
func UpperMedianSorting(x []float64) float64 {
	if len(x) == 0 {
		return math.NaN()
	}
	sort.Float64s(x)
	return x[len(x)/2]
}

// Mean is the arithmetic mean of x; NaN when x is empty.
func Mean(x []float64) float64 {
	if len(x) == 0 {
		return math.NaN()
	}
	var s float64
	for _, v := range x {
		s += v
	}
	return s / float64(len(x))
}

// Var is the sample variance of x about its mean (n − 1 in the
// denominator); 0 for fewer than two values.
func Var(x []float64) float64 {
	if len(x) < 2 {
		return 0
	}
	m := Mean(x)
	var ss float64
	for _, v := range x {
		ss += (v - m) * (v - m)
	}
	return ss / float64(len(x)-1)
}

// MedianInPlace is the median of x (the mean of the two middle values of an
// even count), reordering x: quickselect, O(n), no allocation. NaN when x
// is empty.
func MedianInPlace(x []float64) float64 {
	n := len(x)
	if n == 0 {
		return math.NaN()
	}
	hi := selectK(x, n/2)
	if n%2 == 1 {
		return hi
	}
	lo := x[0]
	for _, v := range x[:n/2] {
		lo = math.Max(lo, v)
	}
	return (lo + hi) / 2
}

// MedianSelecting is Median's value, bit for bit (SortedQuantile's
// interpolation between the middle order statistics), found by selection
// instead of a sort: O(n), no allocation, reordering x. NaN when x is empty.
func MedianSelecting(x []float64) float64 {
	n := len(x)
	if n == 0 {
		return math.NaN()
	}
	r := 0.5 * float64(n-1)
	i := int(r)
	a := selectK(x, i)
	if i+1 >= n {
		return a
	}
	b := x[i+1]
	for _, v := range x[i+2:] {
		if v < b {
			b = v
		}
	}
	return a + (r-float64(i))*(b-a)
}

// MedianSelectingCopy is MedianSelecting of a copy of x, taken in a
// scratch buffer (floatScratches): x is left as it is and nothing is
// allocated. Like MedianSelecting it is Median's value bit for bit for
// values without NaN, but for the sign of a zero median.
func MedianSelectingCopy(x []float64) float64 {
	b := floatScratches.Get(len(x))
	defer floatScratches.Put(b)
	copy(b, x)
	return MedianSelecting(b)
}

// selectK reorders x so that x[k] is its k-th smallest value, those before
// it no larger and those after no smaller, and returns it (Hoare's
// selection with a median-of-three pivot).
func selectK(x []float64, k int) float64 {
	lo, hi := 0, len(x)-1
	for lo < hi {
		mid := lo + (hi-lo)/2
		if x[mid] < x[lo] {
			x[mid], x[lo] = x[lo], x[mid]
		}
		if x[hi] < x[lo] {
			x[hi], x[lo] = x[lo], x[hi]
		}
		if x[hi] < x[mid] {
			x[hi], x[mid] = x[mid], x[hi]
		}
		p := x[mid]
		i, j := lo, hi
		for i <= j {
			for x[i] < p {
				i++
			}
			for x[j] > p {
				j--
			}
			if i <= j {
				x[i], x[j] = x[j], x[i]
				i++
				j--
			}
		}
		switch {
		case k <= j:
			hi = j
		case k >= i:
			lo = i
		default:
			return x[k]
		}
	}
	return x[k]
}

// absDiffSigma is the standard deviation of gaussian differences from
// their absolute values a (reordered), robust to steps: a difference that
// straddles a level step is an outlier, so the median, then the median of
// the differences within 4 σ_d of 0 (a gaussian difference lies beyond
// with probability 6·10⁻⁵), twice — steps moving a quarter of the
// differences do not inflate it as they would the median alone (by 40 %).
func absDiffSigma(a []float64) float64 {
	sd := MADScale * MedianInPlace(a)
	for range 2 {
		k := 0
		for _, x := range a {
			if x <= 4*sd {
				a[k] = x
				k++
			}
		}
		if k == len(a) || k < minDiffs {
			break
		}
		a = a[:k]
		sd = MADScale * MedianInPlace(a)
	}
	return sd
}

// A quantised meter whose noise is under about half its step gives more
// zero differences than not, and a median of 0 (absDiffSigma's 0). Read
// as 0, the variogram rose past its zero octaves into the level steps: a
// drive with a 0.23 mW step and 0.1 mW of noise had a classifier σ of
// 7.6 mW — its Slumber–DevSlp gap — and lost an HBA DevSlp span of 1.3 s
// to Slumber (campaign 33:109). Such differences are read by their root
// mean square over the quantiser's small steps instead (quantisedSigma),
// at every lag, once lag 1 shows a quantiser (quantisedStep): there,
// between neighbours, level steps are rare and the quantiser's moves are
// not — a noise-free signal stepping between two levels moves by one
// step too, but at long lags only, where its steps are straddled.

// quantisedMinShare (and quantisedMinMoves) is the least share (and count)
// of the lag-1 differences a quantiser must move — a drive's first 200 ms
// at 0.3 LSB of noise moved 2 % of them (campaign 28:48, whose classifier
// then sized its window from the level steps: 100 ms) — and quantisedStepShare the least share of those
// that must be one step (up to 1.5 q, for float32 rounding), for a median
// of 0 to be read as quantised noise.
const (
	quantisedMinShare  = 0.005
	quantisedMinMoves  = 10
	quantisedStepShare = 0.5
)

// quantisedStep is the step q of lag-1 differences a (absolute values)
// whose median is 0 when they are a quantiser's, else 0.
func quantisedStep(a []float64) float64 {
	q := math.Inf(1)
	for _, x := range a {
		if x > 0 && x < q {
			q = x
		}
	}
	moved, one := 0, 0
	for _, x := range a {
		if x > 0 && x <= 4.5*q {
			moved++
			if x < 1.5*q {
				one++
			}
		}
	}
	if math.IsInf(q, 1) || moved < quantisedMinMoves || float64(moved) < quantisedMinShare*float64(len(a)) || float64(one) < quantisedStepShare*float64(moved) {
		return 0
	}
	return q
}

// quantisedSigma is the standard deviation of differences a (absolute
// values) of readings quantised to q, from their root mean square over
// those within 4 steps of 0: the quantiser's ±1 and ±2 steps are the
// noise, a level step of more is not.
func quantisedSigma(a []float64, q float64) float64 {
	var ss float64
	n := 0
	for _, x := range a {
		if x <= 4.5*q {
			ss += x * x
			n++
		}
	}
	if n == 0 {
		return 0
	}
	return math.Sqrt(ss / float64(n))
}

// RobustDiffVar is the variance of one value of x from the differences of
// successive values (for independent values, Var(x[i+1] − x[i]) = 2σ²),
// robust to level steps between them (absDiffSigma): the batch-means
// variance of batch means of a signal that changes level. 0 for fewer than
// two values.
func RobustDiffVar(x []float64) float64 {
	if len(x) < 2 {
		return 0
	}
	a := make([]float64, len(x)-1)
	for i := range a {
		a[i] = math.Abs(x[i+1] - x[i])
	}
	sd := absDiffSigma(a)
	return sd * sd / 2
}

// ShorthScale turns the length of the shortest interval holding half of a
// gaussian sample into its standard deviation: 1/(2·Φ⁻¹(3/4)).
const ShorthScale = 0.7413011092528010

// WeightedShorth is the length of the shortest interval [x[i], x[j]]
// whose weights sum to at least half the total (Rousseeuw's shorth), and
// its midpoint, for x sorted ascending with weights w ≥ 0: a scale that
// half the values, wherever the other half lie, decide — a level's spread
// with bursts above it or a second level beside it holding less than
// half. NaN, NaN when the weights sum to 0.
func WeightedShorth(x, w []float64) (length, mid float64) {
	var total float64
	for _, v := range w {
		total += v
	}
	if !(total > 0) {
		return math.NaN(), math.NaN()
	}
	length, mid = math.Inf(1), math.NaN()
	var in float64
	j := 0
	for i := range x {
		for j < len(x) && in < total/2 {
			in += w[j]
			j++
		}
		if in < total/2 {
			break
		}
		if l := x[j-1] - x[i]; l < length {
			length, mid = l, (x[j-1]+x[i])/2
		}
		in -= w[i]
	}
	return length, mid
}
