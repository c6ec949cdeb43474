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
	path := filepath.Join(t.TempDir(), "s.iwcap")
	sc := synthcap.Review(3*time.Minute, 2000, 50)
	if err := synthcap.Write(path, sc); err != nil {
		t.Fatal(err)
	}
	opts := analysis.DefaultOptions()
	opts.States = &analysis.StateOptions{}
	rep, err := analysis.Analyze(path, opts)
	if err != nil {
		t.Fatal(err)
	}
	reps := rep.States
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
		if got := r.PowerW["devslp"]; math.Abs(got-d.DevSlpW) > 0.0002 {
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
