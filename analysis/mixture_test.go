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

// Level steps of 0.9 mW (a random telegraph, 0.18 mA at 5 V) split every
// level of campaign seed 2's drive 0 in two: the doublets are merged, each
// at its time-weighted mean. Levels that are merely close (an HDD's idle,
// Partial and Slumber a few per cent apart) or one pair alone are not.
func TestMergeDoublets(t *testing.T) {
	ms := func(xn ...float64) []mode {
		var out []mode
		for i := 0; i < len(xn); i += 2 {
			out = append(out, mode{x: xn[i], n: xn[i+1]})
		}
		return out
	}
	from := func(n int) []string { return make([]string, n) }
	got, _, onto := mergeDoublets(ms(0.27061, 38, 0.26972, 50, 0.11755, 202, 0.11666, 257, 0.01011, 183, 0.00922, 247), from(6))
	want := []float64{(0.27061*38 + 0.26972*50) / 88, (0.11755*202 + 0.11666*257) / 459, (0.01011*183 + 0.00922*247) / 430}
	if len(got) != 3 {
		t.Fatalf("merged into %d modes %+v, want 3", len(got), got)
	}
	for i, m := range got {
		if math.Abs(m.x-want[i]) > 1e-12 {
			t.Errorf("level %d at %.6f W, want %.6f", i, m.x, want[i])
		}
	}
	if x := onto(0.00922); math.Abs(x-want[2]) > 1e-12 {
		t.Errorf("onto(a half) = %g, want the merged %g", x, want[2])
	}
	if x := onto(0.05); x != 0.05 {
		t.Errorf("onto(0.05) = %g: no doublet there", x)
	}
	for name, in := range map[string][]mode{
		"HDD levels":   ms(5.30, 40, 5.02, 100, 4.89, 80, 4.74, 300, 2.1, 5),
		"one doublet":  ms(0.27, 50, 0.12, 200, 0.1191, 250, 0.01, 400),
		"lopsided":     ms(0.27061, 38, 0.26972, 2, 0.11755, 202, 0.11666, 3, 0.01, 300),
		"three levels": ms(0.4, 10, 0.2, 10, 0.1, 10),
		// Two spacings that agree by chance, each a third of its neighbours'
		// gaps (campaign seed 2, drive 191: idle, Partial, Slumber, DevSlp).
		"by chance": ms(0.86586, 36, 0.36508, 100, 0.28799, 64, 0.08535, 593, 0.00077, 255),
	} {
		if out, _, _ := mergeDoublets(in, from(len(in))); len(out) != len(in) {
			t.Errorf("%s: %d modes merged into %d", name, len(in), len(out))
		}
	}
}
