package analysis

// slidingMax tracks the highest mean over any n consecutive samples, in
// memory proportional to n (not to the capture). The running sum is rebuilt
// from the ring once per lap so rounding cannot accumulate over hours.
type slidingMax struct {
	ring   []float64
	i      int
	filled int
	sum    float64
	best   float64
	seen   bool
}

func newSlidingMax(n int) *slidingMax {
	if n < 1 {
		n = 1
	}
	return &slidingMax{ring: make([]float64, n)}
}

// push adds x and returns the mean of the last n samples and whether n
// samples have been seen since the last reset.
func (w *slidingMax) push(x float64) (float64, bool) {
	n := len(w.ring)
	w.sum += x - w.ring[w.i]
	w.ring[w.i] = x
	w.i++
	if w.i == n {
		w.i = 0
		s := 0.0
		for _, v := range w.ring {
			s += v
		}
		w.sum = s
	}
	if w.filled < n {
		w.filled++
		if w.filled < n {
			return 0, false
		}
	}
	m := w.sum / float64(n)
	if !w.seen || m > w.best {
		w.best, w.seen = m, true
	}
	return m, true
}

// reset forgets the window's contents (after a gap: a window never spans
// missing samples) but keeps the best mean so far.
func (w *slidingMax) reset() {
	for k := range w.ring {
		w.ring[k] = 0
	}
	w.i, w.filled, w.sum = 0, 0, 0
}

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
