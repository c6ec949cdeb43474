package detect

import (
	"math"
	"sort"
	"time"

	"github.com/idlewatt/idlewatt/hostclock"
	"github.com/idlewatt/idlewatt/states/powerstate"
	"github.com/idlewatt/idlewatt/units"
)

// history is a ring of the last samples pushed, in time order: what a
// background span is carved from (carve) after the window has passed it.
type history struct {
	t    []hostclock.Time
	w    []float64
	pos  int
	full bool
}

// historyLen bounds the ring: 2¹⁷ samples, 13 s at 10 kS/s (2 MB). A
// background span longer than what the ring still holds is not carved.
const historyLen = 1 << 17

func (h *history) add(t hostclock.Time, w float64) {
	if h.t == nil {
		h.t, h.w = make([]hostclock.Time, historyLen), make([]float64, historyLen)
	}
	h.t[h.pos], h.w[h.pos] = t, w
	h.pos++
	if h.pos == len(h.t) {
		h.pos, h.full = 0, true
	}
}

// between returns the samples with a ≤ t < b, or false when the ring no
// longer holds all of them. The slices may be the ring's own: read them
// before the next add, never write them.
func (h *history) between(a, b hostclock.Time) ([]hostclock.Time, []float64, bool) {
	n := h.pos
	if h.full {
		n = len(h.t)
	}
	if n == 0 {
		return nil, nil, false
	}
	at := func(k int) int { // k-th oldest
		if !h.full {
			return k
		}
		return (h.pos + k) % len(h.t)
	}
	if h.t[at(0)] > a {
		return nil, nil, false
	}
	lo := sort.Search(n, func(k int) bool { return h.t[at(k)] >= a })
	hi := sort.Search(n, func(k int) bool { return h.t[at(k)] >= b })
	// Not across the ring's end: the ring's own memory, capped (an append
	// copies), valid until the next add — every caller reads it at once.
	// Copying each span's samples was 16 % of a report's allocation.
	if i0 := at(lo); hi > lo && at(hi-1) == i0+hi-lo-1 {
		i1 := i0 + hi - lo
		return h.t[i0:i1:i1], h.w[i0:i1:i1], true
	}
	ts, ws := make([]hostclock.Time, 0, hi-lo), make([]float64, 0, hi-lo)
	for k := lo; k < hi; k++ {
		ts, ws = append(ts, h.t[at(k)]), append(ws, h.w[at(k)])
	}
	return ts, ws, true
}

// carveContrast is the separation, in standard deviations of a block's
// mean, between the burst's level and the level under it that carve
// needs: 8 σ, a block read on the wrong side with probability 3·10⁻⁵.
const carveContrast = 8

// carve splits a background span at the stretches inside it where the
// power is back at the level the burst ran over, and returns the parts
// (nil: nothing to carve).
//
// Background is decided by the share of a window's samples above the
// threshold into it, and a state must hold the dwell (half the window) to
// count: two GC bursts less than a window apart are read as one burst
// with the level between them (56 ms bursts 110 ms apart over Slumber,
// under the 100 ms window of 13 mW σ: 230 ms of background, 118 ms of it
// Slumber). A burst over a low level stands out sample by sample far
// more than the band test needs: the span's own samples, in blocks just
// long enough for carveContrast between the burst's level (the mean of
// its 1 ms blocks above the threshold) and the level below (the span
// before's), show where it stopped. A run of low blocks of at least 2 ms
// (and 3 blocks) becomes a span of that level (MonotoneLevels then reads
// it by its mean): inside the span, or at its start or end, where the
// median came early or left late; shorter runs, of either side, join the
// run before them. The edges between the parts are exact (ExactStart,
// ExactEnd); an outer edge with no run carved at it stays for
// RefineBurstEdges.
func (c *Classifier) carve(sp Span) []Span {
	lvl, ok := c.levels.levelOf(c.prevLevel)
	thr := c.th.activeAbove
	if !ok || !c.adaptive || math.IsInf(thr, 0) || c.sigma <= 0 || sp.Samples < 8 {
		return nil
	}
	ts, ws, ok := c.hist.between(sp.Start, sp.End)
	if !ok || len(ts) != sp.Samples {
		return nil
	}
	for _, w := range ws {
		if math.IsNaN(w) || math.IsInf(w, 0) {
			return nil // a broken reading: the span stays as the band test read it
		}
	}
	b0 := max(1, int(time.Millisecond/c.period))
	var hs float64
	var hn int
	for i := 0; i+b0 <= len(ws); i += b0 {
		if m := meanOf(ws[i : i+b0]); m > thr {
			hs, hn = hs+m, hn+1
		}
	}
	if hn == 0 {
		return nil
	}
	hi := hs / float64(hn)
	if hi <= lvl {
		return nil
	}
	b, runs, ok := c.carveGrid(ws, hi, lvl)
	if !ok {
		return nil // the burst does not stand out within a few ms: the band test stands
	}
	hasHigh := false
	for _, r := range runs {
		hasHigh = hasHigh || r.above
	}
	if len(runs) < 2 || !hasHigh {
		return nil
	}
	return c.cutSpans(sp, ts, ws, b, runs, powerstate.Background, c.prevLevel, false)
}

// carveGrid reads ws in blocks just long enough for carveContrast block σ
// between the levels hi and lo, and returns the block length and the runs
// of blocks on either side of their midpoint (cutRuns, at least 2 ms and
// 3 blocks each); ok is false when such blocks would be longer than 3 ms
// (the step does not stand out within a few ms) or ws holds fewer than
// two runs' worth of them.
func (c *Classifier) carveGrid(ws []float64, hi, lo float64) (b int, runs []cutRun, ok bool) {
	b = max(1, int(math.Ceil(math.Pow(carveContrast*c.sigma/(hi-lo), 2))))
	if time.Duration(b)*c.period > 3*time.Millisecond {
		return 0, nil, false
	}
	minRun := max(3, int(math.Ceil(float64(2*time.Millisecond/c.period)/float64(b))))
	nb := len(ws) / b
	if nb < 2*minRun {
		return 0, nil, false
	}
	return b, cutRuns(ws, b, nb, (hi+lo)/2, minRun), true
}

// cutRun is a run of whole blocks on one side of a cut: above it (a
// burst's or a rise's level) or below.
type cutRun struct {
	above    bool
	from, to int // blocks
}

// cutRuns splits the nb whole blocks of b samples of ws at cut into runs
// on one side of it (a block at the cut is above it); a run shorter than
// minRun blocks (noise, or the block a change falls in) joins the run
// before it, and a short first run the second. The last run reaches
// block nb.
func cutRuns(ws []float64, b, nb int, cut float64, minRun int) []cutRun {
	var runs []cutRun
	for k := range nb {
		above := !(meanOf(ws[k*b:(k+1)*b]) < cut)
		if n := len(runs); n > 0 && runs[n-1].above == above {
			runs[n-1].to = k + 1
			continue
		}
		runs = append(runs, cutRun{above, k, k + 1})
	}
	var keep []cutRun
	for _, r := range runs {
		n := len(keep)
		switch {
		case n > 0 && (r.to-r.from < minRun || keep[n-1].above == r.above):
			keep[n-1].to = r.to
		case n == 1 && keep[0].to-keep[0].from < minRun:
			keep[0] = cutRun{r.above, 0, r.to} // a short first run joins the second
		default:
			keep = append(keep, r)
		}
	}
	keep[len(keep)-1].to = nb
	return keep
}

// cutSpans makes a span of each of runs over sp's samples (times ts,
// readings ws, in blocks of b): state up for a run above the cut, down
// for one below, the edges between them exact. With outer the parts keep
// sp's outer edges (its start, and whether each is exact); without, the
// first part starts at its first sample and the outer edges are left for
// RefineBurstEdges.
func (c *Classifier) cutSpans(sp Span, ts []hostclock.Time, ws []float64, b int, runs []cutRun, up, down powerstate.State, outer bool) []Span {
	out := make([]Span, 0, len(runs))
	last := len(runs) - 1
	for i, r := range runs {
		from, to := r.from*b, r.to*b
		if i == last {
			to = len(ws) // the samples after the last whole block
		}
		st := down
		if r.above {
			st = up
		}
		end := sp.End
		if i < last {
			end = ts[to]
		}
		p := Span{State: st, Start: ts[from], End: end, Samples: to - from, MeanW: units.Watts(meanOf(ws[from:to])),
			MinW: units.Watts(math.Inf(1)), MaxW: units.Watts(math.Inf(-1)), ExactStart: i > 0, ExactEnd: i < last,
			Clear: c.th.clearCounts(ws[from:to], c.clearMargin)}
		if outer {
			p.ExactStart, p.ExactEnd = p.ExactStart || sp.ExactStart, p.ExactEnd || sp.ExactEnd
			if i == 0 {
				p.Start = sp.Start
			}
		}
		for _, w := range ws[from:to] {
			p.MinW, p.MaxW = min(p.MinW, units.Watts(w)), max(p.MaxW, units.Watts(w))
		}
		out = append(out, p)
	}
	return out
}

func meanOf(ws []float64) float64 {
	var s float64
	for _, w := range ws {
		s += w
	}
	return s / float64(len(ws))
}
