package analysis

import (
	"cmp"
	"math"
	"slices"
	"testing"
)

// A quantised, noise-free meter gives block means of a few exact values:
// Slumber, Partial and idle of an HDD 0.19–0.27 W apart, 522, 41 and 50
// blocks, a few stray blocks between. The seeds sit exactly on the values,
// so the means never move; the fit must still run until its weights
// settle, or the Partial's 41 blocks look as if they cost likelihood and
// the level is dropped (it was: campaign 2:18, 6.8 % of the time).
func TestMixtureKeepsExactLevels(t *testing.T) {
	levels := []struct{ x, n float64 }{{7.41658, 522}, {7.61107, 41}, {7.88366, 50}, {10.0951, 19}}
	var cs []mixCell
	for _, l := range levels {
		cs = append(cs, mixCell{x: l.x, n: l.n})
	}
	for _, x := range []float64{7.42793, 7.54529, 7.57649, 7.70423, 7.73443, 7.74200, 7.81235} {
		cs = append(cs, mixCell{x: x, n: 1})
	}
	slices.SortFunc(cs, func(a, b mixCell) int { return cmp.Compare(a.x, b.x) })
	seeds := []float64{7.41658, 7.88366, 7.61107, 10.0951, 7.88366}
	got := mixture(cs, seeds, 0.000597, 5, 1)
	want := []float64{10.0951, 7.88366, 7.61107, 7.41658}
	if len(got) != len(want) {
		t.Fatalf("components %+v, want 4 at %v", got, want)
	}
	for i, c := range got {
		if math.Abs(c.mu-want[i]) > 1e-4 || math.Abs(c.n-levels[3-i].n) > 2 {
			t.Errorf("component %d: %.5f W, %.1f blocks; want %.5f W, %.0f blocks", i, c.mu, c.n, want[i], levels[3-i].n)
		}
	}
}
