package detect

import (
	"math"
	"time"

	"github.com/idlewatt/idlewatt/hostclock"
	"github.com/idlewatt/idlewatt/states/powerstate"
	"github.com/idlewatt/idlewatt/units"
)

// Span is a maximal interval in one state. Times are host monotonic ns.
type Span struct {
	State   powerstate.State
	Start   hostclock.Time
	End     hostclock.Time
	Samples int
	MeanW   units.Watts
	MinW    units.Watts
	MaxW    units.Watts
	// ExactStart and ExactEnd mark an edge located from the samples
	// themselves (carve), not where a running median crossed a threshold:
	// RefineBurstEdges leaves it.
	ExactStart, ExactEnd bool
	// Clear counts the span's samples whose own power lies clearly inside
	// a state's band (ClearSigmas per-sample σ from its edges), by state:
	// those of a state other than the span's are samples the smoothing put
	// in the wrong state — a short excursion the window and dwell hid, or
	// an edge placed late — which the residency's interval counts
	// (Misplaced). Zero without a noise estimate.
	Clear ClearCounts
}

// ClearSigmas is how far inside a band, in per-sample noise σ, a sample
// must lie to count as clearly in it (Span.Clear): 4 σ, one white-noise
// sample in 30 000 past an edge.
const ClearSigmas = 4

// ClearCounts holds a count of samples per state.
type ClearCounts [powerstate.NumDetected]int32

func (c *ClearCounts) add(o ClearCounts) {
	for i := range c {
		c[i] += o[i]
	}
}

func (c *ClearCounts) sub(o ClearCounts) {
	for i := range c {
		c[i] = max(0, c[i]-o[i])
	}
}

// Misplaced is how many of the span's samples lie clearly in a state
// other than st (its own): 0 for an active span, whose samples are the
// I/O's whatever their power.
func (s Span) Misplaced() int {
	if s.State == powerstate.Active {
		return 0
	}
	n := 0
	for st, k := range s.Clear {
		if powerstate.State(st) != s.State && powerstate.State(st) != powerstate.Unknown {
			n += int(k)
		}
	}
	return n
}

// clearCounts counts ws by clearOf.
func (t *thresholds) clearCounts(ws []float64, margin float64) (c ClearCounts) {
	if margin <= 0 {
		return c
	}
	for _, w := range ws {
		c[t.clearOf(w, margin)]++
	}
	return c
}

// clearOf is the state whose band holds w at least margin inside both
// edges, or Unknown.
func (t *thresholds) clearOf(w, margin float64) powerstate.State {
	if margin <= 0 || math.IsNaN(w) || len(t.state) == 0 {
		return powerstate.Unknown
	}
	if w > t.activeAbove+margin {
		return powerstate.Background
	}
	up := t.activeAbove
	for i, f := range t.floor {
		if w >= f {
			if w >= f+margin && w <= up-margin {
				return t.state[i]
			}
			return powerstate.Unknown
		}
		up = f
	}
	if !math.IsInf(t.offBelow, -1) && w < t.offBelow-margin {
		return powerstate.Off
	}
	return powerstate.Unknown
}

// Duration returns the span's length.
func (s Span) Duration() time.Duration { return s.End.Sub(s.Start) }
