package judge

import (
	"math"
	"math/rand/v2"
	"testing"

	"github.com/idlewatt/idlewatt/internal/stat"
)

// TestFloorBandIsMedianPlusMAD: firstDeparture's band by selection is
// stat.Median + 6·stat.MAD bit for bit — ties, zeros of both signs (a
// zero median's sign), even and odd counts, NaN and ±Inf.
func TestFloorBandIsMedianPlusMAD(t *testing.T) {
	rng := rand.New(rand.NewPCG(21, 22))
	for trial := range 3000 {
		n := 16 + rng.IntN(200)
		x := make([]float64, n)
		for i := range x {
			switch r := rng.IntN(8); {
			case r == 0:
				x[i] = 0
			case r == 1:
				x[i] = math.Copysign(0, -1)
			case trial%3 == 0:
				x[i] = float64(rng.IntN(3)) * 1e-3
			default:
				x[i] = 0.004 + 1e-4*rng.NormFloat64()
			}
		}
		if trial%40 == 0 {
			x[rng.IntN(n)] = []float64{math.NaN(), math.Inf(1), math.Inf(-1)}[rng.IntN(3)]
		}
		want := stat.Median(x) + 6*stat.MAD(x)
		if got := floorBand(x); math.Float64bits(got) != math.Float64bits(want) && !(math.IsNaN(got) && math.IsNaN(want)) {
			t.Fatalf("trial %d: floorBand %v, Median + 6·MAD %v", trial, got, want)
		}
	}
}
