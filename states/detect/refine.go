package detect

import (
	"math"
	"time"

	"github.com/idlewatt/idlewatt/states/powerstate"
	"github.com/idlewatt/idlewatt/units"
)

// RefineBurstEdges moves the edges between background spans and the level
// states beside them to where the power changed, undoing the running
// median's bias there, and returns the corrected spans (spans is not
// changed).
//
// A running median of W crosses a threshold where more than half of its
// window's samples lie above it. Between two levels split at their
// midpoint that is where the step is. The threshold into background is
// not a midpoint: it sits just above the idle level (idle + half the gap
// to the next level), because the level of background work is not known
// in advance. When the per-sample noise σ is not small against that gap,
// a fraction p of the idle samples lie above the threshold, and the
// median of a window holding a fraction f of a burst (whose samples lie
// above it with probability q) crosses it at f* = (0.5 − p)/(q − p), not
// at ½: the burst is detected (½ − f*)·W early and left as late. (Seen:
// a 132 ms GC burst at 79 mW over a 26.4 mW idle level, threshold
// 27.95 mW, σ 8.2 mW, W 70 ms: p 0.42, each burst read 25 ms long on
// either side, residency background +3.5 points in the accuracy
// campaign, seed 1 drive 181.)
//
// The burst's level q comes from the span's mean with the moved stretches
// taken out (two passes). The moved time carries the neighbour's level
// into the neighbour and out of the background span, so energy is kept.
// Edges with Active (the host's I/O times), Unknown or another background
// span are exact or not a level, and are left alone; so is an edge whose
// shift would leave either span less than a sample.
func RefineBurstEdges(spans []Span, l Levels, sigma float64, window, period time.Duration) []Span {
	thr, _, ok := l.Band(powerstate.Background)
	if !ok || sigma <= 0 || window <= 2*period || math.IsInf(thr, 0) {
		return spans
	}
	out := append([]Span(nil), spans...)
	above := func(level float64) float64 { return 0.5 * math.Erfc((thr-level)/(sigma*math.Sqrt2)) }
	for i := range out {
		b := &out[i]
		if b.State != powerstate.Background || b.Duration() <= 2*period {
			continue
		}
		var nb [2]*Span
		var x [2]float64
		for k, j := range [2]int{i - 1, i + 1} {
			if j < 0 || j >= len(out) {
				continue
			}
			n := &out[j]
			if k == 0 && (n.End != b.Start || b.ExactStart) || k == 1 && (n.Start != b.End || b.ExactEnd) {
				continue
			}
			if w, ok := l.levelOf(n.State); ok {
				nb[k], x[k] = n, w
			}
		}
		if nb[0] == nil && nb[1] == nil {
			continue
		}
		length := b.Duration().Seconds()
		burst := float64(b.MeanW)
		var shift [2]float64 // seconds the span overran on each side
		for range 2 {
			for k := range 2 {
				shift[k] = 0
				if nb[k] == nil {
					continue
				}
				p, q := above(x[k]), above(burst)
				if q <= 0.5 || p >= 0.5 || q <= p {
					continue
				}
				f := (0.5 - p) / (q - p)
				shift[k] = math.Max(-0.5, math.Min(0.5, 0.5-f)) * window.Seconds()
			}
			if in := length - shift[0] - shift[1]; in > period.Seconds() {
				burst = (float64(b.MeanW)*length - x[0]*shift[0] - x[1]*shift[1]) / in
			}
		}
		if length-shift[0]-shift[1] <= period.Seconds() {
			continue
		}
		energy := float64(b.MeanW) * length
		for k := range 2 {
			n := nb[k]
			d := time.Duration(shift[k] * 1e9).Round(period)
			if n == nil || d == 0 || n.Duration()+d <= period {
				continue
			}
			moved := int(d / period)
			ne := float64(n.MeanW)*n.Duration().Seconds() + x[k]*d.Seconds()
			if k == 0 {
				n.End = n.End.Add(d)
				b.Start = b.Start.Add(d)
			} else {
				n.Start = n.Start.Add(-d)
				b.End = b.End.Add(-d)
			}
			n.Samples += moved
			b.Samples -= moved
			// The moved samples' clear counts go with them where they
			// are the receiving span's own.
			if moved > 0 {
				k := min(int32(moved), b.Clear[n.State])
				b.Clear[n.State] -= k
				n.Clear[n.State] += k
			} else {
				k := min(int32(-moved), n.Clear[powerstate.Background])
				n.Clear[powerstate.Background] -= k
				b.Clear[powerstate.Background] += k
			}
			n.MeanW = units.Watts(ne / n.Duration().Seconds())
			energy -= x[k] * d.Seconds()
		}
		if s := b.Duration().Seconds(); s > 0 {
			b.MeanW = units.Watts(energy / s)
		}
	}
	return out
}

// has reports whether s is a level state the levels know.
func (l Levels) has(s powerstate.State) bool { _, ok := l.levelOf(s); return ok }

// levelOf is the power of a level state the levels know.
func (l Levels) levelOf(s powerstate.State) (float64, bool) {
	for _, lv := range l.ordered() {
		if lv.s == s {
			return float64(lv.w), true
		}
	}
	return 0, false
}
