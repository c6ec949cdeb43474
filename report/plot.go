package report

import (
	"bytes"
	"errors"
	"fmt"
	"math"
	"path/filepath"
	"slices"
	"strings"

	"github.com/idlewatt/idlewatt/analysis"
	"github.com/idlewatt/idlewatt/analysis/series"
	"github.com/idlewatt/idlewatt/capture"
	"github.com/idlewatt/idlewatt/internal/outfile"
	"github.com/idlewatt/idlewatt/report/chart"
	"github.com/idlewatt/idlewatt/units"
)

// PlotOptions control Plot.
type PlotOptions struct {
	From, To units.Seconds // from meter index 0; To ≤ From = the whole capture
	Buckets  int           // envelope points (default 2000)
	Title    string
	Subtitle string
	// Width and Height (inches) and DPI size the image for print; 0 = the
	// chart's defaults (10 in wide, 96 dpi).
	Width, Height, DPI float64
	LogY               bool // logarithmic power axis
	// Notes are the capture's annotations (capture/notes), drawn on the
	// chart.
	Notes []chart.UserNote
	Unit  chart.PowerUnit // chart.UnitAuto picks mW below 1 W
	// Open, if set, opens the capture instead of capture.Open(path) (the
	// command line passes one that stops on SIGINT).
	Open analysis.Opener
	// Stop, if set, is asked before the chart is written; an error from it
	// (a signal ended a pass early, say) is returned and nothing written,
	// since the passes would have drawn what was read until then.
	Stop func() error
	// Out says what out may replace (internal/outfile); the capture is
	// always one of its inputs.
	Out outfile.Options
	// Ports, if set, are the drives drawn (analysis.PlotOptions.Ports).
	Ports []int
}

// Plot draws power over time for every drive of the capture at path into
// out (.png or .svg), from what analysis.PlotTraces reads: zoomed out only
// the summaries stored in the capture, zoomed in every sample.
//
// It returns the notes about the data a report of the capture gives —
// damage, rejected indices, trailing bytes, an early end, the clock fit's
// distrust — word for word, for the caller to print.
func Plot(path, out string, o PlotOptions) ([]string, error) {
	notes, b, err := RenderPlot(path, filepath.Ext(out), o)
	if err != nil {
		return notes, err
	}
	o.Out.Inputs = append(o.Out.Inputs[:len(o.Out.Inputs):len(o.Out.Inputs)], path)
	return notes, outfile.WriteFile(out, b, o.Out)
}

// RenderPlot is Plot's chart in memory, as a PNG or SVG by ext (".png",
// ".svg"): nothing is written. At most MaxChartDrives drives are drawn (the
// first, or o.Ports); a note says when there were more.
func RenderPlot(path, ext string, o PlotOptions) ([]string, []byte, error) {
	// More drives than a chart draws: only the first are read (the work is
	// the chart's, not the capture's).
	var capNote string
	if len(o.Ports) == 0 {
		if ports, err := capturePorts(path, o.Open); err == nil && len(ports) > MaxChartDrives {
			o.Ports = ports[:MaxChartDrives]
			capNote = fmt.Sprintf("the chart draws the first %d of the capture's %d drives (ports %d–%d; a chart of every drive would not fit on a page); --ports P,… draws others",
				MaxChartDrives, len(ports), ports[0], ports[MaxChartDrives-1])
		}
	}
	pd, err := analysis.PlotTraces(path, analysis.PlotOptions{From: o.From, To: o.To, Buckets: o.Buckets, Open: o.Open, Ports: o.Ports})
	if err != nil {
		return nil, nil, err
	}
	traces, notes := pd.Traces, pd.Notes
	if capNote != "" {
		notes = append(notes, capNote)
	}
	// A window asked for (--from/--to) that holds no point is refused; the
	// whole view of a capture without drive power is drawn empty, as report
	// gives its nulls.
	if end, ok := tracesEnd(traces); (o.From > 0 || o.To > o.From) && (!ok || float64(o.From) >= end) {
		if !ok {
			return notes, nil, fmt.Errorf("%w: from %g s to %s: the capture has none there", ErrEmptyWindow, o.From, windowEnd(o.From, o.To))
		}
		return notes, nil, fmt.Errorf("%w: from %g s: the capture's samples end at about %.3g s", ErrEmptyWindow, o.From, end)
	}
	if o.Stop != nil {
		if err := o.Stop(); err != nil {
			return nil, nil, err
		}
	}
	po := chart.PowerOpts{Title: o.Title, Subtitle: o.Subtitle, Unit: o.Unit, From: float64(o.From), To: float64(o.To), LogY: o.LogY, DPI: o.DPI, Notes: o.Notes}
	if po.Title == "" { // the drives measured, not a file name
		names := make([]string, len(traces))
		for i, tr := range traces {
			names[i] = tr.Name
		}
		po.Title, _ = PowerTitle(names, pd.Capture)
	}
	if o.Width > 0 || o.Height > 0 {
		w, h := o.Width, o.Height
		if w <= 0 {
			w = 10
		}
		if h <= 0 {
			h = 1 + 2.3*float64(len(traces))
		}
		po.Size = chart.Size{W: w, H: h}
	}
	f, err := chart.PowerOverTime(traces, po)
	if err != nil {
		return notes, nil, err
	}
	var b bytes.Buffer
	if err := f.Write(&b, strings.TrimPrefix(strings.ToLower(ext), ".")); err != nil {
		return notes, nil, err
	}
	if o.Stop != nil {
		if err := o.Stop(); err != nil {
			return nil, nil, err
		}
	}
	return notes, b.Bytes(), nil
}

// capturePorts lists the capture's drive ports in channel order.
func capturePorts(path string, open analysis.Opener) ([]int, error) {
	if open == nil {
		open = func() (analysis.Source, error) { return capture.Open(path) }
	}
	src, err := open()
	if err != nil {
		return nil, err
	}
	defer src.Close()
	var ports []int
	for _, c := range src.Header().Channels {
		if !slices.Contains(ports, c.Port) {
			ports = append(ports, c.Port)
		}
	}
	return ports, nil
}

// ErrEmptyWindow: Plot's From/To hold no sample of any drive (plot --from
// 100s on a 6 s capture drew one stray point at 5 s and exited 0).
var ErrEmptyWindow = errors.New("no samples to plot")

// tracesEnd returns where the traces' power points end: the last point's
// time plus one point's step (a summary bucket or a sample), false when
// there is no point at all.
func tracesEnd(traces []series.Trace) (end float64, ok bool) {
	end = math.Inf(-1)
	for _, tr := range traces {
		t := tr.Power.T
		if n := len(t); n > 0 {
			e := t[n-1]
			if n > 1 {
				e += t[n-1] - t[n-2]
			}
			end, ok = max(end, e), true
		}
	}
	return end, ok
}

func windowEnd(from, to units.Seconds) string {
	if to <= from {
		return "the end"
	}
	return fmt.Sprintf("%g s", to)
}
