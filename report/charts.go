package report

import (
	"errors"
	"fmt"
	"math"
	"path/filepath"
	"strings"

	"github.com/idlewatt/idlewatt/analysis"
	"github.com/idlewatt/idlewatt/internal/outfile"
	"github.com/idlewatt/idlewatt/report/chart"
)

// WriteCharts writes the charts that have data into dir, refusing to
// replace existing files.
func WriteCharts(r *analysis.Report, dir string) error { return writeCharts(r, dir, outfile.Options{}) }

func writeCharts(r *analysis.Report, dir string, o outfile.Options) error {
	var errs []error
	save := func(f *chart.Figure, err error, name string) {
		errs = append(errs, saveFig(f, err, filepath.Join(dir, name), o))
	}
	if traces := r.Traces(); len(traces) > 0 {
		names := make([]string, len(traces))
		for i, tr := range traces {
			names[i] = tr.Name
		}
		title, sub := PowerTitle(names, r.Capture)
		f, err := chart.PowerOverTime(traces, chart.PowerOpts{Title: title, Subtitle: sub, Unit: chart.UnitAuto, Notes: userNotes(r)})
		save(f, err, FilePower)
	}
	var idle []chart.Bar
	for _, d := range r.Drives {
		if d.Samples.Count == 0 {
			continue
		}
		if !math.IsNaN(d.ActiveIdleW) {
			idle = append(idle, chart.Bar{Label: d.Name, Value: d.ActiveIdleW, Err: barErr(d.ActiveIdleU95W)})
		}
	}
	if len(idle) > 0 {
		f, err := chart.ActiveIdlePower(idle)
		save(f, err, FileIdle)
	}
	if avg, ao := averageChart(r); len(avg) > 0 {
		f, err := chart.BarChart(avg, ao)
		save(f, err, FileAverage)
	}
	// The CDF marks the report's own percentiles (Distributions carries
	// them), not the chart's re-binned estimate of them.
	if dists := r.Distributions(); len(dists) > 0 {
		o := chart.DistOpts{Title: "Power distribution", Subtitle: "share of measured time per power bin (log scale: short modes such as DevSlp stay visible)", Unit: chart.UnitAuto, LogY: true}
		f, err := chart.Histogram(dists, o)
		save(f, err, FileHist)
		o = chart.DistOpts{Title: "Power CDF", Subtitle: "share of measured time at or below each power; p50 and p99 as in report.json", Unit: chart.UnitAuto}
		f, err = chart.CDF(dists, o)
		save(f, err, FileCDF)
	}
	errs = append(errs, writeDevSlpCharts(r, dir, o))
	return errors.Join(errs...)
}

// PowerTitle is the power-over-time chart's title and subtitle: what was
// measured (the drives, or how many), when and with what meter; never a file
// name.
func PowerTitle(drives []string, c analysis.CaptureInfo) (title, subtitle string) {
	title = "Power over Time"
	switch {
	case len(drives) == 1:
		title += ": " + drives[0]
	case len(drives) == 2:
		title += ": " + drives[0] + " and " + drives[1]
	case len(drives) > 2:
		title += fmt.Sprintf(": %d drives", len(drives))
	}
	var parts []string
	if c.Created != "" {
		parts = append(parts, "run of "+c.Created)
	}
	if m := strings.TrimSpace(c.MeterKind + " " + c.MeterModel); m != "" {
		if c.RateHz > 0 {
			m += " at " + g(float64(c.RateHz)) + " S/s"
		}
		parts = append(parts, "meter "+m)
	}
	return title, strings.Join(parts, " · ")
}

// barErr is a bar's whisker: the 95 % interval, none when unknown.
func barErr(u *float64) float64 {
	if u == nil || math.IsNaN(*u) || math.IsInf(*u, 0) {
		return 0
	}
	return *u
}

func saveFig(f *chart.Figure, err error, path string, o outfile.Options) error {
	if errors.Is(err, chart.ErrNoData) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("%s: %w", filepath.Base(path), err)
	}
	return f.SaveWith(path, o)
}

// userNotes are the report's annotations for the power chart.
func userNotes(r *analysis.Report) []chart.UserNote {
	var out []chart.UserNote
	for _, n := range r.Annotations {
		u := chart.UserNote{At: n.AtS, To: math.NaN(), Text: n.Text}
		if n.ToS != nil {
			u.To = *n.ToS
		}
		out = append(out, u)
	}
	return out
}
