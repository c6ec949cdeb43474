package capture

import "math"

// summaryAcc builds one channel's summary points. Windows are aligned to
// multiples of Per in sample-index space, so summaries from different
// channels and different captures of one meter line up.
type summaryAcc struct {
	open              bool    // a window is being accumulated
	win               uint64  // its window number (sample index / Per)
	n                 uint32  // samples in it so far
	min, max          float32 // power, W
	sum               float64
	start             uint64 // window number of mins[0]
	mins, maxs, means []float32
}

// finish closes the open window into a point.
func (a *summaryAcc) finish() {
	if !a.open {
		return
	}
	if len(a.mins) == 0 {
		a.start = a.win
	}
	a.mins = append(a.mins, a.min)
	a.maxs = append(a.maxs, a.max)
	a.means = append(a.means, float32(a.sum/float64(a.n)))
	a.open = false
}

// addPower feeds sample idx of channel c with power p. Points stay
// contiguous within a chunk: a window that does not follow the pending ones
// (a gap of a whole window or more) writes them out first. Call with mu held.
func (w *Writer) addPower(c int, idx uint64, p float32) {
	a := &w.sums[c]
	wi := idx / w.per
	if a.open && wi == a.win {
		a.n++
		a.sum += float64(p)
		a.min = min(a.min, p)
		a.max = max(a.max, p)
		return
	}
	a.finish()
	if n := len(a.mins); n > 0 && (wi != a.start+uint64(n) || n >= maxRunSamples) {
		w.writeSummary(c)
	}
	a.open, a.win, a.n, a.sum, a.min, a.max = true, wi, 1, float64(p), p, p
}

// writeSummary encodes channel c's finished points. Call with mu held.
func (w *Writer) writeSummary(c int) {
	a := &w.sums[c]
	n := len(a.mins)
	if n == 0 {
		return
	}
	s := w.begin(chunkSummary, 0)
	w.pend = le.AppendUint16(w.pend, uint16(c))
	w.pend = le.AppendUint16(w.pend, 0)
	w.pend = le.AppendUint32(w.pend, uint32(w.per))
	w.pend = le.AppendUint64(w.pend, a.start*w.per)
	w.pend = le.AppendUint32(w.pend, uint32(n))
	w.pend = le.AppendUint32(w.pend, 0)
	for _, xs := range [...][]float32{a.mins, a.maxs, a.means} {
		for _, x := range xs {
			w.pend = appendF32(w.pend, x)
		}
	}
	w.end(s)
	a.mins, a.maxs, a.means = a.mins[:0], a.maxs[:0], a.means[:0]
}

func appendF32(b []byte, x float32) []byte { return le.AppendUint32(b, math.Float32bits(x)) }

// toCounts fills cnt with xs as int16 counts of lsb and reports whether
// each rebuilds exactly as the reader will, so the compact encoding loses
// nothing. Multiplying by 1/lsb may round differently from dividing; the
// exactness check catches that, at worst costing the compact encoding.
func toCounts(cnt []int16, xs []float32, lsb float32) ([]int16, bool) {
	l := float64(lsb)
	inv := 1 / l
	cnt = cnt[:0]
	for _, x := range xs {
		c := math.Round(float64(x) * inv)
		if !(c >= math.MinInt16 && c <= math.MaxInt16) || float32(c*l) != x {
			return cnt, false
		}
		cnt = append(cnt, int16(c))
	}
	return cnt, true
}

func appendCounts(b []byte, cnt []int16) []byte {
	for _, c := range cnt {
		b = le.AppendUint16(b, uint16(c))
	}
	return b
}
