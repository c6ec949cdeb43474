package analysis_test

import (
	"math"
	"path/filepath"
	"testing"
	"time"

	"github.com/idlewatt/idlewatt/analysis"
	"github.com/idlewatt/idlewatt/analysis/synthcap"
)

// A capture with no drive profiles: levels must be learned from the idle
// samples, and DevSlp found from the power alone.
func TestDetectStatesLearnsLevels(t *testing.T) {
	sc := synthcap.Review(3*time.Minute, 2000, 50)
	reps := analyzeStates(t, sc).States
	if len(reps) != len(sc.Drives) {
		t.Fatalf("%d state reports for %d drives", len(reps), len(sc.Drives))
	}
	for i, r := range reps {
		d := sc.Drives[i]
		if r.Learning == nil || r.Learning.Err != "" || r.Note != "" {
			t.Errorf("%s: levels not learned: %+v, note %q", r.Name, r.Learning, r.Note)
		}
		if e := math.Abs(float64(r.Levels.Idle)-d.IdleW) / d.IdleW; e > 0.02 {
			t.Errorf("%s: learned idle %.4f W, truth %.4f W", r.Name, float64(r.Levels.Idle), d.IdleW)
		}
		if got := float64(r.PowerW["devslp"]); math.Abs(got-d.DevSlpW) > 0.0002 {
			t.Errorf("%s: devslp power %.5f W, truth %.5f W (±0.2 mW)", r.Name, got, d.DevSlpW)
		}
		if r.Residency["devslp"] <= 0 || r.Residency["idle"] < 0.5 {
			t.Errorf("%s: residency %v", r.Name, r.Residency)
		}
		var sum float64
		for _, x := range r.Residency {
			sum += x
		}
		if math.Abs(sum-1) > 1e-9 {
			t.Errorf("%s: residency sums to %v", r.Name, sum)
		}
		// DevSlp intervals are found from the power; their entry and exit
		// latencies are not states.json's (they are the DevSlp block's
		// change points, one definition for every output).
		if r.Spans["devslp"] < 3 {
			t.Errorf("%s: %d DevSlp intervals, want ≥ 3 (one per DEVSLP span)", r.Name, r.Spans["devslp"])
		}
		if _, ok := r.Entry["devslp"]; ok {
			t.Errorf("%s: states.json carries a second DevSlp entry latency %+v", r.Name, r.Entry["devslp"])
		}
		t.Logf("%s: levels %+v; residency %v; devslp %.3f mW; entry %+v", r.Name, r.Levels, r.Residency, r.PowerW["devslp"]*1e3, r.Entry)
	}
}

// A DevSlp floor under one LSB of a quantised meter reads 0 W: the level
// is learned present (Levels' 0 means absent), so the DEVSLP spans are
// DevSlp, not a "Slumber" at 0 W (campaign 1:66: DevSlp 51 % read 30 %,
// Slumber named at the floor).
func TestDevSlpFloorUnderOneLSB(t *testing.T) {
	sc := synthcap.Review(3*time.Minute, 2000, 50)
	sc.CurrentLSB, sc.VoltLSB = 50e-6, 1.25e-3
	for i := range sc.Drives {
		sc.Drives[i].DevSlpW = 0.00005 // 10 µA at 5 V: a fifth of an LSB
		sc.Drives[i].Split5V = 1
	}
	for _, r := range analyzeStates(t, sc).States {
		if r.Learning == nil || r.Learning.Err != "" {
			t.Fatalf("%s: levels not learned: %+v", r.Name, r.Learning)
		}
		if r.Levels.DevSlp <= 0 || r.Levels.Slumber != 0 {
			t.Errorf("%s: levels %+v: want DevSlp present (at most an LSB) and no Slumber", r.Name, r.Levels)
		}
		// Two 5 s DEVSLP spans in 180 s, entry within the span.
		if got := r.Residency["devslp"]; got < 0.9*10.0/180 {
			t.Errorf("%s: DevSlp residency %.2f %%, want about %.2f %%", r.Name, 100*got, 100*10.0/180)
		}
	}
}

// analyzeStates writes sc as a capture and analyses it with state
// detection.
func analyzeStates(t *testing.T, sc synthcap.Scenario) *analysis.Report {
	t.Helper()
	path := filepath.Join(t.TempDir(), "s.iwcap")
	if err := synthcap.Write(path, sc); err != nil {
		t.Fatal(err)
	}
	opts := analysis.DefaultOptions()
	opts.States = &analysis.StateOptions{}
	rep, err := analysis.Analyze(path, opts)
	if err != nil {
		t.Fatal(err)
	}
	return rep
}
