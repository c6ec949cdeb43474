package analysis_test

import (
	"fmt"
	"math"
	"math/rand/v2"
	"path/filepath"
	"testing"

	"github.com/idlewatt/idlewatt/analysis"
	"github.com/idlewatt/idlewatt/states/drivesim"
	"github.com/idlewatt/idlewatt/units"
)

// TestLevelsUnderMainsHum: drives drawn from the campaign space read
// through a meter of the hum+ripple family (drivesim.DrawNoise: 50 or 60
// Hz hum of 0.1–2 mA with up to 4 harmonics, an aliased switching ripple,
// a white floor), run offline through the short measure script with no
// profile in the capture. The hum is found at the meter's frequency on
// every drive, and the residency of each state is within ±1 point of the
// model's on at least 90 % of the drives (the worst within 3): 10 ms block
// means that the hum spreads by mW split a level into two modes and
// merge an idle and a Partial a few mW apart.
func TestLevelsUnderMainsHum(t *testing.T) {
	t.Parallel()
	if testing.Short() {
		t.Skip("simulated drives")
	}
	policies := []string{"med_power_with_dipm", "min_power_with_partial", "min_power", "max_performance", "medium_power"}
	const drives = 30
	var off int
	worst := 0.0
	for i := range drives {
		p := drivesim.Draw(rand.New(rand.NewPCG(27, uint64(i))), fmt.Sprintf("hum-%d", i))
		if err := drivesim.DrawNoise(rand.New(rand.NewPCG(28, uint64(i))), drivesim.FamilyHumRipple, &p, 10e-6); err != nil {
			t.Fatal(err)
		}
		pol := policies[i%len(policies)]
		path := filepath.Join(t.TempDir(), "c.iwcap")
		tr := runModel(t, p, modelScript(pol, rand.New(rand.NewPCG(29, uint64(i)))), int64(i), path)
		opts := analysis.DefaultOptions()
		opts.States = &analysis.StateOptions{}
		rep, err := analysis.Analyze(path, opts)
		if err != nil {
			t.Fatal(err)
		}
		d, st := rep.Drives[0], rep.States[0]
		desc := fmt.Sprintf("drive %d (%s, %s, hum %g Hz %.2f mA ×%g, ripple %.2f mA at %.1f kHz, white %.2f mA)", i, pol, p.Description,
			p.Noise.HumHz, p.Noise.HumMA, p.Noise.HumHarmonics, p.Noise.RippleMA, p.Noise.RippleKHz, p.NoiseMA)
		switch {
		case d.Hum == nil:
			t.Errorf("%s: no hum found", desc)
		case float64(d.Hum.Hz) != p.Noise.HumHz:
			t.Errorf("%s: hum found at %g Hz", desc, float64(d.Hum.Hz))
		}
		bad := false
		for _, s := range []string{"active", "background", "idle", "partial", "slumber", "devslp"} {
			e := 100 * math.Abs(st.Residency[s]-tr.residency[s])
			worst = math.Max(worst, e)
			if e > 1 {
				bad = true
				t.Logf("%s: residency %s %.2f %%, truth %.2f %%", desc, s, 100*st.Residency[s], 100*tr.residency[s])
			}
		}
		if bad {
			off++
		}
	}
	t.Logf("%d drives: residency off ±1 pp on %d, worst %.2f pp", drives, off, worst)
	if off > drives/10 {
		t.Errorf("residency off ±1 pp on %d of %d drives, want at most %d", off, drives, drives/10)
	}
	if worst > 3 {
		t.Errorf("worst residency error %.2f pp, want ≤ 3", worst)
	}
}

// TestIdleFromMaxPerformanceWhenPartialMerges: Partial 85–92 % of idle,
// under hum and a switching ripple aliased to 30–70 Hz (110.03–110.07 kHz
// at 10 kS/s) whose block noise is as wide as the gap, holds the drive for
// most of its quiet time under an LPM policy; the fit cannot part it from
// idle, and the one mode over every context sits near Partial. Named idle
// because it is near the max_performance mode, it read the idle level
// near Partial (held-out campaign seed 31 drive 1: 71.7 mW for 81.6, and
// active idle null). Idle now takes the max_performance mode's own level:
// within ±1 % on 9 of these 10 drives (0 before). The mode over every
// context is then left to be named as the lower level it mostly is
// (Partial), and active idle is read over max_performance quiet time at
// the blocks' own spread: within goal or its interval on 9 (0 before: it
// read the Partial level).
func TestIdleFromMaxPerformanceWhenPartialMerges(t *testing.T) {
	t.Parallel()
	if testing.Short() {
		t.Skip("simulated drives")
	}
	const drives = 10
	levelOK, aiOK := 0, 0
	for i := range drives {
		r := rand.New(rand.NewPCG(31, uint64(i)))
		u := func(a, b float64) float64 { return a + (b-a)*r.Float64() }
		p := drivesim.Draw(r, fmt.Sprintf("merge-%d", i))
		for p.SpindleW > 0 { // an SSD
			p = drivesim.Draw(r, fmt.Sprintf("merge-%d", i))
		}
		p.ActiveIdleW = units.Watts(u(0.05, 0.12))
		p.PartialW = p.ActiveIdleW * units.Watts(u(0.85, 0.92))
		p.SlumberW = p.PartialW * 0.05
		p.DevSlpW = min(p.DevSlpW, p.SlumberW/2)
		p.DipmSlumberAfterMs = 60000 // Partial, not Slumber, in its quiet time
		p.GCEveryS = 0
		gap := float64(p.ActiveIdleW-p.PartialW) / 5 // A at 5 V
		p.NoiseMA = 0.1
		p.Noise = drivesim.Noise{HumMA: 1e3 * gap * u(0.9, 1.3), HumHz: 60, HumHarmonics: 4, RippleMA: 1e3 * gap * u(1.0, 1.4), RippleKHz: 110 + u(0.03, 0.07)}
		path := filepath.Join(t.TempDir(), "c.iwcap")
		runModel(t, p, modelScript("min_power_with_partial", rand.New(rand.NewPCG(32, uint64(i)))), int64(i), path)
		opts := analysis.DefaultOptions()
		opts.States = &analysis.StateOptions{}
		rep, err := analysis.Analyze(path, opts)
		if err != nil {
			t.Fatal(err)
		}
		d, lv := rep.Drives[0], float64(rep.States[0].Levels.Idle)
		if math.Abs(lv-float64(p.ActiveIdleW)) <= 0.01*float64(p.ActiveIdleW) {
			levelOK++
		}
		e := math.Abs(float64(d.ActiveIdleW - p.ActiveIdleW))
		if e <= 0.01*float64(p.ActiveIdleW) || (d.ActiveIdleU95W != nil && e <= float64(*d.ActiveIdleU95W)) {
			aiOK++
		}
		t.Logf("drive %d (idle %.2f mW, Partial %.2f, hum %.2f mA, ripple %.2f mA): idle level %.3f mW, active idle %.3f mW ± %v", i,
			1e3*float64(p.ActiveIdleW), 1e3*float64(p.PartialW), p.Noise.HumMA, p.Noise.RippleMA, 1e3*lv, 1e3*float64(d.ActiveIdleW), ptrOr((*float64)(d.ActiveIdleU95W)))
	}
	t.Logf("%d drives: idle level within ±1 %% on %d; active idle within goal or interval on %d", drives, levelOK, aiOK)
	if levelOK < 9 {
		t.Errorf("idle level within ±1 %% on %d of %d drives, want ≥ 9", levelOK, drives)
	}
	// 9 of 10 measured (the tenth's idle level is not learned); 0 before
	// Partial was parted from the merged mode and active idle read over
	// max_performance time, 2 with the first alone.
	if aiOK < 8 {
		t.Errorf("active idle within goal or its interval on %d of %d drives, want ≥ 8", aiOK, drives)
	}
}
