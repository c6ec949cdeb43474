package analysis_test

import (
	"fmt"
	"math"
	"math/rand/v2"
	"path/filepath"
	"strings"
	"testing"

	"github.com/idlewatt/idlewatt/analysis"
	"github.com/idlewatt/idlewatt/capture"
	"github.com/idlewatt/idlewatt/states/detect"
	"github.com/idlewatt/idlewatt/states/drivesim"
	"github.com/idlewatt/idlewatt/units"
)

// TestBackgroundAboveIdleUnderGC draws drives whose own background work
// (GC, an HDD's background seeks) takes a third to 60 % of their quiet
// time — as much as active idle in the short max_performance phase — at
// 5–20 % above idle for an HDD and 1.5–3 × for an SSD, and checks against
// the model: active idle is the level the drive rests at, not its GC (±1 %
// or inside its interval), and the time at each is its own (idle and
// background residency within ±1 point). Campaign seed 27: GC named active
// idle (drives 71, 191: 5.15 W for 4.71 W, 3.53 W for 1.23 W) and an HDD's
// background 10 % above idle read as idle (drives 60–62, 2–7 points).
func TestBackgroundAboveIdleUnderGC(t *testing.T) {
	t.Parallel()
	if testing.Short() {
		t.Skip("24 simulated drives")
	}
	const drives = 24
	policies := []string{"max_performance", "med_power_with_dipm", "medium_power", "max_performance throughout"}
	var idleOff, resOff int
	for i := range drives {
		r := rand.New(rand.NewPCG(27, uint64(i)))
		u := func(a, b float64) float64 { return a + (b-a)*r.Float64() }
		p := drivesim.Draw(r, fmt.Sprintf("gc-%d", i))
		p.GCEveryS = u(0.3, 0.7)
		p.GCMs = 1e3 * p.GCEveryS * u(0.3, 0.6)
		if p.SpindleW > 0 {
			p.GCW = p.ActiveIdleW * units.Watts(u(1.05, 1.2))
		} else {
			p.GCW = p.ActiveIdleW * units.Watts(u(1.5, 3))
		}
		pol := policies[i%len(policies)]
		path := filepath.Join(t.TempDir(), "c.iwcap")
		script := modelScript(strings.TrimSuffix(pol, " throughout"), rand.New(rand.NewPCG(28, uint64(i))))
		if strings.HasSuffix(pol, " throughout") {
			// No lower level learned: idle's band is capped by the
			// background level alone.
			for k, e := range script {
				if e.kind == capture.StatePolicy {
					script[k].value = "max_performance"
				}
			}
		}
		tr := runModel(t, p, script, int64(i), path)
		opts := analysis.DefaultOptions()
		opts.States = &analysis.StateOptions{}
		rep, err := analysis.Analyze(path, opts)
		if err != nil {
			t.Fatal(err)
		}
		d, st := rep.Drives[0], rep.States[0]
		if st.Learning == nil || st.Learning.Err != "" {
			t.Errorf("draw %d (%s): levels not learned: %+v", i, pol, st.Learning)
			continue
		}
		desc := fmt.Sprintf("draw %d (%s, %s, σ %.2f mA, GC %.3g W %.0f ms every %.2f s): truth idle %.4g W; learned %+v",
			i, pol, p.Description, p.NoiseMA, float64(p.GCW), p.GCMs, p.GCEveryS, float64(p.ActiveIdleW), st.Learning.Levels)
		e := math.Abs(float64(d.ActiveIdleW - p.ActiveIdleW))
		if !(e <= 0.01*float64(p.ActiveIdleW)) && (d.ActiveIdleU95W == nil || e > float64(*d.ActiveIdleU95W)) {
			idleOff++
			t.Errorf("%s: active idle %.5g W ± %.2g", desc, d.ActiveIdleW, ptrOr((*float64)(d.ActiveIdleU95W)))
		}
		t.Logf("%s: active idle %.5g W; residency idle %.2f %% (truth %.2f), background %.2f %% (truth %.2f)", desc, d.ActiveIdleW,
			100*st.Residency["idle"], 100*tr.residency["idle"], 100*st.Residency["background"], 100*tr.residency["background"])
		off := false
		for _, s := range []string{"idle", "background"} {
			if e := 100 * math.Abs(st.Residency[s]-tr.residency[s]); e > 1 {
				off = true
				t.Logf("%s: residency %s %.2f %%, truth %.2f %%", desc, s, 100*st.Residency[s], 100*tr.residency[s])
			}
		}
		if off {
			resOff++
		}
	}
	t.Logf("%d drives: active idle off %d, idle or background residency off ±1 pp %d", drives, idleOff, resOff)
	if resOff > 2 {
		t.Errorf("idle or background residency off ±1 pp on %d of %d drives, want at most 2", resOff, drives)
	}
}

// TestIdleBandStopsShortOfBackground: the band of 10 ms means that can be
// active idle mirrors the threshold to the next lower level about idle;
// with that level far below (Slumber at 3 % of idle) it reached past GC at
// 1.8 × idle, whose blocks were then the band's densest mode — in its
// outer quarter, so active idle was left null (campaign seed 27 drive 8).
// With a background level learned, the band ends at the midpoint of idle
// idle and it, centred on idle.
func TestIdleBandStopsShortOfBackground(t *testing.T) {
	for _, c := range []struct {
		l      detect.Levels
		lo, hi float64
	}{
		{detect.Levels{Idle: 0.106, Slumber: 0.00306, Background: 0.188}, 0.065, 0.147},
		{detect.Levels{Idle: 0.106, Slumber: 0.00306}, math.Sqrt(0.106 * 0.00306), 0.212 - math.Sqrt(0.106*0.00306)},
		// Background beyond the mirrored band changes nothing.
		{detect.Levels{Idle: 0.106, Partial: 0.08, Background: 0.3}, math.Sqrt(0.106 * 0.08), 0.212 - math.Sqrt(0.106*0.08)},
	} {
		lo, hi, ok := analysis.IdleBandOf(c.l)
		if !ok || math.Abs(float64(lo)-c.lo) > 1e-9 || math.Abs(float64(hi)-c.hi) > 1e-9 {
			t.Errorf("%+v: band [%.6g, %.6g] %v, want [%.6g, %.6g]", c.l, lo, hi, ok, c.lo, c.hi)
		}
	}
}
