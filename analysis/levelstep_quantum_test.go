package analysis_test

import (
	"math"
	"testing"
	"time"

	"github.com/idlewatt/idlewatt/analysis/synthcap"
)

// A noise-free capture's readings change only where the drive's level
// does: its smallest step (here the 0.4 W → 6 mW DevSlp entry, once a
// cycle) is no meter's LSB. Taken for one, it gave every interval
// ±0.22 W on a 0.4 W idle and a 6 mW floor ±223 mW (the README's speed
// capture).
func TestNoQuantumFromLevelSteps(t *testing.T) {
	r := analyzeStates(t, synthcap.Review(150*time.Second, 10000, 0))
	want := map[int]float64{1: 0.40, 2: 0.20}
	for _, d := range r.Drives {
		if got := float64(d.ActiveIdleW); math.Abs(got-want[d.Port]) > 1e-4 {
			t.Errorf("port %d: active idle %.6f W, want %.2f", d.Port, got, want[d.Port])
		}
		if d.ActiveIdleU95W == nil || float64(*d.ActiveIdleU95W) > 1e-4 {
			t.Errorf("port %d: active idle ± %v W on noise-free readings, want under 0.1 mW", d.Port, d.ActiveIdleU95W)
		}
		if u := d.Uncertainty.ResolutionUW; u != nil && float64(*u) > 1e-5 {
			t.Errorf("port %d: resolution %g W from a capture that states no LSB and has no noise", d.Port, float64(*u))
		}
	}
}
