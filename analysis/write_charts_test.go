package analysis

import (
	"math"
	"strings"
	"testing"

	"github.com/idlewatt/idlewatt/analysis/chart"
)

// average.png is the workload's average (report.md's phase table), not the
// capture's, and says so in its title; several workload phases give a group
// of bars each; no workload phase falls back to the capture, titled so.
func TestAverageBarsAreTheWorkloadAverage(t *testing.T) {
	drive := func(name string, avg float64, phases ...Phase) DriveReport {
		return DriveReport{Name: name, AverageW: avg, Samples: SampleInfo{Count: 100}, Phases: phases}
	}
	ph := func(name string, w float64) Phase { return Phase{Name: name, AverageW: w, Samples: 10} }
	r := &Report{Drives: []DriveReport{
		drive("a", 0.417, ph("idle", 0.40), ph("workload:pcmark7:all", 0.473), ph("devslp-cycle:1", 0.08)),
		drive("b", 0.231, ph("idle", 0.20), ph("workload:pcmark7:all", 0.259)),
	}}
	bars, workload, note := r.averageBars()
	if workload != "PCMark 7" || !strings.Contains(note, "workload:pcmark7:all") {
		t.Errorf("title %q, note %q", workload, note)
	}
	if len(bars) != 2 || bars[0].Value != 0.473 || bars[1].Value != 0.259 || bars[0].Group != "" {
		t.Errorf("bars %+v, want the workload phase's averages 0.473 and 0.259, ungrouped", bars)
	}

	r.Drives[0].Phases = append(r.Drives[0].Phases, ph("workload:pcmark7:gaming", 0.5))
	bars, _, note = r.averageBars()
	if len(bars) != 3 || bars[0].Group != "workload:pcmark7:all" || bars[2].Group != "workload:pcmark7:gaming" || !strings.Contains(note, "per workload phase") {
		t.Errorf("several workloads: bars %+v, note %q", bars, note)
	}

	r.Drives[1].Phases = append(r.Drives[1].Phases, ph("workload:iometer:4k", 0.3))
	if _, workload, _ = r.averageBars(); workload != "Workload" {
		t.Errorf("mixed kinds titled %q, want Workload", workload)
	}

	idleOnly := &Report{Drives: []DriveReport{drive("a", 0.4, ph("idle", 0.4))}}
	bars, workload, note = idleOnly.averageBars()
	if workload != "Capture" || len(bars) != 1 || bars[0].Value != 0.4 || !strings.Contains(note, "no workload") {
		t.Errorf("no workload phase: %q %q %+v", workload, note, bars)
	}
}

// The CDF's p50 and p99 are report.json's, handed over, not recomputed.
func TestChartDistsCarryTheReportsQuantiles(t *testing.T) {
	h, err := chart.NewHist(0.001, 10, 10, true)
	if err != nil {
		t.Fatal(err)
	}
	r := &Report{
		Drives: []DriveReport{{Name: "a", P50W: 0.39986, P99W: math.NaN()}},
		dists:  []chart.Distribution{{Name: "a", Hist: h}},
	}
	ds := r.chartDists()
	if len(ds) != 1 || len(ds[0].Quantiles) != 2 || ds[0].Quantiles[0] != (chart.Quantile{P: 0.5, W: 0.39986}) || !math.IsNaN(ds[0].Quantiles[1].W) {
		t.Errorf("quantiles %+v", ds[0].Quantiles)
	}
	if r.dists[0].Quantiles != nil {
		t.Error("chartDists changed the report's own distributions")
	}
}

func TestPowerTitleNamesTheRun(t *testing.T) {
	title, sub := PowerTitle([]string{"A", "B"}, CaptureInfo{Created: "2026-12-01T08:00:00Z", MeterKind: "hub", MeterModel: "x", RateHz: 10000})
	if title != "Power over Time: A and B" || sub != "run of 2026-12-01T08:00:00Z · meter hub x at 10000 S/s" {
		t.Errorf("%q / %q", title, sub)
	}
	if title, _ := PowerTitle([]string{"A", "B", "C"}, CaptureInfo{}); title != "Power over Time: 3 drives" {
		t.Errorf("%q", title)
	}
}
