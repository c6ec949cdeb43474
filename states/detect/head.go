package detect

import (
	"math"

	"github.com/idlewatt/idlewatt/states/powerstate"
	"github.com/idlewatt/idlewatt/units"
)

// headPenalty is the evidence a level carved at a span's head must add
// (Σ (m − L)²/σ² over its blocks, against the span's own level): 25, a
// 5 σ step — MonotoneLevels' RisePenalty.
const headPenalty = RisePenalty

// headMaxBlocks bounds the blocks of a head (its dynamic programme:
// blocks × levels²).
const headMaxBlocks = 1 << 14

// carveHead splits the head of a span that follows an I/O or a shallower
// level into the levels the link passed through on its way down to the
// span's own, and returns the parts (nil: nothing to carve).
//
// After a request the link steps down through its idle timers: idle for a
// few ms, Partial, then Slumber. The window is sized for the closest pair
// of levels (Slumber and DevSlp a few mW apart), and a state must hold
// half of it, so stretches of idle and Partial shorter than that vanish
// into the span after them: an independent generator's drive (idle
// 47.7 mW for 6.8 ms, then Partial 24.4 mW for 8 ms, under 7 mW of noise
// and a 28 ms window) read 22 of its 38 post-I/O idles as Partial, idle
// residency 0.83 points short. The head — the first window of samples,
// or the whole span when shorter — is where such stretches can hide, and
// the levels they can be at are known: the span's own and those above
// it (after a shallower level: those from it down to the span's, the
// level before included, as the median's edge may come early). So the
// head's samples, in blocks of about one noise correlation
// time, are fitted with a staircase of those levels that only goes down
// (the link deepens until the next event), by dynamic programming, each
// step down costing headPenalty; a stretch becomes a span only when the
// samples pay for it. The samples come from the classifier's history ring
// (2¹⁷ samples: 13 s at 10 kS/s, 1.3 s at 100 kS/s): a span longer than
// the ring has lost its head by the time it ends, and is left as the band
// test read it. Power above every level right after the request
// (work finishing, too short for the background band) is nearest the
// highest level and goes with it.
func (c *Classifier) carveHead(sp Span) []Span {
	if !c.adaptive || c.noHeadCarve || sp.Samples < 2 {
		return nil
	}
	own, ok := c.levels.levelOf(sp.State)
	if !ok {
		return nil
	}
	ts, ws, ok := c.hist.between(sp.Start, sp.End)
	if !ok || len(ts) != sp.Samples {
		return nil
	}
	// Readings without noise (a quantised meter, noise under its step)
	// have σ 0: the staircase is then the nearest level sample by sample,
	// fitted with a σ of a twentieth of the closest levels' gap (20 σ
	// apart: a reading between them is the one whose sample the step
	// fell in).
	s1, sig := c.sigma1, c.sigma
	if !(s1 > 0) || !(sig > 0) {
		s1 = c.levels.closestGap() / 20
		sig = s1
		if !(s1 > 0) {
			return nil
		}
	}
	// Blocks of about the noise's integrated correlation time, whose means
	// scatter by the long-run σ over √b.
	tau := sig * sig / (s1 * s1)
	b := max(1, int(math.Ceil(tau)))
	head := min(len(ws), max(len(c.rw), b))
	// A span an I/O ends (a gap between two requests) is fitted whole: its
	// tail, too, may hold levels shorter than the dwell — the link going
	// on down past the span's label (idle for 1.3 ms, then Partial for
	// 1.8 ms until the next request, read as 2.8 ms of idle: the
	// independent generator's seed 11 drive 14, a quantised meter).
	if c.beforeIO && len(ws)/b <= headMaxBlocks {
		head = len(ws)
	}
	nb := head / b
	if nb < 1 || nb > headMaxBlocks {
		return nil
	}
	// The whole span is the head: it may end at any level. Otherwise the
	// head ends at the span's own level.
	whole := nb*b+b > len(ws) && head == len(ws)
	top := math.Inf(1) // after an I/O: every level above the span's
	if c.prevState != powerstate.Active {
		// After a shallower level: the levels from it down to the span's
		// (its own included: the edge may have come early).
		prev, ok := c.levels.levelOf(c.prevState)
		if !ok || prev <= own {
			return nil
		}
		top = prev
	}
	bottom := own
	if whole {
		bottom = math.Inf(-1)
	}
	var lv []level // the levels the head may hold, highest first
	ownAt := -1
	for _, x := range c.levels.ordered() {
		// DevSlp is a link state only the pin (or the HBA) enters: it
		// is not one the link passes through on its own.
		if float64(x.w) > top || float64(x.w) < bottom || (x.s == powerstate.DevSlp && sp.State != powerstate.DevSlp) {
			continue
		}
		if x.s == sp.State {
			ownAt = len(lv)
		}
		lv = append(lv, x)
	}
	if len(lv) < 2 || ownAt < 0 {
		return nil
	}
	vb := sig * sig / float64(b)
	means := make([]float64, nb)
	for k := range nb {
		m := meanOf(ws[k*b : (k+1)*b])
		if math.IsNaN(m) || math.IsInf(m, 0) {
			return nil // a broken reading: the span stays as the band test read it
		}
		means[k] = m
	}
	K := len(lv)
	last := ownAt // the span's own level: no penalty to stay at
	lvLo, lvHi := float64(lv[K-1].w), float64(lv[0].w)
	inf := math.Inf(1)
	cost := make([]float64, K)
	from := make([]int8, nb*K) // the level of block k−1 on the best path to level j at block k: from[k*K+j]
	for j := range K {
		cost[j] = blockCost(means[0], float64(lv[j].w), lvLo, lvHi, vb)
		if j != last {
			cost[j] += headPenalty
		}
	}
	next := make([]float64, K)
	for k := 1; k < nb; k++ {
		for j := range K {
			best, arg := inf, -1
			for i := 0; i <= j; i++ { // only deeper, or the same
				x := cost[i]
				if i != j {
					x += headPenalty
				}
				if x < best {
					best, arg = x, i
				}
			}
			next[j] = best + blockCost(means[k], float64(lv[j].w), lvLo, lvHi, vb)
			from[k*K+j] = int8(arg)
		}
		cost, next = next, cost
	}
	end := last
	if whole {
		for j := range K {
			if cost[j] < cost[end] {
				end = j
			}
		}
	}
	// The path, block by block.
	path := make([]int, nb)
	path[nb-1] = end
	for k := nb - 1; k > 0; k-- {
		path[k-1] = int(from[k*K+path[k]])
	}
	if path[0] == last && path[nb-1] == last {
		return nil // the span's own level throughout (the path only deepens)
	}
	// Parts: runs of one level; the samples after the head (and after the
	// last whole block) go with the last run.
	var out []Span
	k := 0
	for k < nb {
		j := path[k]
		e := k
		for e < nb && path[e] == j {
			e++
		}
		lo, hi := k*b, e*b
		if e == nb {
			hi = len(ws)
		}
		p := Span{State: lv[j].s, Start: ts[lo], End: sp.End, Samples: hi - lo, MeanW: units.Watts(meanOf(ws[lo:hi])),
			MinW: units.Watts(math.Inf(1)), MaxW: units.Watts(math.Inf(-1)),
			ExactStart: k > 0 || sp.ExactStart, ExactEnd: e < nb || sp.ExactEnd,
			Clear: c.th.clearCounts(ws[lo:hi], c.clearMargin)}
		if e < nb {
			p.End = ts[hi]
		}
		if k == 0 {
			p.Start = sp.Start
		}
		for _, w := range ws[lo:hi] {
			p.MinW, p.MaxW = min(p.MinW, units.Watts(w)), max(p.MaxW, units.Watts(w))
		}
		out = append(out, p)
		k = e
	}
	return out
}

func sq(x float64) float64 { return x * x }

// closestGap is the smallest distance between two known levels (W), 0
// with fewer than two.
func (l Levels) closestGap() float64 {
	lv := l.ordered()
	g := 0.0
	for i := 1; i < len(lv); i++ {
		if d := float64(lv[i-1].w - lv[i].w); g == 0 || d < g {
			g = d
		}
	}
	return g
}

// blockCost is a block mean m's cost at level w, (m − w)²/vb, with m
// clipped into the levels' range [lo, hi]: a block beyond every level —
// the read's own power a sample before its stamped start, a wake spike —
// counts as at the nearest end of the range, not as far beyond it. One
// such sample at the end of a gap without noise (σ a twentieth of the
// levels' gap) otherwise outweighed the gap's Partial tail and read it as
// idle (campaign seed 19 drives 35 and 95, quantised: idle +0.06
// points). (Capping each block's cost instead let slow 1/f wander, far
// from both levels, cost them alike and kept a Partial 2 points long:
// independent seed 11 drive 42.)
func blockCost(m, w, lo, hi, vb float64) float64 {
	return sq(min(max(m, lo), hi)-w) / vb
}
