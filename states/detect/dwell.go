package detect

import (
	"math"

	"github.com/idlewatt/idlewatt/hostclock"
	"github.com/idlewatt/idlewatt/states/powerstate"
	"github.com/idlewatt/idlewatt/units"
)

// classify accounts the sample at t (power w) given its smoothed class.
func (c *Classifier) classify(t hostclock.Time, w float64, busy bool, smoothed powerstate.State) {
	s := powerstate.Active
	if !busy {
		s = smoothed
	}
	if !c.started {
		c.started = true
		c.cur = Span{State: s, Start: t, MinW: units.Watts(w), MaxW: units.Watts(w)}
		c.curSum, c.cand = 0, s
	}
	c.split(t, w)
	cs := c.th.clearOf(w, c.clearMargin)
	if s == c.cur.State {
		// Back in the current state: pending candidate samples belong to it.
		if c.candN > 0 || len(c.transit) > 0 {
			c.countHidden()
		}
		c.absorbTransit(len(c.transit))
		if c.candN > 0 {
			c.absorbCandidate()
		}
		c.add(&c.cur, &c.curSum, w)
		c.cur.Clear[cs]++
		return
	}
	if s != c.cand || c.candN == 0 {
		switch {
		case c.candN > 0 && elevated(c.cand) && elevated(s):
			// A wake spike (background: no I/O yet) running into the read
			// that woke the drive (active): both are above the low state,
			// so the pending samples go with the new candidate — not into
			// the DevSlp or Slumber interval they interrupted.
			c.cand = s
		case c.candN > 0:
			c.transit = append(c.transit, part{s: c.cand, at: c.candAt, n: c.candN, sum: c.candSum, min: c.candMin, max: c.candMax, clear: c.candClear})
			c.candN = 0
			c.cand, c.candAt, c.candN, c.candSum, c.candMin, c.candMax = s, t, 0, 0, w, w
			c.candClear = ClearCounts{}
		default:
			c.cand, c.candAt, c.candN, c.candSum, c.candMin, c.candMax = s, t, 0, 0, w, w
			c.candClear = ClearCounts{}
		}
	}
	c.candClear[cs]++
	c.candN++
	c.candSum += w
	c.candMin = math.Min(c.candMin, w)
	c.candMax = math.Max(c.candMax, w)
	// Busy edges are the host's I/O times, not noisy power: entering and
	// leaving active needs no dwell. (Before, a gap of less than the dwell
	// between two requests was absorbed into active, 1.6–7 ms of
	// residency per drive in the campaign.)
	need := c.dwellN
	if c.cand == powerstate.Background && c.bgDwellN > 0 {
		need = c.bgDwellN
	}
	if c.candN >= need || (busy && s == powerstate.Active) || (c.cur.State == powerstate.Active && !busy) {
		c.commit()
	}
}

// elevated reports whether s is above every low state: the drive working.
func elevated(s powerstate.State) bool { return s == powerstate.Active || s == powerstate.Background }

func (c *Classifier) add(sp *Span, sum *float64, w float64) {
	sp.Samples++
	*sum += w
	p := units.Watts(w)
	if p < sp.MinW {
		sp.MinW = p
	}
	if p > sp.MaxW {
		sp.MaxW = p
	}
}

func (c *Classifier) absorbCandidate() {
	c.cur.Samples += c.candN
	c.curSum += c.candSum
	c.cur.MinW = units.Watts(math.Min(float64(c.cur.MinW), c.candMin))
	c.cur.MaxW = units.Watts(math.Max(float64(c.cur.MaxW), c.candMax))
	c.cur.Clear.add(c.candClear)
	c.candClear = ClearCounts{}
	c.candN = 0
	c.cand = c.cur.State
}

// countHidden adds the pending excursion (the candidate and the parts it
// passed through) to hidden: the smoothed power is back in the current
// state before the dwell.
func (c *Classifier) countHidden() {
	cur := c.cur.State
	if cur >= powerstate.NumDetected {
		return
	}
	for _, p := range c.transit {
		if p.s < powerstate.NumDetected && p.s != cur {
			c.hidden[cur][p.s] += p.n
		}
	}
	if c.candN > 0 && c.cand < powerstate.NumDetected && c.cand != cur {
		c.hidden[cur][c.cand] += c.candN
	}
}

func (c *Classifier) commit() {
	k := c.splitTransit()
	c.absorbTransit(k)
	start, n, sum, lo, hi, clr := c.candAt, c.candN, c.candSum, c.candMin, c.candMax, c.candClear
	for i, p := range c.transit {
		if i == 0 {
			start = p.at
		}
		n, sum, lo, hi = n+p.n, sum+p.sum, math.Min(lo, p.min), math.Max(hi, p.max)
		clr.add(p.clear)
	}
	c.transit = c.transit[:0]
	c.splitCur(start)
	c.cur.End = start
	c.beforeIO = c.cand == powerstate.Active
	c.emit()
	c.beforeIO = false
	c.cur = Span{State: c.cand, Start: start, Samples: n, MinW: units.Watts(lo), MaxW: units.Watts(hi), Clear: clr}
	c.curSum = sum
	c.candN, c.candClear = 0, ClearCounts{}
}

// part is a candidate that gave way before its dwell.
type part struct {
	s             powerstate.State
	at            hostclock.Time
	n             int
	sum, min, max float64
	clear         ClearCounts
}

// absorbTransit gives the first k transit parts to the current span and
// keeps the rest.
func (c *Classifier) absorbTransit(k int) {
	if len(c.transit) == 0 {
		return // nothing to do, and no slice header to store (a write barrier under GC) on every sample
	}
	for _, p := range c.transit[:k] {
		c.cur.Samples += p.n
		c.curSum += p.sum
		c.cur.MinW = units.Watts(math.Min(float64(c.cur.MinW), p.min))
		c.cur.MaxW = units.Watts(math.Max(float64(c.cur.MaxW), p.max))
		c.cur.Clear.add(p.clear)
	}
	c.transit = append(c.transit[:0], c.transit[k:]...)
}

// splitTransit is how many of the transit parts belong to the span that
// ends (the rest begin the candidate that now commits). A median passing
// from level A to a far level C crosses the bands between them; the
// change is where it crosses the midpoint of A and C, so a band whose
// level is on A's side of it is A's, the rest C's. (Before, every band
// passed stayed with A: right on the way up from a low state, where the
// bands passed are all on A's side, but a 73 ms GC burst over Slumber at
// 13 mW σ read 20 ms long, the median spending that long in the Partial
// band on its way down.) Spans bounded by the host's I/O keep their
// edges: every part stays with A, as before.
func (c *Classifier) splitTransit() int {
	if len(c.transit) == 0 || c.cur.State == powerstate.Active || c.cand == powerstate.Active {
		return len(c.transit)
	}
	la, oka := c.levelOf(c.cur.State, c.curSum, c.cur.Samples)
	lc, okc := c.levelOf(c.cand, c.candSum, c.candN)
	if !oka || !okc || la == lc {
		return len(c.transit)
	}
	m := (la + lc) / 2
	for i, p := range c.transit {
		if lp, ok := c.levelOf(p.s, p.sum, p.n); ok && (lp-m)*(la-m) <= 0 {
			return i
		}
	}
	return len(c.transit)
}

// levelOf is the power a state stands for: its level, or for background
// (no level known in advance) the mean of its samples; Off is 0.
func (c *Classifier) levelOf(s powerstate.State, sum float64, n int) (float64, bool) {
	switch s {
	case powerstate.Background:
		if n == 0 {
			return 0, false
		}
		return sum / float64(n), true
	case powerstate.Off:
		return 0, true
	}
	return c.levels.levelOf(s)
}

func (c *Classifier) emit() {
	if c.cur.Samples == 0 {
		return
	}
	c.cur.MeanW = units.Watts(c.curSum / float64(c.cur.Samples))
	lastState := c.cur.State
	if c.onSpan != nil {
		parts := []Span{c.cur}
		if c.cur.State == powerstate.Background {
			if p := c.carve(c.cur); p != nil {
				parts = p
			}
		} else {
			if p := c.carveHead(c.cur); p != nil {
				parts = p
			}
			parts = c.carveRises(parts)
			lastState = parts[len(parts)-1].State
		}
		for _, p := range parts {
			c.onSpan(p)
			if p.State != powerstate.Background && c.levels.has(p.State) {
				c.prevLevel = p.State // the level a rise at the end ran over
			}
		}
	}
	c.prevState = lastState
	switch {
	case lastState == powerstate.Background:
	case c.levels.has(lastState):
		c.prevLevel = lastState
	default:
		c.prevLevel = powerstate.Unknown
	}
}

// Gap ends the current span at the last sample; the next Push starts afresh.
func (c *Classifier) Gap() {
	if !c.decided {
		c.decide()
	}
	c.flushRing()
	if !c.started {
		return
	}
	c.absorbTransit(len(c.transit))
	if c.candN > 0 {
		c.absorbCandidate()
	}
	c.cur.End = c.last.Add(c.period)
	c.emit()
	c.started, c.prevLevel, c.prevState = false, powerstate.Unknown, powerstate.Unknown
}

// Close flushes the last span.
func (c *Classifier) Close() { c.Gap() }
