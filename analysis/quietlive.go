package analysis

import (
	"math"

	"github.com/idlewatt/idlewatt/states/detect"
	"github.com/idlewatt/idlewatt/units"
)

// QuietLevel estimates the level of consecutive quiet samples ps (W, at
// rate) as the report estimates active idle: 10 ms blocks, background
// bursts left out, level-based within the idle band [lo, hi] when lo < hi
// (IdleBandOf), median-centred otherwise; no resolution term. ok is false
// without a level or an interval. The rig uses it, live, to decide whether
// an active-idle phase has run long enough (rig.Config.ActiveIdleMax); what
// is reported is the report's estimate, from the capture.
func QuietLevel(ps []float64, rate units.Hertz, lo, hi units.Watts) (level, u95 units.Watts, ok bool) {
	var b blockSeries
	b.init(rate)
	b.add(ps)
	floor, ceil := math.Inf(-1), math.Inf(1)
	if lo < hi {
		floor, ceil = float64(lo), float64(hi)
	}
	e := estimateLevelAbove(b.all(), b.L, b.minN, func(float64) float64 { return 0 }, floor, ceil)
	if math.IsNaN(e.Level) || e.U95 == nil {
		return 0, 0, false
	}
	return units.Watts(e.Level), units.Watts(*e.U95), true
}

// IdleBandOf is the band of 10 ms means of quiet power that can be active
// idle for levels l (see IdleBander): lo, the geometric mean of the idle
// level and the next lower known level (the online classifier's own
// threshold), and hi, as far above the idle level — or, when that reaches
// past the midpoint of idle and the learned background level, the band
// centred on idle up to that midpoint; ok is false without an idle level
// and a lower one.
func IdleBandOf(l detect.Levels) (lo, hi units.Watts, ok bool) {
	x, ok := nextBelowIdle(l)
	if l.Idle <= 0 || !ok {
		return 0, 0, false
	}
	lo = units.Watts(math.Sqrt(float64(l.Idle) * float64(x)))
	hi = 2*l.Idle - lo
	// Not into the drive's background work: its level's midpoint with idle
	// caps the band, and the band stays centred on idle (campaign seed 27
	// drive 8: GC at 1.8 × idle inside the band, in its outer quarter, was
	// its densest mode and active idle was left null).
	if edge := (l.Idle + l.Background) / 2; l.Background > l.Idle && hi > edge {
		hi, lo = edge, max(lo, 2*l.Idle-edge)
	}
	return lo, hi, true
}

// nextBelowIdle is the highest known level below idle (Partial, else
// Slumber, else DevSlp); false without one.
func nextBelowIdle(l detect.Levels) (units.Watts, bool) {
	for _, x := range []units.Watts{l.Partial, l.Slumber, l.DevSlp} {
		if x > 0 && x < l.Idle {
			return x, true
		}
	}
	return 0, false
}
