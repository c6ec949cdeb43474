package analysis_test

import (
	"fmt"
	"math"
	"math/rand/v2"
	"testing"

	"github.com/idlewatt/idlewatt/states/drivesim"
)

// TestIntervalsUnderLevelSteps draws drives from the campaign space
// under the `steps` family (a random telegraph of ±step/2 on the readings,
// drawn as the campaign draws it, its mean time between draws 5–30 ms:
// slow enough for level learning to find the step). The peak is one reading, on either half
// of the telegraph: its 95 % interval holds the true peak (the model's
// highest level held ≥ 2 sample periods) only with the learned level step
// in it (held-out campaign seeds 34–36: 23 of 27 without; two of the four
// misses had a step learned — a telegraph faster than a block is not, and
// its peaks stay an open problem). Here: 29 of 31 drives with a peak, 28
// without the step in the interval. Residency too: a telegraph moves
// samples across a band's edge as noise does, and a window's median does
// not average it out — Idle, Partial and Slumber residency intervals hold
// the model's residency with the step in the misread term.
func TestIntervalsUnderLevelSteps(t *testing.T) {
	t.Parallel()
	if testing.Short() {
		t.Skip("simulated drives")
	}
	const drives = 48
	n, held := 0, 0
	resN, resHeld := 0, 0
	for i := range drives {
		r := rand.New(rand.NewPCG(34, uint64(i)))
		p := drivesim.Draw(r, fmt.Sprintf("steps-%d", i))
		if err := drivesim.DrawNoise(r, drivesim.FamilySteps, &p, 50e-6); err != nil {
			t.Fatal(err)
		}
		p.Noise.StepMs = 5 + 25*r.Float64() // slower than a few blocks: level learning sees the steps
		rep, tr := analyzeModel(t, p, modelScript("med_power_with_dipm", rand.New(rand.NewPCG(35, uint64(i)))), int64(i))
		if len(rep.States) == 1 && rep.States[0].Residency != nil {
			st := rep.States[0]
			for _, name := range []string{"idle", "partial", "slumber"} {
				truth, got := tr.residency[name], st.Residency[name]
				u, ok := st.ResidencyU95[name]
				resN++
				if ok && math.Abs(got-truth) <= u {
					resHeld++
				} else {
					t.Logf("draw %d (%v, %s): %s residency %.4f ± %.4f, truth %.4f", i, p.Noise, p.Description, name, got, u, truth)
				}
			}
		}
		if tr.peak == nil {
			continue
		}
		d := rep.Drives[0]
		n++
		if d.PeakCI95W != nil && float64(d.PeakCI95W[0]) <= *tr.peak && *tr.peak <= float64(d.PeakCI95W[1]) {
			held++
		} else {
			t.Logf("draw %d (%v, %s): peak %.6g W %v, truth %.6g", i, p.Noise, p.Description, d.PeakW, d.PeakCI95W, *tr.peak)
		}
	}
	t.Logf("the peak's interval held the truth on %d of %d drives; residency intervals %d of %d", held, n, resHeld, resN)
	if resN == 0 || float64(resHeld) < 0.9*float64(resN) {
		t.Errorf("under level steps the residency intervals held the truth on %d of %d, want ≥ 90 %%", resHeld, resN)
	}
	if n == 0 || float64(held) < 0.9*float64(n) {
		t.Errorf("under level steps the peak's interval held the truth on %d of %d drives, want ≥ 90 %%", held, n)
	}
}
