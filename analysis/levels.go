package analysis

import (
	"fmt"
	"math"
	"sort"

	"github.com/idlewatt/idlewatt/capture"
	"github.com/idlewatt/idlewatt/internal/stat"
	"github.com/idlewatt/idlewatt/states/detect"
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

// modeHist is a sparse histogram of block means: 4096 bins per octave
// (relative width 0.017 %), negative means mirrored, each bin keeping its
// count and sum so a bin's values are read at their mean.
type modeHist struct {
	bins map[int32]*modeBin
	n    int
}

type modeBin struct {
	n, sum float64
}

const modeSub = 12

func modeKey(x float64) int32 {
	a := math.Abs(x)
	if !(a >= 0x1p-40) {
		return 0
	}
	bits := math.Float64bits(a)
	e := int32(bits>>52) - 1023 + 64 // a ≥ 2^-40: e ≥ 24
	k := e<<modeSub | int32(bits>>(52-modeSub))&(1<<modeSub-1)
	if x < 0 {
		return -k
	}
	return k
}

func (h *modeHist) add(x float64) {
	if h.bins == nil {
		h.bins = map[int32]*modeBin{}
	}
	k := modeKey(x)
	b := h.bins[k]
	if b == nil {
		b = &modeBin{}
		h.bins[k] = b
	}
	b.n++
	b.sum += x
	h.n++
}

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

// modePoint is a bin of one or more contexts' histograms: its values' mean
// and count, and the count by context.
type modePoint struct {
	x, n  float64
	byCtx [numCtx]float64
}

// points merges the histograms of the contexts in use into points by x.
func points(hs *[numCtx]modeHist, use func(learnCtx) bool) []modePoint {
	m := map[int32]*modePoint{}
	for c := range numCtx {
		if !use(learnCtx(c)) {
			continue
		}
		for k, b := range hs[c].bins {
			p := m[k]
			if p == nil {
				p = &modePoint{}
				m[k] = p
			}
			p.x += b.sum // a sum until divided below
			p.n += b.n
			p.byCtx[c] += b.n
		}
	}
	out := make([]modePoint, 0, len(m))
	for _, p := range m {
		p.x /= p.n
		out = append(out, *p)
	}
	sort.Slice(out, func(a, b int) bool { return out[a].x < out[b].x })
	return out
}

// mode is one mode of the block means.
type mode struct {
	x     float64 // the level: the mean of the region's blocks within 2 bandwidths of the peak
	n     float64 // blocks in the mode's region (valley to valley)
	byCtx [numCtx]float64
	peak  float64 // the density's height at the peak
}

// mergeRatio is how deep a valley must be, as a fraction of the lower of
// the two peaks it separates, for them to count as two levels: for two
// equal normal modes with the density's bandwidth, about 3.5 σ_b apart.
const mergeRatio = 0.5

// seedRatio is the merge ratio of the modes that seed the mixture: more
// of them, the mixture decides; maxSeeds bounds them (the largest).
const (
	seedRatio = 0.8
	maxSeeds  = 10
)

// modes finds the modes of pts (sorted by x) at bandwidth h, highest x
// first, dropping those with fewer than minN blocks; two peaks count as one
// unless the valley between them is deeper than ratio of the lower.
func modes(pts []modePoint, h, minN, ratio float64) []mode {
	if len(pts) == 0 || !(h > 0) {
		return nil
	}
	d := newDensity(pts, h)
	pk := d.peaks(ratio)
	// Regions valley to valley; each mode's level by a mean shift within
	// 2h of its peak, inside its region.
	var out []mode
	start := 0
	for m, i := range pk {
		end := len(d.cs)
		if m+1 < len(pk) {
			v, _ := d.valley(i, pk[m+1])
			end = v
		}
		if md := d.mode(i, start, end, h); md.n >= minN {
			out = append(out, md)
		}
		start = end
	}
	sort.Slice(out, func(a, b int) bool { return out[a].x > out[b].x })
	return out
}

// density is a kernel density of block means of bandwidth h, read at the
// occupied cells of a grid of h/densityPer.
type density struct {
	cs []densityCell
	f  []float64 // the density at each cell
}

type densityCell struct {
	k     int64
	n     float64
	sum   float64
	byCtx [numCtx]float64
}

// densityPer is the grid's cells per bandwidth, densityReach how many
// cells the kernel reaches (4 bandwidths).
const (
	densityPer   = 4
	densityReach = 4 * densityPer
)

// newDensity coalesces pts (sorted by x) onto a grid of h/4 cells, then
// the density at each occupied cell from the cells within 4h.
func newDensity(pts []modePoint, h float64) *density {
	g := h / densityPer
	var cs []densityCell
	for _, p := range pts {
		k := int64(math.Floor(p.x / g))
		if len(cs) == 0 || cs[len(cs)-1].k != k {
			cs = append(cs, densityCell{k: k})
		}
		c := &cs[len(cs)-1]
		c.n += p.n
		c.sum += p.x * p.n
		for i := range c.byCtx {
			c.byCtx[i] += p.byCtx[i]
		}
	}
	f := make([]float64, len(cs))
	lo := 0
	for i := range cs {
		for cs[i].k-cs[lo].k > densityReach {
			lo++
		}
		for j := lo; j < len(cs) && cs[j].k-cs[i].k <= densityReach; j++ {
			d := float64(cs[j].k-cs[i].k) / densityPer
			f[i] += cs[j].n * math.Exp(-0.5*d*d)
		}
	}
	return &density{cs: cs, f: f}
}

// far: for i < j, the density is ~0 between them.
func (d *density) far(i, j int) bool { return d.cs[j].k-d.cs[i].k > densityReach }

// peaks are the local maxima, merged while the valley between two is
// shallower than ratio of the lower (the lower dropped).
func (d *density) peaks(ratio float64) []int {
	f := d.f
	var pk []int
	for i := range d.cs {
		up := i == 0 || d.far(i-1, i) || f[i] > f[i-1]
		down := i+1 == len(d.cs) || d.far(i, i+1) || f[i] >= f[i+1]
		if up && down {
			pk = append(pk, i)
		}
	}
	for len(pk) > 1 {
		best, br := -1, ratio
		for i := 0; i+1 < len(pk); i++ {
			_, v := d.valley(pk[i], pk[i+1])
			if r := v / math.Min(f[pk[i]], f[pk[i+1]]); r > br {
				best, br = i, r
			}
		}
		if best < 0 {
			break
		}
		drop := best
		if f[pk[best]] > f[pk[best+1]] {
			drop = best + 1
		}
		pk = append(pk[:drop], pk[drop+1:]...)
	}
	return pk
}

// valley is the boundary between peaks a < b — the first cell of b's
// side: the lowest cell between them, or the cell after a gap — and the
// density there.
func (d *density) valley(a, b int) (int, float64) {
	at, v := a+1, math.Inf(1)
	for i := a; i < b; i++ {
		if d.far(i, i+1) {
			return i + 1, 0
		}
		if d.f[i+1] < v {
			at, v = i+1, d.f[i+1]
		}
	}
	return at, v
}

// mode is the peak at cell i over the region [start, end): its blocks,
// and its level by a mean shift within 2h of the peak, inside the region.
func (d *density) mode(i, start, end int, h float64) mode {
	cs := d.cs
	md := mode{peak: d.f[i]}
	for j := start; j < end; j++ {
		md.n += cs[j].n
		for c := range md.byCtx {
			md.byCtx[c] += cs[j].byCtx[c]
		}
	}
	x := cs[i].sum / cs[i].n
	for range 4 {
		var s, n float64
		for j := start; j < end; j++ {
			if cx := cs[j].sum / cs[j].n; math.Abs(cx-x) <= 2*h {
				s += cs[j].sum
				n += cs[j].n
			}
		}
		if n > 0 {
			x = s / n
		}
	}
	md.x = x
	return md
}

// dominant is the mode with the most blocks, false without one.
func dominant(ms []mode) (mode, bool) {
	if len(ms) == 0 {
		return mode{}, false
	}
	best := ms[0]
	for _, m := range ms[1:] {
		if m.n > best.n {
			best = m
		}
	}
	return best, true
}

// sigma is the noise of one block mean: from the median absolute
// difference of block means 4 blocks apart, and of neighbours, whichever
// is larger — neighbours alone miss noise correlated over more than a
// block; each moves only at the few pairs a level step separates.
func (b *blockScale) sigma() float64 {
	s := 0.0
	for _, r := range []*reservoir{&b.d1, &b.d4} {
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

// devslpZ is how many standard errors below the level it sits at outside
// the pin the DEVSLP-asserted level must be to be DevSlp, and
// devslpRel the fraction of that level it must be below it by at least.
const (
	devslpZ   = 4.5
	devslpRel = 0.05
)

// minLevelW is the least power a learned level is given: 1 nW. A level
// at or below 0 W (a DevSlp floor under one LSB of a quantised meter, its
// readings 0) is present; in Levels 0 means absent.
const minLevelW = 1e-9

// minLevelS is the least quiet time a level must hold, 50 ms (and
// minLevelShare the least share of the quiet time) to count.
const (
	minLevelS     = 0.05
	minLevelShare = 0.002
)

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
	f.h = math.Max(f.sb, math.Max(0.5*l.lsbW(hdr), 1e-7))
	var total float64
	for c := range numCtx {
		total += float64(b.hist[c].n)
	}
	f.minN = math.Max(minLevelS/f.blockS, minLevelShare*total)
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
		if m, ok := dominant(modes(points(&b.hist, only(c)), f.h, f.minN, mergeRatio)); ok {
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
	mp, hasMP := dominant(modes(points(&long.hist, only(ctxMaxPerf)), f.h, f.minN, mergeRatio))
	dp, hasDP := dominant(modes(points(&long.hist, only(ctxPin)), f.h, f.minN, mergeRatio))
	mp.x, dp.x = onto(mp.x), onto(dp.x) // a half of a merged doublet is the doublet
	if !nm.nameIdle(long, mp, hasMP) {
		out.Err = fmt.Sprintf("levels not learned: no level held for %.0f ms among %.0f ms of quiet time", f.minN*blockS*1e3, float64(long.blocks)*blockS*1e3)
		return out
	}
	if hasDP {
		nm.nameDevSlpAtPin(l.cycles, dp)
	}
	if nm.lv.DevSlp == 0 {
		nm.nameHBADevSlp()
	}
	nm.nameRest()
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
	out.Levels, out.Evidence = lv, ev
	return out
}

// naming is nameLevels' work: the modes, highest first, what each is
// named and where it came from, the levels and their evidence.
type naming struct {
	f      scaleFit
	blockS float64
	all    []mode
	named  []string
	from   []string
	ev     map[string]string
	lv     detect.Levels
	idle   int
	se     func(n float64) float64 // the standard error of a level held n blocks
}

// gather collects the modes: the long blocks' fit, the levels the short
// blocks resolve and the long ones do not, the plateaus of the power after
// I/O, sorted highest first, the doublets merged; onto maps a level inside
// a merged doublet onto it.
func (nm *naming) gather(l *levelLearner, hdr capture.Header) (onto func(float64) float64) {
	long := &l.scales[0]
	all := nm.f.all
	from := make([]string, len(all))
	// Levels the short blocks resolve and the long ones do not have: held
	// for tens of ms at a time (a Partial between I/O and Slumber).
	sf := l.fitScale(&l.scales[1], hdr)
	for _, m := range sf.all {
		if nearest(all, m.x, 3*sf.h) < 0 {
			k := float64(long.per) / float64(l.scales[1].per)
			m.n /= k
			for c := range m.byCtx {
				m.byCtx[c] /= k
			}
			all = append(all, m)
			from = append(from, fmt.Sprintf(" (%.0f ms blocks)", sf.blockS*1e3))
		}
	}
	// Plateaus of the power after I/O the blocks do not resolve.
	for _, c := range []learnCtx{ctxLPM, ctxMedium, ctxMinPower} {
		for _, pl := range l.post[c].plateaus(c) {
			if nearest(all, pl.w, 2*nm.f.sb) >= 0 {
				continue
			}
			m := mode{x: pl.w, n: (pl.to - pl.from) / 1e3 * float64(pl.stretches) / nm.blockS}
			m.byCtx[c] = m.n
			all = append(all, m)
			from = append(from, fmt.Sprintf(" (the power after I/O under %s: held from %.0f to %.0f ms after it, over %d stretches)", ctxNames[c], pl.from, pl.to, pl.stretches))
		}
	}
	ix := make([]int, len(all))
	for i := range ix {
		ix[i] = i
	}
	sort.SliceStable(ix, func(a, b int) bool { return all[ix[a]].x > all[ix[b]].x })
	sorted, sfrom := make([]mode, len(all)), make([]string, len(all))
	for i, j := range ix {
		sorted[i], sfrom[i] = all[j], from[j]
	}
	nm.all, nm.from, onto = mergeDoublets(sorted, sfrom, long.telegraphStep())
	nm.named = make([]string, len(nm.all))
	return onto
}

// nameIdle names active idle — the dominant mode of quiet time under
// max_performance (mp), where the link never leaves active; else the
// highest level that is not background work — and the levels above it
// background. false when there is no level.
func (nm *naming) nameIdle(long *blockScale, mp mode, hasMP bool) bool {
	all := nm.all
	idle := -1
	if hasMP {
		idle = nearest(all, mp.x, math.Max(3*nm.f.h, 5*nm.se(mp.n)))
		if idle < 0 {
			all = append([]mode{mp}, all...)
			nm.named = append([]string{""}, nm.named...)
			nm.from = append([]string{""}, nm.from...)
			sort.SliceStable(all, func(a, b int) bool { return all[a].x > all[b].x })
			idle = nearest(all, mp.x, 0)
		}
		nm.ev["idle"] = "the quiet time under max_performance (the link stays active)"
	} else if len(all) > 0 {
		// The highest level that is not background work: background is
		// entered from a lower level without I/O and left back to it; the
		// link is entered at the end of I/O, or from above.
		up, down, starts := make([]float64, len(all)), make([]float64, len(all)), make([]float64, len(all))
		for _, st := range long.steps {
			fi, ti := nearest(all, st.from, 0), nearest(all, st.to, 0)
			if fi == ti {
				continue
			}
			if all[ti].x > all[fi].x {
				up[ti]++
			} else {
				down[ti]++
			}
		}
		for _, b := range long.starts.bins {
			starts[nearest(all, b.sum/b.n, 0)] += b.n
		}
		idle = 0
		for idle+1 < len(all) && up[idle] >= 3 && up[idle] > 2*(down[idle]+starts[idle]) {
			idle++
		}
		nm.ev["idle"] = "the highest level of quiet time that is not background work (entered from below without I/O); no max_performance time recorded"
	}
	nm.all = all
	if idle < 0 {
		return false
	}
	nm.idle = idle
	nm.lv.Idle = units.Watts(all[idle].x)
	nm.named[idle] = "idle"
	for i := range idle {
		nm.named[i] = "background"
	}
	return true
}

// nameDevSlpAtPin names DevSlp: the level of DEVSLP-asserted time (dp),
// if it lies below the level the drive held just before an assertion (a
// drive that ignores the pin stays there; one already in the HBA's own
// DevSlp was there).
func (nm *naming) nameDevSlpAtPin(cycles []pinCycle, dp mode) {
	all, idle, se := nm.all, nm.idle, nm.se
	// Cycle by cycle: a drop from the level held just before the
	// assertion to the level under the pin, beyond both means' errors.
	// Cycle by cycle, the level the drive rested at before the
	// assertion: the median of the 10 ms means before it that lie
	// nearest a level below active idle (at least 3 of them; else
	// those at idle) — a GC burst over most of the window, a wake, is
	// not where the drive rests. Against the median under the pin (1.2533 σ_b √(k/n) each),
	// in one cycle or pooled over all (weighted by 1/SE²: under a noise
	// that makes one cycle's drop uncertain, two are surer; a drive
	// that ignores the pin drops by nothing in any).
	var sw, swd float64
	var best, bestPre float64
	for _, cy := range cycles {
		if len(cy.pre) < 3 || len(cy.pin) < 3 {
			continue
		}
		var rest, atIdle []float64
		for _, x := range cy.pre {
			switch i := nearest(all, x, 0); {
			case i > idle:
				rest = append(rest, x)
			case i == idle:
				atIdle = append(atIdle, x)
			}
		}
		if len(rest) < 3 {
			rest = atIdle // a drive that rests at idle (no link power management)
		}
		if len(rest) < 3 {
			continue
		}
		pre, pin := quantileOf(rest, 0.5), quantileOf(cy.pin, 0.5)
		d := pre - pin
		u := 1.2533 * math.Hypot(se(float64(len(rest))), se(float64(len(cy.pin))))
		if !(u > 0) {
			u = 1e-12
		}
		sw += 1 / (u * u)
		swd += d / (u * u)
		if d > devslpRel*pre && d/u > best {
			best, bestPre = d/u, pre
		}
	}
	pooled, pooledD := 0.0, 0.0
	if sw > 0 {
		pooledD = swd / sw
		pooled = pooledD * math.Sqrt(sw)
	}
	if dp.x < float64(nm.lv.Idle) && (best >= devslpZ || (pooled >= devslpZ && pooledD > devslpRel*dp.x)) {
		// A floor under one LSB of a quantised meter reads 0 W, which
		// Levels takes for "no DevSlp": such a level is present, at
		// minLevelW (before, its drives' Slumber was named at the
		// floor and their real Slumber left unnamed: campaign 1:66).
		nm.lv.DevSlp = units.Watts(math.Max(dp.x, minLevelW))
		nm.ev["devslp"] = fmt.Sprintf("DEVSLP-asserted time: the power fell below the level held before the assertions (%.1f standard errors in one cycle, from %.3g W; %.1f pooled over the cycles)", best, bestPre, pooled)
	}
	if nm.lv.DevSlp > 0 {
		// The HBA's own DevSlp outside the pin: levels at the pin's
		// (within the two means' errors), or below it.
		for i := idle + 1; i < len(all); i++ {
			if math.Abs(all[i].x-dp.x) <= devslpZ*math.Hypot(se(dp.n), se(all[i].n)) || all[i].x < dp.x {
				nm.named[i] = "devslp"
			}
		}
	}
}

// nameHBADevSlp names DevSlp without a pin, or with the pin's drop not
// resolved (the meter's level steps widen every mean's error): the HBA's
// own DevSlp is a level below another, reached only under a policy that
// lets the HBA enter it.
func (nm *naming) nameHBADevSlp() {
	all := nm.all
	if n := len(all); n-nm.idle-1 >= 2 {
		i, j := n-1, n-2
		if m := all[i]; m.byCtx[ctxMinPower] >= 0.9*m.n && all[j].byCtx[ctxMinPower] < 0.9*all[j].n && m.x < 0.5*all[j].x {
			nm.lv.DevSlp = units.Watts(math.Max(m.x, minLevelW))
			nm.named[i] = "devslp"
			nm.ev["devslp"] = "a level below the others reached only under min_power (the HBA's own DevSlp)"
		}
	}
}

// nameRest names Partial and Slumber: the highest and the lowest of the
// levels left between idle and DevSlp.
func (nm *naming) nameRest() {
	all, named, from, ev, lv := nm.all, nm.named, nm.from, nm.ev, &nm.lv
	var rest []int
	for i := nm.idle + 1; i < len(all); i++ {
		if named[i] == "" {
			rest = append(rest, i)
		}
	}
	switch n := len(rest); {
	case n == 1:
		m := all[rest[0]]
		if m.byCtx[ctxMedium] >= 0.7*m.n {
			lv.Partial, named[rest[0]] = units.Watts(m.x), "partial"
			ev["partial"] = "the one level below active idle, held under medium_power (Partial only)" + from[rest[0]]
		} else {
			lv.Slumber, named[rest[0]] = units.Watts(math.Max(m.x, minLevelW)), "slumber"
			ev["slumber"] = "the one level between active idle and DevSlp" + from[rest[0]]
		}
	case n == 2:
		lv.Partial, named[rest[0]] = units.Watts(all[rest[0]].x), "partial"
		lv.Slumber, named[rest[1]] = units.Watts(math.Max(all[rest[1]].x, minLevelW)), "slumber"
		ev["partial"] = "the higher level between active idle and DevSlp" + from[rest[0]]
		ev["slumber"] = "the lower level between active idle and DevSlp" + from[rest[1]]
	case n > 2:
		// More levels than the link has between idle and DevSlp: the
		// meter's level steps split a level in two (a random telegraph), or
		// a DevSlp half was not named. Partial is the highest; Slumber the
		// one held longest of the others — the link rests in Slumber; the
		// lowest was a telegraph half of the DevSlp floor (campaign 1:120:
		// Slumber named at 3.3 mW, the true 27.6 mW left unnamed).
		lv.Partial, named[rest[0]] = units.Watts(all[rest[0]].x), "partial"
		k := rest[1]
		for _, i := range rest[2:] {
			if all[i].n > all[k].n {
				k = i
			}
		}
		lv.Slumber, named[k] = units.Watts(math.Max(all[k].x, minLevelW)), "slumber"
		ev["partial"] = "the highest level between active idle and DevSlp" + from[rest[0]]
		ev["slumber"] = "the level held longest below Partial and above DevSlp" + from[k]
	}
}

// nearest is the index of the mode nearest x within tol (any distance
// when tol is 0), -1 if none.
func nearest(ms []mode, x, tol float64) int {
	best, bd := -1, math.Inf(1)
	for i, m := range ms {
		if d := math.Abs(m.x - x); d < bd && (tol == 0 || d <= tol) {
			best, bd = i, d
		}
	}
	return best
}

// quantileOf is the q-quantile of xs (not modified; the lower of the two
// middle values).
func quantileOf(xs []float64, q float64) float64 {
	s := append([]float64(nil), xs...)
	sort.Float64s(s)
	return s[int(q*float64(len(s)-1))]
}

// Doublets (mergeDoublets): two modes a telegraph of level steps made of
// one level — adjacent, at most doubletIsolation of the gaps to their
// other neighbours apart, each holding at least doubletShare of the
// pair's time — merged when at least two such pairs share one spacing
// (within doubletTol): the meter's steps shift every level alike. When
// the capture shows the steps themselves (telegraphStep), a pair that
// spacing apart (within doubletTol) and at most telegraphIsolation of the
// gaps to its neighbours is a doublet, confirmed or not by another pair.
const (
	doubletIsolation   = 0.2
	telegraphIsolation = 0.5
	doubletShare       = 0.2
	doubletTol         = 0.15
)

// A telegraph of level steps (telegraphStep): at least minTelegraphSteps
// steps, telegraphShare of all those seen, of one size within doubletTol,
// taken at levels telegraphSpread times that size apart or more (the
// 10th to 90th percentile of the levels they leave).
const (
	minTelegraphSteps = 20
	telegraphShare    = 0.3
	telegraphSpread   = 5
)

// telegraphStep is the size of the meter's level steps when the capture
// shows them, else 0. A random telegraph (a meter's popcorn noise, a range
// switch) steps by one size in every state the drive is in; the drive's
// own changes step by a different size for each pair of levels, and the
// one change repeated most (DevSlp cycles between two levels) leaves
// from levels only that size apart — not a telegraph.
func (b *blockScale) telegraphStep() float64 {
	if len(b.steps) < minTelegraphSteps {
		return 0
	}
	d := make([]float64, len(b.steps))
	for i, st := range b.steps {
		d[i] = math.Abs(st.to - st.from)
	}
	sort.Float64s(d)
	best, bestK, j0, j1 := 0.0, 0, 0, 0
	for _, x := range d {
		for d[j0] < x*(1-doubletTol) {
			j0++
		}
		for j1 < len(d) && d[j1] <= x*(1+doubletTol) {
			j1++
		}
		if j1-j0 > bestK {
			best, bestK = x, j1-j0
		}
	}
	if bestK < minTelegraphSteps || float64(bestK) < telegraphShare*float64(len(d)) {
		return 0
	}
	var sizes, levels []float64
	for _, st := range b.steps {
		if x := math.Abs(st.to - st.from); math.Abs(x-best) <= doubletTol*best {
			sizes, levels = append(sizes, x), append(levels, st.from)
		}
	}
	size := stat.Median(sizes)
	sort.Float64s(levels)
	if stat.SortedQuantile(levels, 0.9)-stat.SortedQuantile(levels, 0.1) < telegraphSpread*size {
		return 0
	}
	return size
}

// mergeDoublets merges the doublets of ms (sorted by x, highest first) into
// one mode each, at their time-weighted mean (the level under steps that
// spend about half the time in each state), and returns the modes, their
// evidence notes and onto, which maps a level inside a merged doublet
// (a dominant mode found apart, one of its halves) to the merged level.
// Under the campaign's steps family each level of a drive came in two
// 0.9 mW apart (0.18 mA at 5 V), and the halves were named as separate
// states: the upper half of idle background, the lower half of Partial
// Slumber (campaign seed 2, drive 0; seed 1, drive 120).
func mergeDoublets(ms []mode, from []string, step float64) ([]mode, []string, func(float64) float64) {
	id := func(x float64) float64 { return x }
	n := len(ms)
	if n < 4 && !(step > 0 && n >= 2) {
		return ms, from, id
	}
	d := make([]float64, n-1) // d[i]: ms[i] − ms[i+1]
	for i := range d {
		d[i] = ms[i].x - ms[i+1].x
	}
	apart := func(i int, iso float64) bool {
		if d[i] <= 0 {
			return false
		}
		if i > 0 && d[i] > iso*d[i-1] {
			return false
		}
		if i+1 < len(d) && d[i] > iso*d[i+1] {
			return false
		}
		a, b := ms[i].n, ms[i+1].n
		return math.Min(a, b) >= doubletShare*math.Max(a, b)
	}
	isolated := func(i int) bool { return apart(i, doubletIsolation) }
	stepped := func(i int) bool {
		return step > 0 && math.Abs(d[i]-step) <= doubletTol*step && apart(i, telegraphIsolation)
	}
	// The spacing most pairs share.
	best, bestK := 0.0, 0
	for i := range d {
		if !isolated(i) {
			continue
		}
		k := 0
		for j := range d {
			if isolated(j) && math.Abs(d[j]-d[i]) <= doubletTol*d[i] {
				k++
			}
		}
		if k > bestK {
			best, bestK = d[i], k
		}
	}
	if bestK < 2 {
		best = 0
	}
	doublet := func(i int) bool {
		return i+1 < n && (best > 0 && isolated(i) && math.Abs(d[i]-best) <= doubletTol*best || stepped(i))
	}
	type span struct{ lo, hi, x float64 }
	var out []mode
	var outFrom []string
	var spans []span
	for i := 0; i < n; i++ {
		if doublet(i) {
			a, b := ms[i], ms[i+1]
			m := mode{n: a.n + b.n, peak: math.Max(a.peak, b.peak)}
			m.x = (a.x*a.n + b.x*b.n) / m.n
			for c := range m.byCtx {
				m.byCtx[c] = a.byCtx[c] + b.byCtx[c]
			}
			out = append(out, m)
			outFrom = append(outFrom, from[i]+fmt.Sprintf(" (two modes %.3g W apart merged: the meter's level steps)", d[i]))
			spans = append(spans, span{lo: b.x, hi: a.x, x: m.x})
			i++
			continue
		}
		out = append(out, ms[i])
		outFrom = append(outFrom, from[i])
	}
	onto := func(x float64) float64 {
		for _, s := range spans {
			if w := 0.25 * (s.hi - s.lo); x >= s.lo-w && x <= s.hi+w {
				return s.x
			}
		}
		return x
	}
	return out, outFrom, onto
}
