package report

import (
	"testing"

	"github.com/idlewatt/idlewatt/analysis"
)

// average.png shows the workload's average, not the capture's.
func TestAverageChartUsesWorkload(t *testing.T) {
	r := &analysis.Report{Drives: []analysis.DriveReport{
		{Name: "a", AverageW: 0.417, Samples: analysis.SampleInfo{Count: 10}, Phases: []analysis.Phase{
			{Name: "idle", AverageW: 0.4, Samples: 5}, {Name: "workload:pcmark7:all", AverageW: 0.473, Samples: 5}}},
		{Name: "b", AverageW: 0.230, Samples: analysis.SampleInfo{Count: 10}, Phases: []analysis.Phase{
			{Name: "workload:pcmark7:all", AverageW: 0.262, Samples: 5}}},
	}}
	bars, o := averageChart(r)
	if o.Title != "PCMark 7 Average Power Consumption" || len(bars) != 2 || bars[0].Value != 0.473 || bars[1].Value != 0.262 {
		t.Errorf("one workload: %q %+v", o.Title, bars)
	}
	r.Drives[1].Phases = append(r.Drives[1].Phases, analysis.Phase{Name: "workload:randread4k", AverageW: 1.5, Samples: 3})
	bars, o = averageChart(r)
	if o.Title != "Workload Average Power Consumption" || len(bars) != 3 || bars[2].Label != "b — randread4k" || bars[2].Value != 1.5 {
		t.Errorf("two workloads: %q %+v", o.Title, bars)
	}
	for i := range r.Drives {
		r.Drives[i].Phases = nil
	}
	bars, o = averageChart(r)
	if o.Title != "Average Power over the Whole Capture" || len(bars) != 2 || bars[0].Value != 0.417 {
		t.Errorf("no workload: %q %+v", o.Title, bars)
	}
	for in, want := range map[string]string{"workload:pcmark7:all": "PCMark 7", "workload:pcmark7:gaming": "PCMark 7 gaming", "workload:pcmark7-like": "PCMark 7-like", "workload:randread4k": "randread4k"} {
		if got := workloadTitle(in); got != want {
			t.Errorf("workloadTitle(%q) = %q, want %q", in, got, want)
		}
	}
}
