package analysis_test

import (
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/idlewatt/idlewatt/analysis"
	"github.com/idlewatt/idlewatt/analysis/judge"
	"github.com/idlewatt/idlewatt/analysis/synthcap"
	"github.com/idlewatt/idlewatt/capture"
	"github.com/idlewatt/idlewatt/report"
)

// devslpScenario is one DevSlp cycle on port 1 as the rig records it: the
// cycle phase, the pin (meter events), the read after the release.
func devslpScenario() synthcap.Scenario {
	s := twoDrives()
	s.Drives[0].DevSlpW = 0.003
	s.IO = append(s.IO, synthcap.IO{Port: 1, Start: 11001 * ms, Dur: 5 * ms, Op: capture.OpRead, Size: 4096})
	s.Phases = append(s.Phases, synthcap.Phase{At: 10 * time.Second, Port: 1, Name: "devslp-cycle:1"},
		synthcap.Phase{At: 12 * time.Second, Port: 1, Name: "devslp-end"})
	s.Pins = []synthcap.Pin{{Port: 1, From: 10500 * ms, To: 11000 * ms}}
	return s
}

func TestDevSlpCycleFromCapture(t *testing.T) {
	r := analyze(t, devslpScenario(), analysis.DefaultOptions())
	d, other := r.Drives[0].DevSlp, r.Drives[1].DevSlp
	if d.Outcome != judge.Pass || len(d.CycleResults) != 1 {
		t.Fatalf("devslp %+v", d)
	}
	near(t, "floor", float64(d.FloorW), 0.003, 1e-6)
	near(t, "power_w", float64(d.PowerW), 0.003, 1e-6)
	near(t, "pre-cycle", float64(d.PreCycleW), 0.4, 1e-6)
	if e := float64(d.EntryMs); math.Abs(e) > 0.2 || !(float64(d.EntryU95Ms) > 0) {
		t.Errorf("entry %v ± %v ms, want ≈ 0 with an interval", d.EntryMs, d.EntryU95Ms)
	}
	if x := float64(d.RiseMs); math.Abs(x) > 0.2 {
		t.Errorf("rise %v ms, want ≈ 0", d.RiseMs)
	}
	if x := float64(d.ExitMs); math.Abs(x-6) > 0.5 {
		t.Errorf("exit to first read %v ms, want ≈ 6 (read issued 1 ms after the release, 5 ms long)", d.ExitMs)
	}
	// The drive with no DevSlp phase: no outcome, every value null.
	if other.Outcome != "" || other.FloorW.Ok() || other.PowerW.Ok() || other.EntryMs.Ok() {
		t.Errorf("port 2 devslp %+v, want no outcome and nulls", other)
	}
	// The cycle chart is drawn.
	dir := t.TempDir()
	if err := report.WriteFiles(r, dir); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(dir, "devslp-p1.png")); err != nil {
		t.Error(err)
	}
}

// writeWithNotes writes s with StateNote events on port 1 first, as the rig
// records them before its DevSlp cycles.
func writeWithNotes(t *testing.T, s synthcap.Scenario, notes ...string) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "c.iwcap")
	w, err := capture.Create(path, s.Header(), capture.Options{})
	if err != nil {
		t.Fatal(err)
	}
	for _, n := range notes {
		if err := w.State(capture.StateEvent{Host: s.StartHost, Port: 1, Kind: capture.StateNote, Value: n}); err != nil {
			t.Fatal(err)
		}
	}
	if err := synthcap.Generate(s, w); err != nil {
		t.Fatal(err)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	return path
}

func TestDevSlpOutcomesFromCaptureNotes(t *testing.T) {
	high := devslpScenario()
	high.Drives[0].DevSlpW = 0.009 // above the default 5 mW limit
	for _, c := range []struct {
		name  string
		s     synthcap.Scenario
		notes []string
		want  judge.Outcome
		floor bool
	}{
		{"floor above the limit", high, nil, judge.Fail, true},
		{"criteria from the capture", high, []string{analysis.NoteDevSlpCriteria + `{"limit_w":0.01,"entry_bound_ms":100,"mdat_ms":10,"deto_ms":20}`}, judge.Pass, true},
		{"host cause", high, []string{analysis.NoteDevSlpHost + "ALPM policy med_power_with_dipm not applied: no SATA host found under /sys"}, judge.Inconclusive, true},
		{"host cause does not spoil a pass", devslpScenario(), []string{analysis.NoteDevSlpHost + "ALPM policy not applied"}, judge.Pass, true},
		{"not supported, not cycled", twoDrives(), []string{analysis.NoteDevSlpCriteria + `{"limit_w":0.005}`, analysis.NoteDevSlpSupport + "no: IDENTIFY word 78 bit 8 clear"}, judge.NotSupported, false},
		{"pin unavailable, not cycled", twoDrives(), []string{analysis.NoteDevSlpCriteria + `{"limit_w":0.005}`, analysis.NoteDevSlpSupport + "yes", analysis.NoteDevSlpHost + "the meter cannot drive DEVSLP pins"}, judge.Inconclusive, false},
	} {
		t.Run(c.name, func(t *testing.T) {
			r, err := analysis.Analyze(writeWithNotes(t, c.s, c.notes...), analysis.DefaultOptions())
			if err != nil {
				t.Fatal(err)
			}
			d := r.Drives[0].DevSlp
			if d.Outcome != c.want || d.FloorW.Ok() != c.floor {
				t.Errorf("outcome %s (%s), floor %v; want %s, floor present %v", d.Outcome, d.Reason, d.FloorW, c.want, c.floor)
			}
			if c.want == judge.Inconclusive && !strings.Contains(d.Reason, "host:") {
				t.Errorf("reason %q does not name the host cause", d.Reason)
			}
		})
	}
}
