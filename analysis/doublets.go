package analysis

import (
	"fmt"
	"math"
	"sort"

	"github.com/idlewatt/idlewatt/internal/stat"
)

// Doublets and triplets (mergeDoublets): two or three parts a telegraph
// of level steps made of one level (three when it is faster than a
// block: its two halves and the blocks a step splits; a part may be two
// modes the fit split, closer than subModeFrac of the width) — adjacent,
// the cluster's width at most doubletIsolation of the gaps to its other
// neighbours, its outer parts each holding at least doubletShare of the
// larger's time — merged when at least one other such cluster has the
// same width (within doubletTol): the meter's steps shift every level
// alike. When the capture shows the steps themselves (telegraphStep), a
// cluster that wide (within doubletTol) and at most telegraphIsolation of
// the gaps to its neighbours is one level, confirmed or not by another.
const (
	doubletIsolation   = 0.2
	telegraphIsolation = 0.5
	doubletShare       = 0.2
	doubletTol         = 0.15
	// tripletMiddle bounds where a triplet's middle part lies: each of its
	// spacings at least this share of the triplet's width.
	tripletMiddle = 0.25
	// subModeFrac: modes of a cluster closer than this share of its width
	// are one part; maxClusterModes bounds the modes of a cluster.
	subModeFrac     = 0.1
	maxClusterModes = 4
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
	if x := telegraphOf(b.steps, 0, telegraphSpread, 0); x > 0 {
		return x
	}
	// The steps beyond the lag-1 noise: a telegraph slower than a block
	// whose steps the lag-4 differences count as noise. Gaussian noise,
	// however correlated (AR(1), 1/f), seldom steps that far between
	// blocks two apart (lag 2's spread is at most √2 lag 1's, 6 σ is
	// then 4.2 of it: once in 40 000 blocks).
	// Their levels may be as close as the step itself (a drive that rests
	// at Slumber and DevSlp, the gap between them one step): a DevSlp
	// cycle's steps are told from a telegraph's by their rate instead, at
	// least one in fineBlocks blocks (a telegraph redrawn every 100 ms on
	// average steps once in 20 10-ms blocks; the rig's cycles twice in
	// 200 or more).
	need := 0.0
	if b.blocks > 0 {
		need = float64(b.blocks) / fineBlocks / float64(max(b.fineKp, 1))
	}
	x := telegraphOf(b.fine, 0, 1, need)
	if x > 0 && !twoWays(b.fine, x) {
		return 0
	}
	return x
}

// twoWays says whether the steps of size x (within doubletTol) look like
// a telegraph rather than the drive's own changes: up as often as down
// (each at least telegraphTwoWay of them: within a quiet stretch the link
// only goes deeper, its changes step down), about at least two levels —
// the midpoints of the steps, (from+to)/2, in two or more clusters x/2 or
// more apart, each holding telegraphShare/3 of them. A telegraph steps
// about every level the drive rests at; DevSlp cycles step about the one
// point between Slumber and DevSlp.
func twoWays(steps []step, x float64) bool {
	var mid []float64
	up := 0
	for _, st := range steps {
		if d := st.to - st.from; math.Abs(math.Abs(d)-x) <= doubletTol*x {
			mid = append(mid, (st.from+st.to)/2)
			if d > 0 {
				up++
			}
		}
	}
	n := len(mid)
	if n == 0 || float64(up) < telegraphTwoWay*float64(n) || float64(n-up) < telegraphTwoWay*float64(n) {
		return false
	}
	sort.Float64s(mid)
	clusters, run := 0, 1
	for i := 1; i <= n; i++ {
		if i == n || mid[i]-mid[i-1] > x/2 {
			if float64(run) >= telegraphShare/3*float64(n) {
				clusters++
			}
			run = 0
		}
		run++
	}
	return clusters >= 2
}

// telegraphTwoWay: a telegraph's steps go each way at least this share of
// the time.
const telegraphTwoWay = 0.3

// fineBlocks: a telegraph read from the fine steps steps at least once in
// this many blocks.
const fineBlocks = 40

// telegraphOf is the telegraph's size that steps show (telegraphStep): 0
// when they show none, it is not above min, fewer than need steps are of
// that size, or the levels they leave span less than spread times it.
func telegraphOf(steps []step, min, spread, need float64) float64 {
	if len(steps) < minTelegraphSteps {
		return 0
	}
	d := make([]float64, len(steps))
	for i, st := range steps {
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
	if bestK < minTelegraphSteps || float64(bestK) < telegraphShare*float64(len(d)) || float64(bestK) < need {
		return 0
	}
	var sizes, levels []float64
	for _, st := range steps {
		if x := math.Abs(st.to - st.from); math.Abs(x-best) <= doubletTol*best {
			sizes, levels = append(sizes, x), append(levels, st.from)
		}
	}
	size := stat.Median(sizes)
	if size <= min {
		return 0
	}
	sort.Float64s(levels)
	if stat.SortedQuantile(levels, 0.9)-stat.SortedQuantile(levels, 0.1) < spread*size {
		return 0
	}
	return size
}

// alikeContexts reports whether two modes' blocks fall in the host's
// contexts (ALPM policy, the DEVSLP pin) alike — their shares of each
// within ctxAlike in total variation — as a meter's level steps leave
// them, at random times: the two halves of a telegraph share every
// context. Two of the drive's own levels need not: Idle and Partial
// (337 and 292 mW, under max_performance and LPM) 45 mW apart and Slumber
// and the HBA's DevSlp (48 and 0.6 mW, the second under the pin and
// min_power) 47 mW apart were taken for one telegraph's doublets, and
// DevSlp was read as Slumber (campaign seed 33 drive 11: 15.7 points).
func alikeContexts(a, b mode) bool {
	var na, nb float64
	for k := range numCtx {
		na, nb = na+a.byCtx[k], nb+b.byCtx[k]
	}
	if !(na > 0 && nb > 0) {
		return true
	}
	var tv float64
	for k := range numCtx {
		tv += math.Abs(a.byCtx[k]/na - b.byCtx[k]/nb)
	}
	return tv/2 <= ctxAlike
}

// ctxAlike bounds the total variation between the contexts of a
// doublet's parts (alikeContexts).
const ctxAlike = 0.5

// sameContexts reports whether two modes' blocks could fall in the host's
// contexts alike, as a meter's level steps leave them: a χ² test of
// homogeneity of their context counts, each divided by corr (the blocks
// per independent block mean), not rejected at 0.1 %. The step and
// one-level rules merge a pair by its width alone; under 1/f noise an
// idle 21.4 mW and a Partial 19.2 mW, 1.5 block σ apart, read as two
// components 1.8 mW apart — the width of the level step learned from
// their own transitions — with 63 % and 30 % of their blocks under
// max_performance (n = 443 and 231 blocks, corr 1.7: χ² ≈ 40), were
// merged, Partial went unlearned and idle read 7 points high (held-out
// campaign seed 36 drive 90; independent seed 18 drive 42). Modes
// without context counts pass.
func sameContexts(a, b mode, corr float64) bool {
	corr = math.Max(corr, 1)
	var na, nb float64
	for k := range numCtx {
		na, nb = na+a.byCtx[k]/corr, nb+b.byCtx[k]/corr
	}
	if !(na > 0 && nb > 0) {
		return true
	}
	var chi2 float64
	df := -1
	for k := range numCtx {
		x, y := a.byCtx[k]/corr, b.byCtx[k]/corr
		t := x + y
		if t <= 0 {
			continue
		}
		df++
		ea, eb := t*na/(na+nb), t*nb/(na+nb)
		chi2 += (x-ea)*(x-ea)/ea + (y-eb)*(y-eb)/eb
	}
	if df <= 0 {
		return true
	}
	return chi2 <= chi2Crit001[min(df, len(chi2Crit001)-1)]
}

// chi2Crit001[df] is the χ² distribution's 99.9th percentile with df
// degrees of freedom (df ≥ 1; numCtx − 1 at most).
var chi2Crit001 = [...]float64{0, 10.828, 13.816, 16.266, 18.467}

// mergeDoublets merges the doublets and triplets of ms (sorted by x,
// highest first) into one mode each, at their time-weighted mean (the
// level under steps that spend about half the time in each state), and
// returns the modes, their evidence notes and onto, which maps a level
// inside a merged cluster (a dominant mode found apart, one of its parts)
// to the merged level.
// Under the campaign's steps family each level of a drive came in two
// 0.9 mW apart (0.18 mA at 5 V), and the halves were named as separate
// states: the upper half of idle background, the lower half of Partial
// Slumber (campaign seed 2, drive 0; seed 1, drive 120).
// one (nil: unknown) says how wide one level reads, for the rule that
// merges a cluster no wider than that (oneLevel). widest is the width of
// the widest cluster merged (0: none): how far the steps move a level.
func mergeDoublets(ms []mode, from []string, step float64, one *oneLevel, corr float64) (out []mode, outFrom []string, onto func(float64) float64, widest float64) {
	id := func(x float64) float64 { return x }
	n := len(ms)
	if n < 4 && !((step > 0 || one != nil) && n >= 2) {
		return ms, from, id, 0
	}
	d := make([]float64, n-1) // d[i]: ms[i] − ms[i+1]
	for i := range d {
		d[i] = ms[i].x - ms[i+1].x
	}
	// A cluster is ms[i … i+size−1] in two parts (a doublet) or three (a
	// triplet: under a telegraph faster than a block, the blocks that
	// hold one half, the other, or a step between them — the middle part
	// anywhere in the middle half, held for any time), its width the
	// outer modes' distance; modes closer than subModeFrac of the width
	// are one part (a half the fit split in two at a meter's finest
	// noise).
	type cluster struct {
		i, size int
		width   float64
	}
	apart := func(c cluster, iso float64) bool {
		if !(c.width > 0) {
			return false
		}
		if c.i > 0 && c.width > iso*d[c.i-1] {
			return false
		}
		if last := c.i + c.size - 1; last < len(d) && c.width > iso*d[last] {
			return false
		}
		var px, pn []float64
		for j := c.i; j < c.i+c.size; j++ {
			if k := len(px) - 1; j > c.i && d[j-1] < subModeFrac*c.width {
				px[k] = (px[k]*pn[k] + ms[j].x*ms[j].n) / (pn[k] + ms[j].n)
				pn[k] += ms[j].n
				continue
			}
			px, pn = append(px, ms[j].x), append(pn, ms[j].n)
		}
		switch len(px) {
		case 2:
		case 3:
			if f := (px[0] - px[1]) / c.width; f < tripletMiddle || f > 1-tripletMiddle {
				return false
			}
		default:
			return false
		}
		a, b := pn[0], pn[len(pn)-1]
		return math.Min(a, b) >= doubletShare*math.Max(a, b)
	}
	var cs []cluster
	for size := maxClusterModes; size >= 2; size-- {
		for i := 0; i+size <= n; i++ {
			cs = append(cs, cluster{i: i, size: size, width: ms[i].x - ms[i+size-1].x})
		}
	}
	isolated := func(c cluster) bool { return apart(c, doubletIsolation) && alikeContexts(ms[c.i], ms[c.i+c.size-1]) }
	stepped := func(c cluster) bool {
		return step > 0 && math.Abs(c.width-step) <= doubletTol*step && apart(c, telegraphIsolation) && sameContexts(ms[c.i], ms[c.i+c.size-1], corr)
	}
	// A width at least two isolated clusters share (each their own: the
	// telegraphs of a drive's two rails make one pattern at every level,
	// doublets at some and triplets at others).
	shared := func(c cluster) bool {
		k := 0
		for _, o := range cs {
			if isolated(o) && math.Abs(o.width-c.width) <= doubletTol*c.width {
				k++
			}
		}
		return k >= 2
	}
	// A cluster whose blocks, all its parts together, read no wider than
	// the one level the link holds under max_performance does: one level
	// the meter's steps split (oneLevel).
	asOne := func(c cluster) bool {
		if one == nil || !apart(c, telegraphIsolation) {
			return false
		}
		last := c.i + c.size - 1
		lo, hi := ms[last].x-c.width, ms[c.i].x+c.width
		if last < len(d) {
			lo = math.Max(lo, ms[last].x-d[last]/2)
		}
		if c.i > 0 {
			hi = math.Min(hi, ms[c.i].x+d[c.i-1]/2)
		}
		// The 5th to 95th percentile says nothing of an outer part with
		// under 5 % of the cluster's blocks: Partial, Slumber and DevSlp
		// (413, 21 666 and 206 blocks) spread as Slumber alone and were
		// merged as one level (campaign seed 27 drive 100, 192 DevSlp
		// cycles: its Slumber named DevSlp, 46 points).
		var tot float64
		for j := c.i; j <= last; j++ {
			tot += ms[j].n
		}
		if math.Min(ms[c.i].n, ms[last].n) < asOneOuterShare*tot {
			return false
		}
		r, ok := one.spread(lo, hi)
		return ok && r <= oneLevelTol*one.width && sameContexts(ms[c.i], ms[last], corr)
	}
	multiplet := func(c cluster) bool {
		return isolated(c) && shared(c) || stepped(c) || asOne(c)
	}
	type span struct{ lo, hi, x float64 }
	var spans []span
	for i := 0; i < n; i++ {
		var c cluster
		for _, o := range cs {
			if o.i == i && multiplet(o) {
				c = o
				break // triplets first
			}
		}
		if c.size == 0 {
			out = append(out, ms[i])
			outFrom = append(outFrom, from[i])
			continue
		}
		var m mode
		for j := i; j < i+c.size; j++ {
			a := ms[j]
			m.n += a.n
			m.x += a.x * a.n
			m.peak = math.Max(m.peak, a.peak)
			for k := range m.byCtx {
				m.byCtx[k] += a.byCtx[k]
			}
		}
		m.x /= m.n
		out = append(out, m)
		outFrom = append(outFrom, from[i]+fmt.Sprintf(" (%s modes %.3g W apart merged: the meter's level steps)", [...]string{2: "two", 3: "three", 4: "four"}[c.size], c.width))
		spans = append(spans, span{lo: ms[i+c.size-1].x, hi: ms[i].x, x: m.x})
		widest = math.Max(widest, c.width)
		i += c.size - 1
	}
	onto = func(x float64) float64 {
		for _, s := range spans {
			if w := 0.25 * (s.hi - s.lo); x >= s.lo-w && x <= s.hi+w {
				return s.x
			}
		}
		return x
	}
	return out, outFrom, onto, widest
}

// asOneOuterShare is the least share of a cluster's blocks each of its
// outer parts must hold for the cluster's spread to be read as one level's
// (mergeDoublets).
const asOneOuterShare = 0.05

// oneLevel is how wide one level reads on this meter (mergeDoublets): the
// 5th to 95th percentile of the blocks under max_performance, where the
// link holds active idle, near their dominant mode — level steps, slow
// noise and all, which the block noise read from differences of
// neighbouring blocks misses (a telegraph slower than a block steps
// between few of them). spread reads the same range of the quiet blocks
// outside the pin between lo and hi.
//
// A level the meter's steps split reads as wide at every level, so two or
// three modes whose blocks together spread no wider (oneLevelTol) than
// active idle's are one: under the campaign's steps family an HDD's
// Slumber came in two halves 2.1 mW apart (a 0.19 mA telegraph on its
// 12 V rail; active idle's blocks spread over 3.1 mW), the upper named
// Partial, and its residency was 39–47 points off (seed 14 drives 86 and
// 134, seed 15 drive 17). Two true levels read wider together than one:
// their distance and one level's spread.
type oneLevel struct {
	width  float64
	spread func(lo, hi float64) (float64, bool)
}

// oneLevelTol: the tolerance of oneLevel's comparison; oneLevelBlocks the
// fewest blocks a spread is read from; active idle's blocks are taken
// within oneLevelReach bandwidths or oneLevelRel of its level of its
// dominant mode, whichever is wider (the mode may be one half of the
// split level; bursts of background work lie further above).
const (
	oneLevelTol    = 1.25
	oneLevelBlocks = 50
	oneLevelReach  = 10
	oneLevelRel    = 0.05
	oneLevelBins   = 2
)

// newOneLevel reads oneLevel from the long blocks b (bandwidth h, modes
// of at least minN blocks); nil without enough max_performance blocks.
func newOneLevel(b *blockScale, h, minN float64) *oneLevel {
	mp := points(&b.hist, only(ctxMaxPerf))
	m, ok := dominant(modes(mp, h, minN, mergeRatio))
	if !ok {
		return nil
	}
	reach := math.Max(oneLevelReach*h, oneLevelRel*math.Abs(m.x))
	w, ok := spreadOf(mp, m.x-reach, m.x+reach)
	if !ok || !(w > 0) {
		return nil
	}
	// The histogram keeps a block as its bin's mean (2^-12 of the level:
	// 1 mW at 7 W): a spread of fewer than oneLevelBins of them at active
	// idle is not resolved, and a pair below, read finer, could be wider
	// than it by a bin and still be two levels.
	if _, e := math.Frexp(math.Abs(m.x)); w < oneLevelBins*math.Ldexp(1, e-1-modeSub) {
		return nil
	}
	quiet := points(&b.hist, func(c learnCtx) bool { return c != ctxPin })
	return &oneLevel{width: w, spread: func(lo, hi float64) (float64, bool) { return spreadOf(quiet, lo, hi) }}
}

// spreadOf is the 5th to 95th percentile range of the blocks of pts
// (sorted by x) in [lo, hi]; false with fewer than oneLevelBlocks.
func spreadOf(pts []modePoint, lo, hi float64) (float64, bool) {
	i := sort.Search(len(pts), func(i int) bool { return pts[i].x >= lo })
	j := sort.Search(len(pts), func(j int) bool { return pts[j].x > hi })
	var n float64
	for _, p := range pts[i:j] {
		n += p.n
	}
	if n < oneLevelBlocks {
		return 0, false
	}
	at := func(q float64) float64 {
		var c float64
		for _, p := range pts[i:j] {
			if c += p.n; c >= q*n {
				return p.x
			}
		}
		return pts[j-1].x
	}
	return at(0.95) - at(0.05), true
}
