package analysis

import (
	"math"
	"math/rand/v2"
	"testing"

	"github.com/idlewatt/idlewatt/units"
)

// The peak's interval holds the true peak power in ≥ 95 % of draws,
// whether one reading or thousands sat at the peak level: 400 synthetic
// traces of 20 000–200 000 readings, noise 0–15 mW σ, a true peak of
// 1–5000 samples 0–3 W above a base level.
func TestPeakCI95Coverage(t *testing.T) {
	r := rand.New(rand.NewPCG(31, 1))
	held, trials := 0, 400
	var sumW float64
	for k := 0; k < trials; k++ {
		n := 20000 + r.IntN(180000)
		sigma := 0.015 * r.Float64()
		base := 0.02 + 2*r.Float64()
		peak := base + 3*r.Float64()
		np := 1 + r.IntN(5000)
		m := math.Inf(-1)
		for i := 0; i < n; i++ {
			w := base
			if i < np {
				w = peak
			}
			m = math.Max(m, w+sigma*r.NormFloat64())
		}
		ci := peakCI95(units.Watts(m), n, sigma, 0)
		if ci == nil {
			t.Fatal("no interval")
		}
		if float64(ci[0]) <= peak && peak <= float64(ci[1]) {
			held++
		}
		sumW += float64(ci[1] - ci[0])
	}
	cov := float64(held) / float64(trials)
	t.Logf("peak interval held the truth in %.1f %% of %d draws (mean width %.2f mW)", 100*cov, trials, 1e3*sumW/float64(trials))
	if cov < 0.95 {
		t.Errorf("coverage %.1f %%, want ≥ 95 %%", 100*cov)
	}
	if peakCI95(1, 0, 0.01, 0) != nil || peakCI95(1, 10, math.NaN(), 0) != nil {
		t.Error("an interval without samples or noise")
	}
}
