package report

import (
	"strings"

	"github.com/idlewatt/idlewatt/analysis"
	"github.com/idlewatt/idlewatt/report/chart"
)

// averageChart picks what average.png shows. A review's "PCMark 7 Average
// Power Consumption" is the average over the workload, not over the whole
// capture (which also holds idle and DevSlp time): with one workload phase
// its per-drive average, with several one bar per drive and phase, and only
// without any workload phase the whole capture, titled as such.
func averageChart(r *analysis.Report) ([]chart.Bar, chart.BarOpts) {
	var names []string
	seen := map[string]bool{}
	for _, d := range r.Drives {
		for _, ph := range d.Phases {
			if strings.HasPrefix(ph.Name, "workload:") && ph.Samples > 0 && !seen[ph.Name] {
				seen[ph.Name] = true
				names = append(names, ph.Name)
			}
		}
	}
	o := chart.BarOpts{Subtitle: "lower is better", Axis: "Power (W)", Format: "%.3f W"}
	var bars []chart.Bar
	switch len(names) {
	case 0:
		o.Title = "Average Power over the Whole Capture"
		o.Subtitle = "idle, workload and DevSlp time together (no workload phase) · lower is better"
		for _, d := range r.Drives {
			if d.Samples.Count > 0 {
				bars = append(bars, chart.Bar{Label: d.Name, Value: float64(d.AverageW), Err: barErr(d.AverageU95W)})
			}
		}
	case 1:
		o.Title = workloadTitle(names[0]) + " Average Power Consumption"
		for _, d := range r.Drives {
			for _, ph := range d.Phases {
				if ph.Name == names[0] && ph.Samples > 0 {
					bars = append(bars, chart.Bar{Label: d.Name, Value: float64(ph.AverageW), Err: barErr(ph.AverageU95W)})
				}
			}
		}
	default:
		o.Title = "Workload Average Power Consumption"
		o.Subtitle = "per workload phase · lower is better"
		o.Keep = true
		for _, n := range names {
			for _, d := range r.Drives {
				for _, ph := range d.Phases {
					if ph.Name == n && ph.Samples > 0 {
						bars = append(bars, chart.Bar{Label: d.Name + " — " + workloadTitle(n), Value: float64(ph.AverageW), Err: barErr(ph.AverageU95W)})
					}
				}
			}
		}
	}
	return bars, o
}

// workloadTitle turns a phase name into a chart title:
// "workload:pcmark7:all" → "PCMark 7", "workload:pcmark7:gaming" →
// "PCMark 7 gaming", "workload:randread4k" → "randread4k".
func workloadTitle(phase string) string {
	s := strings.TrimPrefix(phase, "workload:")
	s = strings.TrimSuffix(s, ":all")
	if rest, ok := strings.CutPrefix(s, "pcmark7"); ok {
		s = "PCMark 7" + strings.ReplaceAll(rest, ":", " ")
	}
	return s
}
