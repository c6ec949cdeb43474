package files

import (
	"math"
	"math/rand/v2"
	"testing"
)

// gridOf finds the step of readings on a grid a + k·g printed to 1 nA
// (steps of 0.1–20 µA, offsets, currents up to 500 mA), and no grid in
// readings on the export's own 1 nA, in readings of two ranges' grids, or
// in fewer than three values.
func TestGridOf(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	for trial := range 300 {
		g := math.Exp(math.Log(100) + r.Float64()*math.Log(200)) // nA
		a := 0.0
		if trial%3 == 0 {
			a = r.Float64() * g
		}
		seen := map[int64]bool{}
		base := r.Float64() * 5e8 * float64(trial%2)
		for range 3 + r.IntN(2000) {
			k := math.Floor((base + math.Abs(r.NormFloat64())*g*(2+50*r.Float64())) / g)
			seen[int64(math.Round(a+k*g))] = true
		}
		if len(seen) < 3 {
			continue
		}
		if got := gridOf(seen) * 1e9; math.Abs(got-g) > 0.01*g {
			t.Fatalf("trial %d: grid %.4f nA (offset %.1f, %d values from %.0f nA): found %.4f", trial, g, a, len(seen), base, got)
		}
	}
	// A drive's levels far apart on one grid, each read with noise under
	// one step (a few neighbouring codes): the independent generator's
	// quantised drives (seed 10 drive 24: 17.5 µA, levels 0.4–900 mA, 70
	// readings in its first rows) got no grid from the fit outward from
	// the lowest value.
	for trial := range 200 {
		g := math.Exp(math.Log(1000) + r.Float64()*math.Log(50)) // 1–50 µA, in nA
		a := r.Float64() * g * float64(trial%2)
		seen := map[int64]bool{}
		for range 2 + r.IntN(8) {
			k0 := math.Floor(math.Exp(r.Float64()*math.Log(1e9/g)) + 1)
			for j := range 2 + r.IntN(3) { // the codes a level's noise flips between
				seen[int64(math.Round(a+(k0+float64(j))*g))] = true
			}
		}
		got := gridOf(seen) * 1e9
		// With few values a whole multiple of g may hold them all too (3
		// values 2 and 4 steps apart): a grid they lie on. What must not
		// happen is none, or one they do not lie on.
		ratio := math.Max(got/g, g/got)
		if got == 0 || math.Abs(ratio-math.Round(ratio)) > 1e-3 {
			t.Fatalf("sparse trial %d: grid %.4f nA (offset %.1f, %d values): found %.4f", trial, g, a, len(seen), got)
		}
	}
	fine := map[int64]bool{}
	for range 1000 {
		fine[int64(r.IntN(1e6))] = true
	}
	if got := gridOf(fine); got != 0 {
		t.Errorf("readings on 1 nA: grid %.3g A", got)
	}
	two := map[int64]bool{}
	for k := range 200 {
		two[int64(k)*390] = true
		two[1_000_000+int64(math.Round(float64(k)*3906.25))] = true
	}
	if got := gridOf(two); got != 0 {
		t.Errorf("two ranges' grids read as one of %.4g A", got)
	}
	if got := gridOf(map[int64]bool{0: true, 2600: true}); got != 0 {
		t.Errorf("two values gave a grid of %.3g A", got)
	}
}
