package detect

import "slices"

// sortedWin holds a sliding window's sort keys in ascending order, for its
// order statistics (the running medians), but only while they are being
// asked for. Away from edges a window's median is known without them
// (more than half the window in one band: Classifier.count), and keeping
// every sample's key in order cost an insert and a remove, each moving
// half the window, on every sample. So a window not asked for over as many
// samples as it holds stops being kept; the next question sorts it afresh
// from the ring. Kept, it takes a sample leaving and one entering as one
// move of the keys between their places (nothing, for a run of one value).
//
// The keys are never NaN (sortKey). Keys equal under == but of different
// sign (±0) may sit in either order; both classify alike.
type sortedWin struct {
	xs     []float64 // ascending keys in xs[:n], while live
	n      int
	live   bool
	unused int // updates since the last question
}

// alloc sizes the window for up to n keys; it is not live.
func (s *sortedWin) alloc(n int) {
	s.xs, s.n, s.live, s.unused = make([]float64, n), 0, false, 0
}

// drop stops keeping the keys; the next question rebuilds them.
func (s *sortedWin) drop() { s.live = false }

// update takes the key out (when hasOut) leaving the window and the key in
// (when hasIn) entering it; a window not live ignores it, and one not asked
// for over len(xs) updates stops being kept.
func (s *sortedWin) update(out float64, hasOut bool, in float64, hasIn bool) {
	if !s.live {
		return
	}
	if s.unused++; s.unused > len(s.xs) {
		s.live = false
		return
	}
	switch {
	case hasOut && hasIn:
		s.replace(out, in)
	case hasOut:
		s.remove(out)
	case hasIn:
		s.insert(in)
	}
}

// lowerBound is the first index of xs[:n] whose key is ≥ k.
func (s *sortedWin) lowerBound(k float64) int {
	lo, hi := 0, s.n
	for lo < hi {
		m := int(uint(lo+hi) >> 1)
		if s.xs[m] < k {
			lo = m + 1
		} else {
			hi = m
		}
	}
	return lo
}

// find is the index of a key equal to k; a key the window does not hold
// (it always does) stops it being kept.
func (s *sortedWin) find(k float64) (int, bool) {
	i := s.lowerBound(k)
	if i < s.n && s.xs[i] == k {
		return i, true
	}
	s.live = false
	return 0, false
}

func (s *sortedWin) replace(out, in float64) {
	i, ok := s.find(out)
	if !ok || out == in {
		return
	}
	j := s.lowerBound(in)
	if j > i { // in > out: the keys between move down one
		copy(s.xs[i:j-1], s.xs[i+1:j])
		s.xs[j-1] = in
		return
	}
	copy(s.xs[j+1:i+1], s.xs[j:i])
	s.xs[j] = in
}

func (s *sortedWin) remove(out float64) {
	if i, ok := s.find(out); ok {
		copy(s.xs[i:s.n-1], s.xs[i+1:s.n])
		s.n--
	}
}

func (s *sortedWin) insert(in float64) {
	if s.n == len(s.xs) {
		s.live = false
		return
	}
	j := s.lowerBound(in)
	copy(s.xs[j+1:s.n+1], s.xs[j:s.n])
	s.xs[j] = in
	s.n++
}

// rebuild starts keeping keys afresh: the caller appends them (put) and
// they are sorted on the first at.
func (s *sortedWin) rebuild() { s.n, s.live = 0, false }

// put adds a key while rebuilding (up to len(xs)).
func (s *sortedWin) put(k float64) {
	s.xs[s.n] = k
	s.n++
}

// sort makes the keys put live.
func (s *sortedWin) sort() {
	slices.Sort(s.xs[:s.n])
	s.live, s.unused = true, 0
}

// at is the i-th smallest key (0-based) of a live window, and counts as a
// question.
func (s *sortedWin) at(i int) float64 {
	s.unused = 0
	return s.xs[i]
}
