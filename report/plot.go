package report

import (
	"errors"
	"fmt"
	"math"

	"github.com/idlewatt/idlewatt/analysis"
	"github.com/idlewatt/idlewatt/analysis/series"
	"github.com/idlewatt/idlewatt/internal/outfile"
	"github.com/idlewatt/idlewatt/report/chart"
)

// PlotOptions control Plot.
type PlotOptions struct {
	From, To float64 // seconds from meter index 0; To ≤ From = the whole capture
	Buckets  int     // envelope points (default 2000)
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
}

// Plot draws power over time for every drive of the capture at path into
// out (.png or .svg), from what analysis.PlotTraces reads: zoomed out only
// the summaries stored in the capture, zoomed in every sample.
//
// It returns the notes about the data a report of the capture gives —
// damage, rejected indices, trailing bytes, an early end, the clock fit's
// distrust — word for word, for the caller to print.
func Plot(path, out string, o PlotOptions) ([]string, error) {
	pd, err := analysis.PlotTraces(path, analysis.PlotOptions{From: o.From, To: o.To, Buckets: o.Buckets, Open: o.Open})
	if err != nil {
		return nil, err
	}
	traces, notes := pd.Traces, pd.Notes
	// A window asked for (--from/--to) that holds no point is refused; the
	// whole view of a capture without drive power is drawn empty, as report
	// gives its nulls.
	if end, ok := tracesEnd(traces); (o.From > 0 || o.To > o.From) && (!ok || o.From >= end) {
		if !ok {
			return notes, fmt.Errorf("%w: from %g s to %s: the capture has none there", ErrEmptyWindow, o.From, windowEnd(o.From, o.To))
		}
		return notes, fmt.Errorf("%w: from %g s: the capture's samples end at about %.3g s", ErrEmptyWindow, o.From, end)
	}
	if o.Stop != nil {
		if err := o.Stop(); err != nil {
			return nil, err
		}
	}
	po := chart.PowerOpts{Title: o.Title, Subtitle: o.Subtitle, Unit: o.Unit, From: o.From, To: o.To, LogY: o.LogY, DPI: o.DPI, Notes: o.Notes}
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
		return notes, err
	}
	o.Out.Inputs = append(o.Out.Inputs[:len(o.Out.Inputs):len(o.Out.Inputs)], path)
	return notes, f.SaveWith(out, o.Out)
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

func windowEnd(from, to float64) string {
	if to <= from {
		return "the end"
	}
	return fmt.Sprintf("%g s", to)
}
