package analysis

import (
	"math"
	"sort"

	"github.com/idlewatt/idlewatt/analysis/judge"
	"github.com/idlewatt/idlewatt/hostclock"
	"github.com/idlewatt/idlewatt/states/detect"
	"github.com/idlewatt/idlewatt/states/powerstate"
	"github.com/idlewatt/idlewatt/units"
)

// judgedDevSlp labels DevSlp the time each judged pin cycle held its floor:
// from the cycle's fitted entry to its fitted rise (judge.Cycle EntryAt,
// RiseAt: change points on the cycle's own samples), the spans of a link
// state (idle, Partial, Slumber) inside it split at those edges. One
// reading of the pin's time for every output: the DevSlp block's floor and
// the residency no longer disagree when the classifier did not tell the
// floor from the level above it — a meter's level steps (a random
// telegraph) as wide as the gap between Slumber and DevSlp read the floor
// as Slumber, or no DevSlp level was learned at all, while each cycle's
// own fit, against the level just before the pin, saw it (campaign seed
// 19 drive 192: floor 1.21 mW, truth 1.20; residency DevSlp 0 against a
// true 8.4 %).
//
// A cycle counts only when its floor lies clearly below every learned
// level other than DevSlp (by more than the floor's own 95 % half-width):
// a drive busy at the pin that merely fell to Slumber has a "floor" at
// Slumber's level, which is not DevSlp (seed 19 drive 177).
//
// A split span's DevSlp part takes the cycle's floor as its mean and the
// rest what keeps the span's energy; the clear-sample counts are shared
// by the parts' samples.
func judgedDevSlp(spans []detect.Span, cycles []judge.Cycle, l detect.Levels, period float64) []detect.Span {
	type iv struct {
		a, b  hostclock.Time
		floor float64
	}
	above := math.Inf(1)
	for _, w := range []units.Watts{l.Idle, l.Partial, l.Slumber} {
		if w > 0 {
			above = math.Min(above, float64(w))
		}
	}
	var ivs []iv
	for _, c := range cycles {
		if c.EntryAt == 0 || c.RiseAt <= c.EntryAt || !c.FloorW.Ok() {
			continue
		}
		f, u := float64(c.FloorW), 0.0
		if c.FloorU95W.Ok() {
			u = float64(c.FloorU95W)
		}
		if !(f+u < above) {
			continue
		}
		ivs = append(ivs, iv{c.EntryAt, c.RiseAt, f})
	}
	if len(ivs) == 0 || !(period > 0) {
		return spans
	}
	sort.Slice(ivs, func(i, j int) bool { return ivs[i].a < ivs[j].a })
	low := func(s powerstate.State) bool {
		return s == powerstate.Idle || s == powerstate.Partial || s == powerstate.Slumber
	}
	var out []detect.Span
	k := 0
	for _, sp := range spans {
		for k < len(ivs) && ivs[k].b <= sp.Start {
			k++
		}
		if !low(sp.State) || k == len(ivs) || ivs[k].a >= sp.End {
			out = append(out, sp)
			continue
		}
		// The span meets one or more intervals: cut it at their edges.
		var parts []detect.Span
		var floors []float64 // per part: the cycle's floor, NaN outside
		rest := sp
		for j := k; j < len(ivs) && ivs[j].a < sp.End && rest.Start < rest.End; j++ {
			a, b := max(ivs[j].a, rest.Start), min(ivs[j].b, rest.End)
			if b <= a {
				continue
			}
			if a > rest.Start {
				var head detect.Span
				head, rest = cutSpan(rest, a, period)
				parts, floors = append(parts, head), append(floors, math.NaN())
			}
			mid := rest
			if b < rest.End {
				mid, rest = cutSpan(rest, b, period)
			} else {
				rest = detect.Span{Start: rest.End, End: rest.End}
			}
			mid.State = powerstate.DevSlp
			parts, floors = append(parts, mid), append(floors, ivs[j].floor)
		}
		if rest.End > rest.Start {
			parts, floors = append(parts, rest), append(floors, math.NaN())
		}
		out = append(out, shareEnergy(sp, parts, floors)...)
	}
	return detect.MergeSame(out)
}

// cutSpan splits sp at t (Start < t < End) into two spans of the same
// state and mean, its samples and clear counts shared by their durations.
func cutSpan(sp detect.Span, t hostclock.Time, period float64) (detect.Span, detect.Span) {
	a, b := sp, sp
	a.End, b.Start = t, t
	a.ExactEnd, b.ExactStart = true, true
	n := int(math.Round(float64(t.Sub(sp.Start)) / period))
	n = max(0, min(n, sp.Samples))
	a.Samples, b.Samples = n, sp.Samples-n
	f := 0.0
	if sp.Samples > 0 {
		f = float64(n) / float64(sp.Samples)
	}
	for i := range a.Clear {
		x := int32(math.Round(float64(sp.Clear[i]) * f))
		a.Clear[i], b.Clear[i] = x, sp.Clear[i]-x
	}
	return a, b
}

// shareEnergy gives the parts cut from sp their means: a DevSlp part its
// cycle's floor (the mean the judge read over that time), the others what
// keeps sp's energy. When sp lies wholly in DevSlp, or the remainder would
// leave the span's range (its samples are not at hand to read it), every
// part keeps sp's mean. Parts without samples are dropped.
func shareEnergy(sp detect.Span, parts []detect.Span, floors []float64) []detect.Span {
	var nd, nr, ed float64
	for i, p := range parts {
		if math.IsNaN(floors[i]) {
			nr += float64(p.Samples)
		} else {
			nd += float64(p.Samples)
			ed += float64(p.Samples) * floors[i]
		}
	}
	restMean := math.NaN()
	if nr > 0 && nd > 0 {
		restMean = (float64(sp.MeanW)*(nd+nr) - ed) / nr
	}
	keep := math.IsNaN(restMean) || restMean < float64(sp.MinW) || restMean > float64(sp.MaxW)
	out := parts[:0]
	for i, p := range parts {
		if p.Samples <= 0 {
			continue
		}
		switch {
		case keep:
			p.MeanW = sp.MeanW
		case math.IsNaN(floors[i]):
			p.MeanW = units.Watts(restMean)
		default:
			p.MeanW = units.Watts(floors[i])
		}
		out = append(out, p)
	}
	return out
}
