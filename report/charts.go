package report

import (
	"bytes"
	"errors"
	"fmt"
	"math"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"sync"

	"github.com/idlewatt/idlewatt/analysis"
	"github.com/idlewatt/idlewatt/analysis/series"
	"github.com/idlewatt/idlewatt/internal/outfile"
	"github.com/idlewatt/idlewatt/report/chart"
	"github.com/idlewatt/idlewatt/units"
)

// WriteCharts writes the charts that have data into dir, refusing to
// replace existing files.
func WriteCharts(r *analysis.Report, dir string) error {
	outs, err := buildCharts(r, nil)
	if err != nil {
		return err
	}
	return WriteOutputs(dir, outs, outfile.Options{}, nil)
}

// MaxChartDrives bounds the drives a report's charts draw: a stacked power
// chart is 2.3 in per drive and a bar chart 0.32 in per bar, so the 2048
// drives of a 4096-channel capture made a power.png 4711 in tall (434 M
// pixels, 1.7 GB while drawn, minutes of drawing). The charts draw the
// first MaxChartDrives drives and a note says so; every other output holds
// every drive, and --ports charts others.
const MaxChartDrives = 16

// chartDrives returns the drives the charts draw and, when that is not
// all of them, the note that says so.
func chartDrives(r *analysis.Report) (map[string]bool, map[int]bool, string) {
	names, ports := map[string]bool{}, map[int]bool{}
	for i, d := range r.Drives {
		if i == MaxChartDrives {
			break
		}
		names[d.Name], ports[d.Port] = true, true
	}
	if len(r.Drives) <= MaxChartDrives {
		return names, ports, ""
	}
	return names, ports, fmt.Sprintf("charts: the capture has %d drives; power.png, active-idle.png, average.png, power-hist.png, power-cdf.png and the DevSlp charts draw the first %d (ports %d–%d) — one chart of every drive would not fit on a page; report.json, report.md, summary.csv and report.html hold every drive, and --ports P,… charts others",
		len(r.Drives), MaxChartDrives, r.Drives[0].Port, r.Drives[MaxChartDrives-1].Port)
}

// noteChartDrives adds to r's notes, once, the note that the charts draw
// only some of its drives, if they do.
func noteChartDrives(r *analysis.Report) {
	if _, _, note := chartDrives(r); note != "" && !slices.Contains(r.Notes, note) {
		r.Notes = append(r.Notes, note)
	}
}

// buildCharts renders the charts that have data, asking stop (if set)
// before each. The figures are made one after another; their drawing and
// PNG encoding, nearly all the time, run on up to GOMAXPROCS goroutines
// (each figure is drawn on a canvas of its own, with faces of its own),
// and the outputs and errors are gathered in the figures' order: the same
// as drawing them one by one.
func buildCharts(r *analysis.Report, stop func() error) ([]Output, error) {
	var jobs []*chartJob
	var wg sync.WaitGroup
	slots := make(chan struct{}, runtime.GOMAXPROCS(0))
	err := makeCharts(r, func(f *chart.Figure, err error, name string) error {
		if stop != nil {
			if err := stop(); err != nil {
				return err
			}
		}
		j := &chartJob{}
		jobs = append(jobs, j)
		wg.Add(1)
		slots <- struct{}{}
		go func() {
			defer func() { <-slots; wg.Done() }()
			j.out, j.err = renderFig(f, err, name)
		}()
		return nil
	})
	wg.Wait()
	if err != nil {
		return nil, err // stopped: what was drawn is dropped
	}
	var outs []Output
	var errs []error
	for _, j := range jobs {
		if j.err != nil {
			errs = append(errs, j.err)
		} else if j.out.Data != nil {
			outs = append(outs, j.out)
		}
	}
	return outs, errors.Join(errs...)
}

// chartJob is one chart being rendered.
type chartJob struct {
	out Output
	err error
}

// makeCharts makes the figures of the charts in order and hands each to
// save (with its error, if it could not be made, and its file name); an
// error of save ends it.
func makeCharts(r *analysis.Report, save func(*chart.Figure, error, string) error) error {
	names, ports, _ := chartDrives(r)
	if traces := r.Traces(); len(traces) > 0 {
		traces = traces[:min(len(traces), MaxChartDrives)] // aligned with r.Drives
		tn := make([]string, len(traces))
		for i, tr := range traces {
			tn[i] = tr.Name
		}
		title, sub := PowerTitle(tn, r.Capture)
		f, err := chart.PowerOverTime(traces, chart.PowerOpts{Title: title, Subtitle: sub, Unit: chart.UnitAuto, Notes: userNotes(r)})
		if err := save(f, err, FilePower); err != nil {
			return err
		}
	}
	var idle []chart.Bar
	for i, d := range r.Drives {
		if i == MaxChartDrives {
			break
		}
		if d.Samples.Count == 0 {
			continue
		}
		if !math.IsNaN(float64(d.ActiveIdleW)) {
			idle = append(idle, chart.Bar{Label: d.Name, Value: float64(d.ActiveIdleW), Err: barErr(d.ActiveIdleU95W)})
		}
	}
	if len(idle) > 0 {
		f, err := chart.ActiveIdlePower(idle)
		if err := save(f, err, FileIdle); err != nil {
			return err
		}
	}
	if avg, ao := averageChart(r); len(avg) > 0 {
		avg = capBars(avg, names)
		f, err := chart.BarChart(avg, ao)
		if err := save(f, err, FileAverage); err != nil {
			return err
		}
	}
	// The CDF marks the report's own percentiles (Distributions carries
	// them), not the chart's re-binned estimate of them.
	var dists []series.Distribution
	for _, d := range r.Distributions() {
		if names[d.Name] {
			dists = append(dists, d)
		}
	}
	if len(dists) > 0 {
		o := chart.DistOpts{Title: "Power distribution", Subtitle: "share of measured time per power bin (log scale: short modes such as DevSlp stay visible)", Unit: chart.UnitAuto, LogY: true}
		f, err := chart.Histogram(dists, o)
		if err := save(f, err, FileHist); err != nil {
			return err
		}
		o = chart.DistOpts{Title: "Power CDF", Subtitle: "share of measured time at or below each power; p50 and p99 as in report.json", Unit: chart.UnitAuto}
		f, err = chart.CDF(dists, o)
		if err := save(f, err, FileCDF); err != nil {
			return err
		}
	}
	return buildDevSlpCharts(r, ports, save)
}

// capBars keeps the bars of the charted drives (a bar's label begins with
// its drive's name; workload bars add " — phase").
func capBars(bars []chart.Bar, names map[string]bool) []chart.Bar {
	var out []chart.Bar
	for _, b := range bars {
		name, _, _ := strings.Cut(b.Label, " — ")
		if names[b.Label] || names[name] {
			out = append(out, b)
		}
	}
	return out
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
			m += " at " + g(c.RateHz) + " S/s"
		}
		parts = append(parts, "meter "+m)
	}
	return title, strings.Join(parts, " · ")
}

// barErr is a bar's whisker: the 95 % interval, none when unknown.
func barErr(u *units.Watts) float64 {
	if u == nil || math.IsNaN(float64(*u)) || math.IsInf(float64(*u), 0) {
		return 0
	}
	return float64(*u)
}

// saveFig renders f and writes it to path under o (compare's charts).
func saveFig(f *chart.Figure, err error, path string, o outfile.Options) error {
	out, err := renderFig(f, err, filepath.Base(path))
	if err != nil || out.Data == nil {
		return err
	}
	return outfile.WriteFile(path, out.Data, o)
}

// renderFig renders f as a PNG or SVG by name's extension; an Output with
// no data for chart.ErrNoData (the chart is skipped).
func renderFig(f *chart.Figure, err error, name string) (Output, error) {
	if errors.Is(err, chart.ErrNoData) {
		return Output{}, nil
	}
	if err != nil {
		return Output{}, fmt.Errorf("%s: %w", name, err)
	}
	var b bytes.Buffer
	if err := f.Write(&b, strings.TrimPrefix(filepath.Ext(name), ".")); err != nil {
		return Output{}, fmt.Errorf("%s: %w", name, err)
	}
	return Output{Name: name, Data: b.Bytes()}, nil
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
