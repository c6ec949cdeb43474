package analysis

import (
	"math"
	"math/rand/v2"
	"testing"

	"github.com/idlewatt/idlewatt/internal/stat"
)

// TestMedReservoirIsUpperMedian: the median kept as values come is the one
// selected from the kept values — through thinnings (a small cap), ties,
// and a NaN (selected from the values as before).
func TestMedReservoirIsUpperMedian(t *testing.T) {
	rng := rand.New(rand.NewPCG(9, 10))
	for _, limit := range []int{8, 64, 0} {
		var r medReservoir
		r.max = limit
		x := 0.0
		for i := range 40_000 {
			switch k := rng.IntN(100); {
			case k < 40: // a run: the value repeats
			case k < 60:
				x = float64(rng.IntN(5)) // ties
			default:
				x = math.Abs(rng.NormFloat64())
			}
			if i == 30_000 {
				x = math.NaN()
			}
			r.add(x)
			got, want := r.median(), stat.UpperMedian(r.v)
			if got != want && !(math.IsNaN(got) && math.IsNaN(want)) {
				t.Fatalf("cap %d, value %d: median %v, selected %v", limit, i, got, want)
			}
		}
		if limit == 0 && r.stride < 2 {
			t.Fatalf("stride %d: the reservoir never thinned", r.stride)
		}
	}
	var r medReservoir
	if m := r.median(); !math.IsNaN(m) {
		t.Errorf("empty: %v, want NaN", m)
	}
}

// FuzzMedReservoir: any values, cap 16.
func FuzzMedReservoir(f *testing.F) {
	f.Add([]byte{1, 2, 3, 3, 3, 0, 9, 200})
	f.Fuzz(func(t *testing.T, data []byte) {
		r := medReservoir{reservoir: reservoir{max: 16}}
		for _, b := range data {
			x := float64(b % 13)
			if b == 255 {
				x = math.NaN()
			}
			r.add(x)
			got, want := r.median(), stat.UpperMedian(r.v)
			if got != want && !(math.IsNaN(got) && math.IsNaN(want)) {
				t.Fatalf("median %v, selected %v of %v", got, want, r.v)
			}
		}
	})
}
