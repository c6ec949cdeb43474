package live

import "math"

// ring is one series of time buckets on the meter's sample grid: bucket k
// holds samples [k·per, (k+1)·per) — their min and max power, the sum of
// their power and of their current (rails), and their count — for the last
// len(n) buckets only: a new bucket overwrites the oldest, so memory is
// fixed whatever the recording's length.
type ring struct {
	per        uint64 // samples per bucket
	mask       int64
	min, max   []float32
	sumW, sumI []float64
	n          []uint32
	hi         int64 // buckets [hi-len, hi) are held (none while hi == lo)
	lo         int64 // the first bucket ever written
	any        bool
}

func newRing(per uint64, size int) *ring {
	return &ring{per: per, mask: int64(size - 1), min: make([]float32, size), max: make([]float32, size),
		sumW: make([]float64, size), sumI: make([]float64, size), n: make([]uint32, size)}
}

func (r *ring) size() int64 { return r.mask + 1 }

// slot is bucket k's place in the ring, making room for it (buckets past
// the newest are cleared); -1 for a bucket too old to be held.
func (r *ring) slot(k int64) int {
	if !r.any {
		r.any, r.lo, r.hi = true, k, k
	}
	if k < r.hi-r.size() || k < r.lo {
		return -1
	}
	if k >= r.hi {
		from := max(r.hi, k-r.size()+1)
		for j := from; j <= k; j++ {
			s := j & r.mask
			r.min[s], r.max[s], r.sumW[s], r.sumI[s], r.n[s] = float32(math.Inf(1)), float32(math.Inf(-1)), 0, 0, 0
		}
		r.hi = k + 1
	}
	return int(k & r.mask)
}

// add puts sample idx (power p W, current i A) into its bucket.
func (r *ring) add(idx uint64, p, i float32) {
	s := r.slot(int64(idx / r.per))
	if s < 0 {
		return
	}
	if p < r.min[s] {
		r.min[s] = p
	}
	if p > r.max[s] {
		r.max[s] = p
	}
	r.sumW[s] += float64(p)
	r.sumI[s] += float64(i)
	r.n[s]++
}

// held is the range of buckets [from, to) the ring holds of [from, to).
func (r *ring) held(from, to int64) (int64, int64) {
	if !r.any {
		return 0, 0
	}
	from = max(from, r.hi-r.size(), r.lo)
	to = min(to, r.hi)
	if to < from {
		to = from
	}
	return from, to
}

// store is one series (a drive's total or a rail) at two depths: fine
// buckets (about 1 ms, or each sample at lower rates) for the recent past,
// coarse ones (coarse × fine) for the long window.
type store struct {
	fine, coarse *ring
	// done: every sample before it was added or is missing; buckets
	// wholly before done are complete.
	done uint64
}

func newStore(per, coarse uint64, fineSize, coarseSize int) *store {
	return &store{fine: newRing(per, fineSize), coarse: newRing(per*coarse, coarseSize)}
}

// setDone marks every sample before d as added or missing: the buckets up
// to it exist (empty where nothing came).
func (s *store) setDone(d uint64) {
	if d <= s.done {
		return
	}
	s.done = d
	if k := int64(d/s.fine.per) - 1; k >= 0 {
		s.fine.slot(k)
	}
	if k := int64(d/s.coarse.per) - 1; k >= 0 {
		s.coarse.slot(k)
	}
}

func (s *store) add(idx uint64, p, i float32) {
	s.fine.add(idx, p, i)
	s.coarse.add(idx, p, i)
}

// nextPow2 is the least power of two ≥ n (≥ 2).
func nextPow2(n float64) int {
	s := 2
	for float64(s) < n && s < 1<<24 {
		s <<= 1
	}
	return s
}
