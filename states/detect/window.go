package detect

import (
	"math"
	"time"

	"github.com/idlewatt/idlewatt/hostclock"
	"github.com/idlewatt/idlewatt/internal/stat"
	"github.com/idlewatt/idlewatt/states/powerstate"
	"github.com/idlewatt/idlewatt/units"
)

// Push adds one sample: its host time, its power (all rails), and whether an
// I/O was in flight (or within the settle tail) at that time. Classification
// lags by half the smoothing window.
func (c *Classifier) Push(t hostclock.Time, p units.Watts, busy bool) {
	w := float64(p)
	c.noteDiff(w)
	if !c.decided {
		c.pend = append(c.pend, pendSample{t, w, busy})
		if len(c.pend) >= c.adaptN() {
			c.decide()
		}
		return
	}
	c.push(t, w, busy)
}

// PushRun is Push of each of ps in turn, at the times ts (as many), all
// with the same busy: once the window is decided (Options.Adaptive) the
// run's readings go to the noise variogram in one AddAll before they are
// pushed — the variogram is read only while deciding, so that is the
// same as one by one.
func (c *Classifier) PushRun(ts []hostclock.Time, ps []float64, busy bool) {
	j := 0
	for ; j < len(ps) && !c.decided; j++ {
		c.Push(ts[j], units.Watts(ps[j]), busy)
	}
	ts, ps = ts[j:len(ps)], ps[j:]
	c.noise.AddAll(ps)
	for i, w := range ps {
		c.push(ts[i], w, busy)
	}
}

// sortKey orders a reading in the sorted window: a NaN (a broken reading)
// counts as the lowest power, so it can be found again to be removed.
func sortKey(w float64) float64 {
	if math.IsNaN(w) {
		return math.Inf(-1)
	}
	return w
}

func (c *Classifier) push(t hostclock.Time, w float64, busy bool) {
	if c.adaptive {
		c.hist.add(t, w)
	}
	n := len(c.rw)
	rs := c.band.classify(&c.th, w)
	live := c.sorted.live || c.idleSorted.live
	if c.ringN == n {
		out, outBusy := c.rw[c.ringPos], c.rb[c.ringPos]
		c.count[c.rc[c.ringPos]]--
		if outBusy {
			c.busyN--
		} else {
			c.idleCount[c.rc[c.ringPos]]--
		}
		if math.IsNaN(out) {
			c.nanN--
		}
		if live {
			old, k := sortKey(out), sortKey(w)
			c.sorted.update(old, true, k, true)
			c.idleSorted.update(old, !outBusy, k, !busy)
		}
	} else if live {
		k := sortKey(w)
		c.sorted.update(0, false, k, true)
		c.idleSorted.update(0, false, k, !busy)
	}
	if busy {
		c.busyN++
	} else {
		c.idleCount[rs]++
	}
	if math.IsNaN(w) {
		c.nanN++
	}
	c.rc[c.ringPos] = rs
	c.count[rs]++
	c.rt[c.ringPos], c.rw[c.ringPos], c.rb[c.ringPos] = t, w, busy
	if c.ringPos++; c.ringPos == n { // no division per sample: the wrap is a compare
		c.ringPos = 0
	}
	if c.ringN < n {
		c.ringN++
		if c.ringN < n {
			return
		}
		// The window just filled: classify its older half with windows
		// that start at the first sample.
		oldest := c.ringPos // full ring: the oldest follows the newest
		for k := 0; k < n/2; k++ {
			i := (oldest + k) % n
			c.classify(c.rt[i], c.rw[i], c.rb[i], c.th.classify(c.median(oldest, k+n/2+1)))
		}
	}
	mid := c.ringPos + n/2 // the centre of the (full) window
	if mid >= n {
		mid -= n
	}
	var st powerstate.State
	switch {
	case c.busyN > 0 && !c.rb[mid]: // the window's samples without I/O, mid among them
		st = c.smoothed(&c.idleSorted, &c.idleCount, n-c.busyN, &c.idleMaj)
	case c.count[rs] > n/2:
		st = rs
	default:
		st = c.smoothed(&c.sorted, &c.count, n, &c.maj)
	}
	if c.shortH > 0 {
		c.slideShort(mid)
		if !c.rb[mid] && c.sNB > 0 {
			if 2*c.sAbove > c.sNB {
				st = powerstate.Background
			} else if st == powerstate.Background {
				st = c.th.state[0] // the long window still holds the burst; the short one has left it
			}
		}
	}
	c.classify(c.rt[mid], c.rw[mid], c.rb[mid], st)
	c.last = t
}

// slideShort moves the short window to be centred on ring index mid: the
// first time after the ring filled by counting, then by the sample that
// entered and the one that left.
func (c *Classifier) slideShort(mid int) {
	n, h, thr := len(c.rw), c.shortH, c.th.activeAbove
	tally := func(i, d int) {
		if !c.rb[i] {
			c.sNB += d
			if c.rw[i] > thr {
				c.sAbove += d
			}
		}
	}
	if !c.sInit {
		c.sInit, c.sAbove, c.sNB = true, 0, 0
		for k := -h; k <= h; k++ {
			tally((mid+k+n)%n, 1)
		}
		return
	}
	in, out := mid+h, mid-1-h // h < n/2
	if in >= n {
		in -= n
	}
	if out < 0 {
		out += n
	}
	tally(in, 1)
	tally(out, -1)
}

// BurstSmooth is the window background is decided over (Smooth when the
// long window decides it).
func (c *Classifier) BurstSmooth() time.Duration {
	if c.shortH > 0 {
		return time.Duration(2*c.shortH+1) * c.period
	}
	return c.smooth
}

// smoothed is the band of the (upper) median of the full ring's m keys,
// or of those taken without I/O: the band holding more than half of them
// (count), when the window has no NaN — the band a NaN is counted in (Off)
// is not its key's (sortKey) — else its sorted keys' median's. maj is the
// band found last time, tried first.
func (c *Classifier) smoothed(s *sortedWin, count *[powerstate.NumDetected]int, m int, maj *powerstate.State) powerstate.State {
	if c.nanN == 0 {
		if count[*maj] > m/2 {
			return *maj
		}
		for b, k := range count {
			if k > m/2 {
				*maj = powerstate.State(b)
				return *maj
			}
		}
	}
	return c.th.classify(c.windowMedian(s, s == &c.idleSorted))
}

// windowMedian is the (upper) median of the full ring's keys, or with
// idleOnly of those taken without I/O, from s (sorted from the ring afresh
// when it was not kept).
func (c *Classifier) windowMedian(s *sortedWin, idleOnly bool) float64 {
	if !s.live {
		s.rebuild()
		for i, w := range c.rw {
			if !idleOnly || !c.rb[i] {
				s.put(sortKey(w))
			}
		}
		s.sort()
	}
	return s.at(s.n / 2)
}

// median of the m most recent samples, the oldest at ring index from.
func (c *Classifier) median(from, m int) float64 {
	n := len(c.rw)
	sc := c.scratch[:m]
	for i := 0; i < m; i++ {
		sc[i] = c.rw[(from+i)%n]
	}
	return stat.UpperMedianSorting(sc)
}

// flushRing classifies the samples still waiting in the window, with the
// window shrinking towards the end.
func (c *Classifier) flushRing() {
	n := len(c.rw)
	if c.ringN == 0 {
		return
	}
	oldest := (c.ringPos - c.ringN + n) % n
	first := 0
	if c.ringN == n {
		first = n/2 + 1 // the older half was classified already
	}
	for k := first; k < c.ringN; k++ {
		lo := k - n/2
		if lo < 0 {
			lo = 0
		}
		m := c.ringN - lo
		if m > n {
			m = n
		}
		i := (oldest + k) % n
		c.classify(c.rt[i], c.rw[i], c.rb[i], c.th.classify(c.median((oldest+lo)%n, m)))
	}
	c.last = c.rt[(c.ringPos-1+n)%n]
	c.ringN, c.ringPos, c.count = 0, 0, [powerstate.NumDetected]int{}
	c.busyN, c.sInit, c.nanN, c.idleCount = 0, false, 0, [powerstate.NumDetected]int{}
	c.sorted.drop()
	c.idleSorted.drop()
}
