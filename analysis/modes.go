package analysis

import (
	"math"
	"sort"
)

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

// lowest is the lowest of ms (modes sorts them highest first). Active idle
// is the lowest level of quiet time under max_performance: the link never
// leaves active there, so whatever the drive holds above it without I/O is
// its own background work. Not the dominant level: GC a third of the time
// filled most of a short phase (campaign seed 27 drives 71 and 191: GC
// named active idle, 5.15 W for 4.71 W and 3.53 W for 1.23 W).
func lowest(ms []mode) (mode, bool) {
	if len(ms) == 0 {
		return mode{}, false
	}
	return ms[len(ms)-1], true
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
