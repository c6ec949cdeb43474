package detect

import (
	"fmt"
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
	return &Online{th: l.compile(), rw: make([]float64, n), scratch: make([]float64, n)}, nil
}

// Classify labels the sample just taken: power w, busy if I/O was in flight.
func (o *Online) Classify(w units.Watts, busy bool) powerstate.State {
	o.rw[o.pos] = float64(w)
	o.pos = (o.pos + 1) % len(o.rw)
	if o.n < len(o.rw) {
		o.n++
	}
	if busy {
		return powerstate.Active
	}
	sc := o.scratch[:o.n]
	for i := 0; i < o.n; i++ {
		x := o.rw[(o.pos-1-i+2*len(o.rw))%len(o.rw)]
		j := i
		for ; j > 0 && sc[j-1] > x; j-- {
			sc[j] = sc[j-1]
		}
		sc[j] = x
	}
	return o.th.classify(sc[o.n/2])
}

// Reset forgets the window (after a gap in the data).
func (o *Online) Reset() { o.n, o.pos = 0, 0 }
