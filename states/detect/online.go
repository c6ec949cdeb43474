package detect

import (
	"fmt"
	"math"
	"time"

	"github.com/idlewatt/idlewatt/states/powerstate"
	"github.com/idlewatt/idlewatt/units"
)

// Online labels samples one at a time, as they arrive, for consumers that
// cannot wait for Classifier's hysteresis (a streaming report). It uses a
// trailing running median, so a clean step is seen half the window late
// (0.5 ms at the default 1 ms window) and a lone spike never.
type Online struct {
	th      thresholds
	rw      []float64
	scratch []float64
	pos, n  int
	// rc is each window sample's own band and count how many are in each:
	// bands are intervals of power (each state's a chain of half-lines
	// classify tests in turn), so when more than half the window is in one
	// band its median is too, and no sort is needed. Otherwise the median
	// comes from sorted, kept while asked for. A NaN (nanN in the window)
	// has no place in an order; the window is then sorted as it always
	// was, NaN where the insertion left it.
	rc     []powerstate.State
	count  [powerstate.NumDetected]int
	nanN   int
	last   powerstate.State // the band of the last median
	band   bandMemo         // each sample's own band
	sorted sortedWin
}

// NewOnline returns an online labeller for levels at the given sample period.
func NewOnline(l Levels, period, smooth time.Duration) (*Online, error) {
	if err := l.Validate(); err != nil {
		return nil, err
	}
	if period <= 0 {
		return nil, fmt.Errorf("detect: sample period must be positive")
	}
	if smooth == 0 {
		smooth = time.Millisecond
	}
	n := int(smooth/period) | 1
	o := &Online{th: l.compile(), rw: make([]float64, n), scratch: make([]float64, n), rc: make([]powerstate.State, n)}
	o.sorted.alloc(n)
	return o, nil
}

// Classify labels the sample just taken: power w, busy if I/O was in flight.
func (o *Online) Classify(w units.Watts, busy bool) powerstate.State {
	x := float64(w)
	rs := o.band.classify(&o.th, x)
	if o.n == len(o.rw) {
		out := o.rw[o.pos]
		o.count[o.rc[o.pos]]--
		if math.IsNaN(out) {
			o.nanN--
		}
		if o.sorted.live { // update's own first test, without its call
			o.sorted.update(out, true, x, true)
		}
	} else {
		o.n++
		if o.sorted.live {
			o.sorted.update(0, false, x, true)
		}
	}
	if math.IsNaN(x) {
		o.nanN++
		o.sorted.drop()
	}
	o.rw[o.pos], o.rc[o.pos] = x, rs
	o.count[rs]++
	if o.pos++; o.pos == len(o.rw) {
		o.pos = 0
	}
	if busy {
		return powerstate.Active
	}
	switch {
	case o.nanN > 0:
		return o.th.classify(o.insertionMedian())
	case o.count[rs] > o.n/2:
		o.last = rs
	case o.count[o.last] > o.n/2:
	default:
		if !o.sorted.live {
			o.sorted.rebuild()
			for i := 0; i < o.n; i++ {
				o.sorted.put(o.rw[(o.pos-1-i+2*len(o.rw))%len(o.rw)])
			}
			o.sorted.sort()
		}
		o.last = o.th.classify(o.sorted.at(o.n / 2))
	}
	return o.last
}

// insertionMedian sorts the window newest first by insertion and returns
// its (upper) median: with a NaN among the samples the order, and so the
// median, is the one this insertion makes.
func (o *Online) insertionMedian() float64 {
	sc := o.scratch[:o.n]
	for i := 0; i < o.n; i++ {
		x := o.rw[(o.pos-1-i+2*len(o.rw))%len(o.rw)]
		j := i
		for ; j > 0 && sc[j-1] > x; j-- {
			sc[j] = sc[j-1]
		}
		sc[j] = x
	}
	return sc[o.n/2]
}

// Reset forgets the window (after a gap in the data).
func (o *Online) Reset() {
	o.n, o.pos, o.nanN, o.count = 0, 0, 0, [powerstate.NumDetected]int{}
	o.sorted.drop()
}
