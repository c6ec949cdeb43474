package analysis

import (
	"fmt"
	"math"
	"sort"

	"github.com/idlewatt/idlewatt/internal/stat"
)

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
