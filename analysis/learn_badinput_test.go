package analysis_test

import (
	"bytes"
	"encoding/json"
	"math"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/idlewatt/idlewatt/analysis"
	"github.com/idlewatt/idlewatt/analysis/synthcap"
	"github.com/idlewatt/idlewatt/report"
)

// TestUnlearnableLevelsAreNull: a capture whose levels cannot be learned —
// too short, no quiet stretch (I/O throughout), a channel of one value —
// gets null residency, state power and active idle, a note that says why,
// and states.json's learning.error the same; never a guess from I/O alone.
// The figures that need no levels (average, energy) are still measured.
func TestUnlearnableLevelsAreNull(t *testing.T) {
	t.Parallel()
	base := func(d time.Duration) synthcap.Scenario {
		return synthcap.Scenario{RateHz: 10000, Duration: d, StartHost: 1e12, Seed: 3, NoiseA: 0.002, CurrentLSB: 0.0001, VoltLSB: 0.00125,
			Drives:    []synthcap.Drive{{Port: 1, Name: "d", IdleW: 0.3, BusyW: 1.5}},
			MarkEvery: 100 * time.Millisecond, RTTMin: 300 * time.Microsecond}
	}
	short := base(150 * time.Millisecond)
	busy := base(2 * time.Second)
	busy.Bursts = []synthcap.Bursts{{Port: 1, First: 0, Every: 2 * time.Millisecond, Ops: 1, OpDur: 2 * time.Millisecond, Size: 4096}}
	stuck := base(2 * time.Second)
	stuck.NoiseA, stuck.CurrentLSB, stuck.VoltLSB = 0, 0, 0
	for _, c := range []struct {
		name string
		s    synthcap.Scenario
		why  string
	}{
		{"too short", short, "ms of quiet time in whole 10 ms blocks"},
		{"no quiet stretch", busy, "no quiet stretch"},
		{"one value", stuck, "reads one value"},
	} {
		t.Run(c.name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "c.iwcap")
			if err := synthcap.Write(path, c.s); err != nil {
				t.Fatal(err)
			}
			opts := analysis.DefaultOptions()
			opts.States = &analysis.StateOptions{}
			r, err := analysis.Analyze(path, opts)
			if err != nil {
				t.Fatal(err)
			}
			d := r.Drives[0]
			if len(r.States) != 1 || r.States[0].Learning == nil || !strings.Contains(r.States[0].Learning.Err, c.why) || r.States[0].Residency != nil {
				t.Fatalf("states: %+v, want no residency and learning.error saying %q", r.States, c.why)
			}
			found := false
			for _, n := range r.Notes {
				found = found || (strings.Contains(n, c.why) && strings.Contains(n, "null"))
			}
			if !found {
				t.Errorf("no note says %q and that the figures are null: %q", c.why, r.Notes)
			}
			if !math.IsNaN(float64(d.ActiveIdleW)) || d.ActiveIdleU95W != nil || !math.IsNaN(d.Residency.Idle) || !math.IsNaN(d.Residency.Active) || !math.IsNaN(float64(d.StatePowerW.Idle)) {
				t.Errorf("active idle %v ± %v, residency %+v, state power %+v: want null", d.ActiveIdleW, d.ActiveIdleU95W, d.Residency, d.StatePowerW)
			}
			if math.IsNaN(float64(d.AverageW)) || math.IsNaN(float64(d.EnergyJ)) {
				t.Errorf("average %v, energy %v: need no levels, want measured", d.AverageW, d.EnergyJ)
			}
			// null in report.json itself.
			b, err := json.Marshal(d)
			if err != nil {
				t.Fatal(err)
			}
			var raw struct {
				ActiveIdle json.RawMessage            `json:"active_idle_w"`
				Residency  map[string]json.RawMessage `json:"residency"`
			}
			if err := json.Unmarshal(b, &raw); err != nil {
				t.Fatal(err)
			}
			if string(raw.ActiveIdle) != "null" || string(raw.Residency["idle"]) != "null" || string(raw.Residency["devslp"]) != "null" {
				t.Errorf("report.json: active_idle_w %s, residency %v: want null", raw.ActiveIdle, raw.Residency)
			}
			var md bytes.Buffer
			report.WriteMarkdown(&md, r)
			if strings.Contains(md.String(), "NaN") || !strings.Contains(md.String(), "not classified: levels not learned") {
				t.Errorf("report.md shows NaN, or no reason the drive is not classified:\n%s", md.String())
			}
			var back analysis.DriveReport
			if err := json.Unmarshal(b, &back); err != nil || !math.IsNaN(back.Residency.Idle) {
				t.Errorf("read back: residency %+v (%v), want NaN", back.Residency, err)
			}
		})
	}
}
