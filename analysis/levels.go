package analysis

import (
	"fmt"
	"math"
	"sort"

	"github.com/idlewatt/idlewatt/capture"
	"github.com/idlewatt/idlewatt/internal/stat"
	"github.com/idlewatt/idlewatt/units"
)

// Levels from the modes of quiet block means (docs/analysis.md, "States:
// levels learned from the capture"). The block means of one level scatter
// around it by the block noise σ_b; the modes of a kernel density estimate
// with bandwidth σ_b are the levels, once modes that a shallow valley
// separates (less than half the lower peak deep) are merged and modes with
// less than 100 ms (and 0.2 % of the quiet time) behind them are dropped
// — the blocks a transition splits lie between levels and form none. What
// the host had set names them: quiet time under max_performance is active
// idle; a level reached only with DEVSLP asserted is DevSlp; the levels in
// between are Partial (the higher) and Slumber (the lower).
//
// Here: one block scale's noise and its fit (fitScale), and nameLevels;
// the modes themselves in modes.go, the meter's telegraph doublets merged
// in doublets.go, the naming in naming.go.

// oneLevelSigma is the spread of one level's block means, measured where
// the link holds one level: quiet blocks under max_performance (active
// idle; background work above it). It is the smaller of two estimates
// that fail apart: the shorth of those blocks (half of them decide, so
// bursts above the level or a second level holding less than half do
// not), and the median difference of block means ringLen apart in such
// a stretch (a second level the link held for long — the link left in
// Partial as the policy changed — changes few of them). Level steps of
// the meter (a random telegraph) widen both: the lag-1 and lag-4
// differences' medians (sigma) pass over them as they pass over the
// drive's own steps, and a level read at that σ splits into modes a
// telegraph step apart. ok is false with less than minSpreadS of such
// blocks or too few differences. The histogram's bins (0.017 % wide) read
// a spread of a few bins low, which leaves sigma's σ standing.
func (b *blockScale) oneLevelSigma(blockS float64) (float64, bool) {
	h := &b.hist[ctxMaxPerf]
	if float64(h.n)*blockS < minSpreadS || len(b.dMP.v) < minSpreadDiffs {
		return 0, false
	}
	pts := points(&b.hist, only(ctxMaxPerf))
	x, w := make([]float64, len(pts)), make([]float64, len(pts))
	for i, p := range pts {
		x[i], w[i] = p.x, p.n
	}
	// The shorth of all of them, then of those within shorthKeep of its
	// σ of its middle: bursts above the level hold some of the half the
	// first interval needs, so it reaches further into the level's tails
	// (30 % of blocks in bursts: 1.6 σ); the second holds half of the
	// level's own blocks.
	l, mid := stat.WeightedShorth(x, w)
	var xs, ws []float64
	for i := range x {
		if math.Abs(x[i]-mid) <= shorthKeep*stat.ShorthScale*l {
			xs, ws = append(xs, x[i]), append(ws, w[i])
		}
	}
	l, _ = stat.WeightedShorth(xs, ws)
	sh := stat.ShorthScale * l
	d := stat.MADScale * b.dMP.median() / math.Sqrt2
	return math.Min(sh, d), true
}

// minSpreadS is the least quiet time under max_performance whose blocks'
// spread is taken as one level's (oneLevelSigma): 0.5 s (50 blocks of 10
// ms); minSpreadDiffs the fewest differences.
const (
	minSpreadS     = 0.5
	minSpreadDiffs = 32
	shorthKeep     = 4
)

// sigma is the noise of one block mean: from the median absolute
// difference of block means 4 blocks apart, and of neighbours, whichever
// is larger — neighbours alone miss noise correlated over more than a
// block; each moves only at the few pairs a level step separates.
func (b *blockScale) sigma() float64 {
	s := 0.0
	for _, r := range []*medReservoir{&b.d1, &b.d4} {
		if m := r.median(); !math.IsNaN(m) {
			s = math.Max(s, stat.MADScale*m/math.Sqrt2)
		}
	}
	return s
}

// corr is how many blocks one independent block mean spans: 1 for noise
// that does not outlast a block, (1+ρ)/(1−ρ) for noise correlated ρ from
// one block to the next (AR(1): the variance of a difference at lag L is
// 2σ²(1−ρ^L), so the lag-1 and lag-4 differences give ρ), at most
// maxCorrBlocks.
func (b *blockScale) corr() float64 {
	m1, m4 := b.d1.median(), b.d4.median()
	if !(m1 > 0) || !(m4 > m1) {
		return 1
	}
	r := (m1 / m4) * (m1 / m4) // (1−ρ)/(1−ρ⁴), falling from 1 at ρ=0 to ¼ as ρ→1
	if r <= 0.25 {
		return maxCorrBlocks
	}
	lo, hi := 0.0, 1.0
	for range 50 {
		rho := (lo + hi) / 2
		if (1-rho)/(1-math.Pow(rho, 4)) > r {
			lo = rho
		} else {
			hi = rho
		}
	}
	rho := (lo + hi) / 2
	return math.Min(maxCorrBlocks, (1+rho)/(1-rho))
}

// maxCorrBlocks bounds corr.
const maxCorrBlocks = 50

// lsbW is the power of one current LSB on the drive's rails at their
// nominal voltage (the largest), 0 when the header states none.
func (l *levelLearner) lsbW(h capture.Header) float64 {
	var w float64
	for _, ch := range l.rails {
		c := h.Channels[ch]
		w = math.Max(w, float64(c.CurrentLSB)*float64(c.Rail.Nominal()))
	}
	return w
}

// stepW is the power step the readings are resolved to: the header's LSB
// (lsbW) or, larger, the smallest step seen between neighbouring quiet
// readings (quantum) — a quantised meter whose capture states no LSB,
// read with noise under one step, moves its readings by whole steps only.
// Without it, an independent generator's capture (17.5 µA steps, 0.05–1
// step of noise, no LSB in its header) had its idle level split into
// modes 2–16 µW apart on an 88 µW step, read as idle and Partial: 35
// points of idle as Partial (seed 10 drives 4, 24, 69). For noisy
// readings the smallest step is far under the noise and changes nothing.
func (l *levelLearner) stepW(h capture.Header) float64 {
	q := l.quantum.step(l.quietN)
	if math.IsInf(q, 1) {
		q = 0
	}
	return math.Max(l.lsbW(h), q)
}

// minLevelS is the least quiet time a level must hold, 50 ms (and
// minLevelShare the least share of the quiet time, but never more than
// minLevelCapS) to count.
const (
	minLevelS     = 0.05
	minLevelShare = 0.002
	minLevelCapS  = 0.5
)

// minLevelTime is how much of quiet seconds of quiet time a level must
// hold to count: max(minLevelS, minLevelShare × quiet), at most
// minLevelCapS. The share keeps a long capture's stray modes out; uncapped
// it grew with the capture, and a level a drive held for a whole second
// went unlearned in a long run — a hub whose neighbour cycled DEVSLP for
// 633 s left three drives' idle at 0.17 % of their quiet time (1.1 s,
// under 0.2 %: 1.3 s), their Slumber named active idle (campaign seed 19
// hub 44: active_idle_w 4.7 mW for 52 mW). Half a second of a level, 50
// blocks of 10 ms, is evidence whatever the capture's length.
func minLevelTime(quiet float64) float64 {
	return math.Max(minLevelS, math.Min(minLevelShare*quiet, minLevelCapS))
}

// scaleFit is one block scale's levels outside the pin.
type scaleFit struct {
	all    []mode
	sb, h  float64 // the block noise and the bandwidth (sb, floored)
	corr   float64 // blocks per independent block mean
	minN   float64
	blockS float64
}

// fitScale fits the levels of one block scale.
func (l *levelLearner) fitScale(b *blockScale, hdr capture.Header) scaleFit {
	f := scaleFit{sb: b.sigma(), blockS: float64(hdr.RateHz.Span(float64(b.per)))}
	if one, ok := b.oneLevelSigma(f.blockS); ok && one > f.sb {
		f.sb = one
	}
	f.h = math.Max(f.sb, math.Max(0.5*l.stepW(hdr), 1e-7))
	var total float64
	for c := range numCtx {
		total += float64(b.hist[c].n)
	}
	f.minN = minLevelTime(total*f.blockS) / f.blockS
	pts := points(&b.hist, func(c learnCtx) bool { return c != ctxPin })
	var seeds []float64
	sm := modes(pts, f.h, 3, seedRatio)
	sort.Slice(sm, func(a, b int) bool { return sm[a].n > sm[b].n })
	for i, m := range sm {
		if i < maxSeeds {
			seeds = append(seeds, m.x)
		}
	}
	for _, c := range []learnCtx{ctxMaxPerf, ctxPin} {
		ms := modes(points(&b.hist, only(c)), f.h, f.minN, mergeRatio)
		if m, ok := dominant(ms); ok {
			seeds = append(seeds, m.x)
		}
		if m, ok := lowest(ms); ok && c == ctxMaxPerf && len(ms) > 1 {
			seeds = append(seeds, m.x)
		}
	}
	f.corr = b.corr()
	for _, c := range mixture(cellsOf(pts, f.h/4), seeds, f.h, f.minN, f.corr) {
		f.all = append(f.all, mode{x: c.mu, n: c.n, byCtx: c.byCtx})
	}
	return f
}

func only(x learnCtx) func(learnCtx) bool { return func(c learnCtx) bool { return c == x } }

// nameLevels learns and names the levels (the drive has enough quiet blocks).
func (l *levelLearner) nameLevels(out LevelLearning, hdr capture.Header, blockS float64) LevelLearning {
	long := &l.scales[0]
	f := l.fitScale(long, hdr)
	out.BlockSigmaW = units.Watts(f.sb)
	nm := &naming{f: f, blockS: blockS, ev: map[string]string{}}
	onto := nm.gather(l, hdr)
	nm.se = func(n float64) float64 { return f.sb * math.Sqrt(f.corr/math.Max(n, 1)) }
	mp, hasMP := lowest(modes(points(&long.hist, only(ctxMaxPerf)), f.h, f.minN, mergeRatio))
	dp, hasDP := dominant(modes(points(&long.hist, only(ctxPin)), f.h, f.minN, mergeRatio))
	mp.x, dp.x = onto(mp.x), onto(dp.x) // a half of a merged doublet is the doublet
	if !nm.nameIdle(long, mp, hasMP) {
		out.Err = fmt.Sprintf("levels not learned: no level held for %.0f ms among %.0f ms of quiet time", f.minN*blockS*1e3, float64(long.blocks)*blockS*1e3)
		return out
	}
	switch {
	case l.noDevSlp:
		// Its lowest level held under min_power is Slumber, not the HBA's
		// DevSlp (campaign seed 23 drive 160: Slumber read as DevSlp,
		// Partial as Slumber, 66.6 points).
		nm.ev["devslp"] = "not named: the capture records that the drive does not support DevSlp"
	default:
		if hasDP {
			nm.nameDevSlpAtPin(l.cycles, dp)
		}
		if nm.lv.DevSlp == 0 {
			nm.nameHBADevSlp()
		}
	}
	nm.nameRest()
	nm.nameBackground()
	lv, ev := nm.lv, nm.ev
	if lv.DevSlp > 0 && ((lv.Slumber > 0 && lv.DevSlp >= lv.Slumber) || (lv.Partial > 0 && lv.DevSlp >= lv.Partial)) {
		lv.DevSlp = 0
		delete(ev, "devslp")
	}
	for i, m := range nm.all {
		lm := LearnedMode{W: units.Watts(m.x), S: units.Seconds(m.n * blockS), State: nm.named[i], ByCtx: map[string]units.Seconds{}}
		for c, x := range m.byCtx {
			if x*blockS >= 1e-4 {
				lm.ByCtx[ctxNames[c]] = units.Seconds(x * blockS)
			}
		}
		out.Modes = append(out.Modes, lm)
	}
	if err := lv.Validate(); err != nil {
		out.Err = "levels not learned: " + err.Error()
		return out
	}
	out.Levels, out.Evidence, out.LevelStepW, out.idleMP = lv, ev, units.Watts(nm.stepW), nm.idleMP
	if q := l.quantum.step(l.quietN); !math.IsInf(q, 1) && q > l.lsbW(hdr) {
		out.readingStep = q
	}
	if nm.one != nil {
		out.IdleSpreadW = units.Watts(nm.one.width)
	}
	return out
}

// medReservoir is a reservoir whose median is kept as values come: sigma
// asks for it every 256 blocks, and selecting it afresh from 16,384
// differences each time was a twentieth of a report's time. The upper
// median of v is hi's least: lo holds the ⌊n/2⌋ smallest (a max-heap), hi
// the rest (a min-heap). A thinning of v rebuilds them; with a NaN in v
// (never, from finite powers) the median is selected from v as before.
type medReservoir struct {
	reservoir
	lo, hi []float64
	nan    int
}

func (r *medReservoir) add(x float64) {
	n0 := len(r.v)
	r.reservoir.add(x)
	switch len(r.v) {
	case n0:
	case n0 + 1:
		r.push(x)
	default: // thinned
		r.lo, r.hi, r.nan = r.lo[:0], r.hi[:0], 0
		for _, x := range r.v {
			r.push(x)
		}
	}
}

// median is the reservoir's upper median, NaN when empty.
func (r *medReservoir) median() float64 {
	if r.nan > 0 || len(r.hi) == 0 {
		return r.reservoir.median()
	}
	return r.hi[0]
}

func (r *medReservoir) push(x float64) {
	switch {
	case math.IsNaN(x):
		r.nan++
		return
	case len(r.hi) > 0 && x < r.hi[0]:
		r.lo = heapPush(r.lo, x, greater)
	default:
		r.hi = heapPush(r.hi, x, less)
	}
	// Rebalance: lo holds ⌊n/2⌋.
	switch n := len(r.lo) + len(r.hi); {
	case len(r.lo) > n/2:
		var m float64
		r.lo, m = heapPop(r.lo, greater)
		r.hi = heapPush(r.hi, m, less)
	case len(r.lo) < n/2:
		var m float64
		r.hi, m = heapPop(r.hi, less)
		r.lo = heapPush(r.lo, m, greater)
	}
}

func less(a, b float64) bool    { return a < b }
func greater(a, b float64) bool { return a > b }

// heapPush adds x to the binary heap h ordered by before (h[0] first).
func heapPush(h []float64, x float64, before func(a, b float64) bool) []float64 {
	h = append(h, x)
	for i := len(h) - 1; i > 0; {
		p := (i - 1) / 2
		if !before(h[i], h[p]) {
			break
		}
		h[i], h[p] = h[p], h[i]
		i = p
	}
	return h
}

// heapPop removes and returns h's first.
func heapPop(h []float64, before func(a, b float64) bool) ([]float64, float64) {
	top := h[0]
	n := len(h) - 1
	h[0] = h[n]
	h = h[:n]
	for i := 0; ; {
		c := 2*i + 1
		if c >= n {
			break
		}
		if c+1 < n && before(h[c+1], h[c]) {
			c++
		}
		if !before(h[c], h[i]) {
			break
		}
		h[i], h[c] = h[c], h[i]
		i = c
	}
	return h, top
}
