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
