package analysis_test

import (
	"errors"
	"math"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/idlewatt/idlewatt/analysis"
	"github.com/idlewatt/idlewatt/analysis/synthcap"
	"github.com/idlewatt/idlewatt/units"
)

func windowReport(t *testing.T, path string, w *analysis.Window) *analysis.Report {
	t.Helper()
	o := analysis.DefaultOptions()
	o.Window = w
	r, err := analysis.Analyze(path, o)
	if err != nil {
		t.Fatal(err)
	}
	return r
}

// Windows partition a capture: [0, 37.3) and [37.3, end) hold every
// sample of the whole report once, and their energies add up to its
// energy; each says which interval it covers; I/O is counted by issue
// time in the one window that holds it.
func TestWindowPartitions(t *testing.T) {
	sc := synthcap.Review(75*time.Second, 10000, 20)
	// A hole on each side of the cut. (Samples missing right at an
	// interval's start, before its first sample, are not counted missing,
	// as at a capture's start.)
	sc.Gaps = []synthcap.Gap{{Channel: -1, Start: 100000, Count: 3000}, {Channel: 1, Start: 500000, Count: 2000}} // channel 1: port 1's 12 V rail
	path := filepath.Join(t.TempDir(), "c.iwcap")
	if err := synthcap.Write(path, sc); err != nil {
		t.Fatal(err)
	}
	whole := windowReport(t, path, nil)
	a := windowReport(t, path, &analysis.Window{FromS: 0, ToS: 37.3})
	b := windowReport(t, path, &analysis.Window{FromS: 37.3})
	if a.Interval == nil || a.Interval.FromS != 0 || a.Interval.ToS != 37.3 || b.Interval == nil || b.Interval.FromS != 37.3 || whole.Interval != nil {
		t.Fatalf("intervals: %+v %+v %+v", a.Interval, b.Interval, whole.Interval)
	}
	if !strings.Contains(a.Notes[0], "covers only 0–37.3 s") {
		t.Errorf("the first note %q does not say the report covers only the interval", a.Notes[0])
	}
	for i, d := range whole.Drives {
		da, db := a.Drives[i], b.Drives[i]
		if n := da.Samples.Count + db.Samples.Count; n != d.Samples.Count {
			t.Errorf("port %d: %d + %d samples, the whole report %d", d.Port, da.Samples.Count, db.Samples.Count, d.Samples.Count)
		}
		if e := da.EnergyJ + db.EnergyJ; math.Abs(float64(e-d.EnergyJ)) > 1e-9*float64(d.EnergyJ) {
			t.Errorf("port %d: %.9f + %.9f J = %.9f, the whole report %.9f J", d.Port, da.EnergyJ, db.EnergyJ, e, d.EnergyJ)
		}
		if math.Abs(float64(da.DurationS-37.0)) > 0.01 || math.Abs(float64(da.DurationS+db.DurationS-d.DurationS)) > 0.01 {
			t.Errorf("port %d: durations %.4f + %.4f s, whole %.4f s", d.Port, da.DurationS, db.DurationS, d.DurationS)
		}
		if da.IO.Ops+db.IO.Ops != d.IO.Ops || da.IO.Ops == 0 || db.IO.Ops == 0 {
			t.Errorf("port %d: I/O %d + %d ops, whole %d", d.Port, da.IO.Ops, db.IO.Ops, d.IO.Ops)
		}
		if da.PeakW > d.PeakW || db.PeakW > d.PeakW || math.Max(float64(da.PeakW), float64(db.PeakW)) != float64(d.PeakW) {
			t.Errorf("port %d: peaks %g, %g; whole %g", d.Port, da.PeakW, db.PeakW, d.PeakW)
		}
		// Each hole is in its window.
		if da.Samples.Dropped+db.Samples.Dropped != d.Samples.Dropped || da.Samples.Dropped != 3000 || db.Samples.Dropped != map[int]uint64{1: 2000, 2: 0}[d.Port] {
			t.Errorf("port %d: dropped %d + %d, whole %d", d.Port, da.Samples.Dropped, db.Samples.Dropped, d.Samples.Dropped)
		}
	}
	// The phase in force at 37.3 s (the workload, from 18.75 s) carries
	// into b: b's workload phase is the whole report's after 37.3 s.
	var ph []string
	for _, p := range b.Drives[0].Phases {
		ph = append(ph, p.Name)
	}
	if len(ph) != 1 || ph[0] != "workload:pcmark7-like" || math.Abs(float64(b.Drives[0].Phases[0].StartS-37.3)) > 1e-3 {
		t.Errorf("b's phases %v (start %v), want the workload from 37.3 s", ph, b.Drives[0].Phases)
	}
}

// A DevSlp cycle the window holds whole is judged as in the whole report;
// one it cuts is not judged, and the report says so.
func TestWindowCutsCycles(t *testing.T) {
	sc := synthcap.Review(75*time.Second, 10000, 20)
	sc.Phases = append(sc.Phases, synthcap.Phase{At: 59 * time.Second, Name: "devslp-cycle:1"}, synthcap.Phase{At: 67 * time.Second, Name: "idle"})
	path := filepath.Join(t.TempDir(), "c.iwcap")
	if err := synthcap.Write(path, sc); err != nil {
		t.Fatal(err)
	}
	whole := windowReport(t, path, nil)
	in := windowReport(t, path, &analysis.Window{FromS: 55, ToS: 70})
	cut := windowReport(t, path, &analysis.Window{FromS: 62, ToS: 70})
	if len(whole.Drives[0].DevSlp.CycleResults) != 1 {
		t.Fatalf("the whole report judged %d cycles, want 1", len(whole.Drives[0].DevSlp.CycleResults))
	}
	w, i := whole.Drives[0].DevSlp, in.Drives[0].DevSlp
	if len(i.CycleResults) != 1 || i.Outcome != w.Outcome || i.CycleResults[0].EntryMs != w.CycleResults[0].EntryMs {
		t.Errorf("55–70 s: %+v; whole %+v", i.CycleResults, w.CycleResults)
	}
	if n := len(cut.Drives[0].DevSlp.CycleResults); n != 0 {
		t.Errorf("62–70 s cuts the 59–67 s cycle, yet %d cycles were judged", n)
	}
	found := false
	for _, n := range cut.Notes {
		found = found || strings.Contains(n, "cut by the interval are not judged")
	}
	if !found {
		t.Errorf("notes %q do not say a cycle was cut", cut.Notes)
	}
	for _, bad := range []analysis.Window{{FromS: 5, ToS: 5}, {FromS: 5, ToS: 2}, {FromS: -1}, {FromS: units.Seconds(math.NaN())}} {
		o := analysis.DefaultOptions()
		o.Window = &bad
		if _, err := analysis.Analyze(path, o); !errors.Is(err, analysis.ErrOptions) {
			t.Errorf("window %+v: %v, want ErrOptions", bad, err)
		}
	}
}
