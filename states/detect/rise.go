package detect

import (
	"math"
	"time"

	"github.com/idlewatt/idlewatt/states/powerstate"
)

// carveRise splits a level span (idle, Partial, Slumber, DevSlp) at the
// stretches inside it where the power rose far above the span's level for
// less than the dwell, and returns the parts (nil: nothing to carve).
//
// The window is sized for the closest pair of levels, and a state must
// hold half of it: under noise correlated over 12 ms with Slumber and
// DevSlp 2 mW apart it is 100 ms, and a rise shorter than 50 ms that
// is not background (a wake from the HBA's own DevSlp at the idle level
// for 47 ms, then Slumber for 30 ms before a GC burst) stays in the span
// it interrupted. Its energy then moves the span's mean: a DevSlp span of
// 1.5 s at 1.7 mW read 2.9 mW, nearer Slumber's 3.8, and MonotoneLevels
// named all of it Slumber (campaign seed 30 drive 117: DevSlp residency
// 2.5 points short, Slumber as much long). A rise the meter shows far
// beyond its noise is found in the span's own samples as carve finds a
// burst's end: 1 ms blocks more than carveContrast block σ above the
// span's level are the rise's, their mean its level; in blocks just long
// enough for carveContrast between that and the span's level, a run of
// high blocks of at least 2 ms (and 3 blocks) becomes a background span
// (the drive working over its link state; MonotoneLevels reads one whose
// mean lies in a level's band by its mean), and the runs between keep
// the span's state. Shorter runs join the run before them. Only a rise
// past the band of the next level up is carved (aboveNext): under a
// meter's level steps of 5 mW every idle and DevSlp span held "rises" to
// the next level, and carving them lost half the DevSlp residency of the
// drawn drives of TestStepsSplitLevelsNamedOnce.
func (c *Classifier) carveRise(sp Span) []Span {
	own, ok := c.levels.levelOf(sp.State)
	if !ok || !c.adaptive || c.noRiseCarve || c.sigma <= 0 || sp.Samples < 8 || !isLinkLevel(sp.State) {
		return nil
	}
	b0 := max(1, int(time.Millisecond/c.period))
	high := own + carveContrast*c.sigma/math.Sqrt(float64(b0))
	if !(float64(sp.MaxW) > high) {
		return nil // no sample, so no block, above it
	}
	ts, ws, ok := c.hist.between(sp.Start, sp.End)
	if !ok || len(ts) != sp.Samples {
		return nil
	}
	var hs float64
	var hn int
	for i := 0; i+b0 <= len(ws); i += b0 {
		m := meanOf(ws[i : i+b0])
		if math.IsNaN(m) || math.IsInf(m, 0) {
			return nil // a broken reading: the span stays as the band test read it
		}
		if m > high {
			hs, hn = hs+m, hn+1
		}
	}
	if hn == 0 {
		return nil
	}
	hi := hs / float64(hn)
	if !(hi > c.th.aboveNext(sp.State)) {
		return nil
	}
	b, runs, ok := c.carveGrid(ws, hi, own)
	if !ok || len(runs) < 2 {
		return nil // one side only: no rise, or no span left around it
	}
	return c.cutSpans(sp, ts, ws, b, runs, powerstate.Background, sp.State, true)
}

// carveRises is parts with each level span's rises carved (carveRise).
func (c *Classifier) carveRises(parts []Span) []Span {
	var out []Span
	for i, p := range parts {
		r := c.carveRise(p)
		if r == nil {
			if out != nil {
				out = append(out, p)
			}
			continue
		}
		if out == nil {
			out = append([]Span(nil), parts[:i]...)
		}
		out = append(out, r...)
	}
	if out == nil {
		return parts
	}
	return out
}

// aboveNext is the top of the band of the level next above st's: a rise
// carveRise carves must pass it, skipping a level — a rise to the next
// level only, inside the dwell, is as likely the meter's level steps (a
// random telegraph of a few mW) or noise as the drive, and stays with
// the span. +Inf for the highest level (whose rises are background, with
// a dwell of their own) or a state without a level.
func (t *thresholds) aboveNext(st powerstate.State) float64 {
	for i, s := range t.state {
		if s != st || i == 0 {
			continue
		}
		if i >= 2 {
			return t.floor[i-2]
		}
		return t.activeAbove
	}
	return math.Inf(1)
}

// isLinkLevel reports whether s is a level the link holds (idle, Partial,
// Slumber, DevSlp).
func isLinkLevel(s powerstate.State) bool {
	return s == powerstate.Idle || s == powerstate.Partial || s == powerstate.Slumber || s == powerstate.DevSlp
}
