package analysis

import "math"

// peakWins tracks, for several window lengths at once, the highest sum over
// any n consecutive samples, in memory proportional to the longest window
// (not to the capture).
//
// It keeps prefix sums of the samples since the last reset: the sum of the n
// samples ending at j is pre[j]−pre[j−n], so each window costs one
// subtraction and one comparison per sample, with no loop-carried sum of its
// own and no drift to correct. When the buffer fills, the last keep+1
// prefixes are rebased to start at 0 and the rest is dropped, so the prefixes
// never grow beyond a buffer's worth of samples: rounding stays at the level
// of one buffer (~1e-11 relative), however long the capture.
//
// Most windows cannot beat the best so far: a window's mean is at most the
// highest sample it covers. Per window length a monotonic queue of recent
// run maxima bounds the samples any window ending in the new run can cover;
// when that bound is no higher than the caller's best, the scan is skipped.
// On a review-like capture (idle between bursts) that skips nearly every
// idle run.
type peakWins struct {
	n     [numPeakWins]int
	keep  int       // the longest window
	pre   []float64 // pre[0] is 0 after a reset; pre[j] = sum of the first j samples since
	count int64     // samples since the last reset
	hi    [numPeakWins]maxQueue
}

const numPeakWins = len(peakWindowsS)

// peakChunk is the minimum number of samples appended between rebases; the
// rebase copies keep+1 values, so the copying costs at most keep/peakChunk
// of a value per sample.
const peakChunk = 1 << 16

// maxPeakWin bounds a window's length in samples (1 s at 16 MS/s) so a
// capture header claiming an absurd rate cannot make the buffer huge; a
// longer window is not computed and reads 0.
const maxPeakWin = 1 << 24

func newPeakWins(n [numPeakWins]int) *peakWins {
	w := &peakWins{}
	for k, x := range n {
		w.n[k] = max(x, 1)
		if x > maxPeakWin {
			w.n[k] = 0 // disabled
		}
		w.keep = max(w.keep, w.n[k])
	}
	w.pre = make([]float64, 1, w.keep+1+max(peakChunk, w.keep))
	return w
}

// push appends ps, whose highest value is psMax, and returns per window the
// highest sum over a window that ends within ps and whether it was looked
// for. A window is looked for when it can be complete (n samples since the
// last reset) and could beat floor[k] (a mean; only where have[k]): a false
// ok means no window ending in ps is complete or beats floor[k].
func (w *peakWins) push(ps []float64, psMax float64, floor *[numPeakWins]float64, have *[numPeakWins]bool) (best [numPeakWins]float64, ok [numPeakWins]bool) {
	c0 := w.count
	w.count += int64(len(ps))
	var scan [numPeakWins]bool
	for k, n := range w.n {
		if n == 0 {
			continue
		}
		q := &w.hi[k]
		q.push(w.count, psMax)
		q.expire(c0 - int64(n) + 1)
		scan[k] = w.count >= int64(n) && !(have[k] && q.max() <= floor[k])
	}
	for len(ps) > 0 {
		if len(w.pre) == cap(w.pre) {
			w.rebase()
		}
		m := min(len(ps), cap(w.pre)-len(w.pre))
		w.extend(ps[:m], &scan, &best, &ok)
		ps = ps[m:]
	}
	return best, ok
}

func (w *peakWins) extend(ps []float64, scan *[numPeakWins]bool, best *[numPeakWins]float64, ok *[numPeakWins]bool) {
	j0 := len(w.pre)
	s := w.pre[j0-1]
	w.pre = w.pre[:j0+len(ps)]
	dst := w.pre[j0:]
	for i, x := range ps {
		s += x
		dst[i] = s
	}
	pre := w.pre
	for k, n := range w.n {
		lo := max(j0, n)
		if !scan[k] || lo >= len(pre) {
			continue
		}
		hi, back := pre[lo:], pre[lo-n:len(pre)-n]
		b := hi[0] - back[0]
		for i := range hi {
			if d := hi[i] - back[i]; d > b {
				b = d
			}
		}
		if !ok[k] || b > best[k] {
			best[k], ok[k] = b, true
		}
	}
}

// rebase keeps the last keep+1 prefixes, shifted to start at 0.
func (w *peakWins) rebase() {
	off := len(w.pre) - (w.keep + 1)
	if off <= 0 {
		return
	}
	base := w.pre[off]
	for j := 0; j <= w.keep; j++ {
		w.pre[j] = w.pre[off+j] - base
	}
	w.pre = w.pre[:w.keep+1]
}

// reset forgets the samples so far (after a gap: a window never spans
// missing samples).
func (w *peakWins) reset() {
	w.pre = w.pre[:1]
	w.pre[0] = 0
	w.count = 0
	for k := range w.hi {
		w.hi[k].clear()
	}
}

// maxQueue holds the maxima of recent runs of samples, decreasing from the
// front, each with the sample count at its end: the front is the highest
// value among the runs that have not expired.
type maxQueue struct {
	q    []runMax
	head int
}

type runMax struct {
	end int64 // samples since the reset at the run's end
	max float64
}

func (q *maxQueue) push(end int64, m float64) {
	for len(q.q) > q.head && q.q[len(q.q)-1].max <= m {
		q.q = q.q[:len(q.q)-1]
	}
	if q.head > 0 && q.head >= len(q.q)/2 {
		q.q = q.q[:copy(q.q, q.q[q.head:])]
		q.head = 0
	}
	q.q = append(q.q, runMax{end, m})
}

// expire drops runs that end before sample first.
func (q *maxQueue) expire(first int64) {
	for q.head < len(q.q) && q.q[q.head].end <= first {
		q.head++
	}
}

// max is the highest unexpired run maximum; NaN (never skip) when empty.
func (q *maxQueue) max() float64 {
	if q.head == len(q.q) {
		return math.NaN()
	}
	return q.q[q.head].max
}

func (q *maxQueue) clear() { q.q, q.head = q.q[:0], 0 }

// acc accumulates count, sum, min and max.
type acc struct {
	n        uint64
	sum      float64
	min, max float64
}

func (a *acc) add(x float64) {
	if a.n == 0 || x < a.min {
		a.min = x
	}
	if a.n == 0 || x > a.max {
		a.max = x
	}
	a.n++
	a.sum += x
}

// addEach is add of each of xs in turn, with the totals in locals: through
// a pointer into a larger struct the compiler stored and reloaded the sum
// on every sample, a dependency through memory.
func (a *acc) addEach(xs []float64) {
	n, sum, mn, mx := a.n, a.sum, a.min, a.max
	for _, x := range xs {
		if n == 0 || x < mn {
			mn = x
		}
		if n == 0 || x > mx {
			mx = x
		}
		n++
		sum += x
	}
	a.n, a.sum, a.min, a.max = n, sum, mn, mx
}

func (a *acc) merge(o acc) {
	if o.n == 0 {
		return
	}
	if a.n == 0 || o.min < a.min {
		a.min = o.min
	}
	if a.n == 0 || o.max > a.max {
		a.max = o.max
	}
	a.n += o.n
	a.sum += o.sum
}

func (a acc) mean() float64 {
	if a.n == 0 {
		return 0
	}
	return a.sum / float64(a.n)
}

// summarise returns the count, sum, min and max of ps and adds every value
// to h, in one pass. NaNs count and poison the sum as acc.add's do but are
// left out of min and max unless there is nothing else.
func summarise(ps []float64, h *Histogram) acc {
	if len(ps) == 0 {
		return acc{}
	}
	h.alloc()
	bins, mins, maxs := h.bins[:histBins], h.mins[:histBins], h.maxs[:histBins]
	mn, mx, s := math.Inf(1), math.Inf(-1), 0.0
	for _, x := range ps {
		s += x
		if x < mn {
			mn = x
		}
		if x > mx {
			mx = x
		}
		bits := math.Float64bits(x)
		// Positive normal values in range have a biased exponent in
		// [1023+histMinExp, 1023+histMaxExp); everything else (zero,
		// negative, NaN, tiny, huge) takes the slow path.
		e := uint(bits>>52) - (1023 + histMinExp)
		if e >= histMaxExp-histMinExp {
			h.addOut(x)
			continue
		}
		i := e<<histSub | uint(bits>>(52-histSub))&(1<<histSub-1)
		c := bins[i]
		switch {
		case c == 0:
			mins[i], maxs[i] = x, x
		case x < mins[i]:
			mins[i] = x
		case x > maxs[i]:
			maxs[i] = x
		}
		if c != math.MaxUint32 {
			bins[i] = c + 1
		}
	}
	h.n += uint64(len(ps))
	if mn > mx { // only NaNs
		mn, mx = math.NaN(), math.NaN()
	}
	return acc{n: uint64(len(ps)), sum: s, min: mn, max: mx}
}
