package chart

import (
	"fmt"
	"gonum.org/v1/plot"
	"gonum.org/v1/plot/font"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
	"image/color"
	"math"

	"github.com/idlewatt/idlewatt/analysis/series"
)

// The series PowerOverTime draws live in analysis/series (no plotting
// dependencies), so analysis can build them without importing this
// package; these names keep chart.Trace and its parts working.
type (
	// Interval is series.Interval: a span of time in seconds.
	Interval = series.Interval
	// StateSpan is series.StateSpan: the drive in a state for a span.
	StateSpan = series.StateSpan
	// Annotation is series.Annotation: a labelled event.
	Annotation = series.Annotation
	// Trace is series.Trace: one drive's data for PowerOverTime.
	Trace = series.Trace
)

// Layout chooses how PowerOverTime arranges several drives.
type Layout int

const (
	// Stacked draws one panel per drive, sharing the time axis and, unless
	// PowerOpts.SeparateY, the power scale.
	Stacked Layout = iota
	// Overlay draws every drive's line in one panel, each with its own I/O
	// strip below; state shading moves into the strips.
	Overlay
)

// PowerUnit is the unit of the power axis.
type PowerUnit int

const (
	UnitW    PowerUnit = iota // watts (the default: what reviews print)
	UnitMW                    // milliwatts
	UnitAuto                  // mW when every value is below 1 W, else W
)

// PowerOpts configures PowerOverTime. The zero value is a stacked chart in
// watts over the data's whole time range.
type PowerOpts struct {
	Title, Subtitle string
	Layout          Layout
	Unit            PowerUnit
	// From and To (s) limit the time axis when To > From.
	From, To float64
	// YMax (W) fixes the top of the power axis when > 0.
	YMax float64
	// SeparateY gives each stacked panel its own power scale.
	SeparateY bool
	// NoBand draws only the mean line, without the min–max band.
	NoBand bool
	// LogY uses a logarithmic power axis, from a third of the lowest
	// positive mean up: mW idle states and W bursts both readable. Values
	// at or below its floor (noise around 0) are drawn on it.
	LogY bool
	Size Size    // inches; default 10 wide, 2.2 in per stacked drive
	DPI  float64 // PNG resolution; default 96
}

func (u PowerUnit) resolve(maxW float64) (scale float64, label string) {
	if u == UnitMW || (u == UnitAuto && maxW < 1) {
		return 1e3, "mW"
	}
	return 1, "W"
}

// PowerOverTime draws power against time for each trace, with min–max
// envelopes, I/O strips, state shading, gaps as breaks and annotations.
// It returns ErrNoData if no trace has a power row, and an error naming the
// trace if an envelope is malformed.
func PowerOverTime(traces []Trace, o PowerOpts) (*Figure, error) {
	if !finite(o.From) || !finite(o.To) || !finite(o.YMax) {
		return nil, fmt.Errorf("chart: PowerOpts From %g, To %g, YMax %g must be finite", o.From, o.To, o.YMax)
	}
	x0, x1 := math.Inf(1), math.Inf(-1)
	maxW := 0.0
	rows := 0
	for i, tr := range traces {
		if err := tr.Power.Validate(); err != nil {
			return nil, fmt.Errorf("chart: trace %d (%q): %w", i, tr.Name, err)
		}
		for k, t := range tr.Power.T {
			if finite(tr.Power.Mean[k]) {
				rows++
				x0, x1 = math.Min(x0, t), math.Max(x1, t)
				for _, v := range [...]float64{tr.Power.Max[k], tr.Power.Mean[k]} {
					if finite(v) {
						maxW = math.Max(maxW, v)
					}
				}
			}
		}
	}
	if rows == 0 {
		return nil, ErrNoData
	}
	if o.To > o.From {
		x0, x1 = o.From, o.To
	} else if x0 > 0 && x0 < 0.02*(x1-x0) {
		// A run that starts a hair after 0 gets its 0 tick.
		x0 = 0
	}
	if x1 <= x0 { // a single instant: give it some width
		x0, x1 = x0-0.5, x1+0.5
	}
	scale, unit := o.Unit.resolve(maxW)
	ymax := maxW * scale * 1.08
	logFloor := 0.0
	if o.LogY {
		lo := math.Inf(1)
		for _, tr := range traces {
			for k, t := range tr.Power.T {
				if m := tr.Power.Mean[k]; finite(m) && m > 0 && (o.To <= o.From || (t >= o.From && t <= o.To)) {
					lo = math.Min(lo, m)
				}
			}
		}
		if math.IsInf(lo, 1) {
			lo = maxW / 1000
		}
		logFloor = lo * scale / 3
		ymax = maxW * scale * 2
	}
	if o.YMax > 0 {
		ymax = o.YMax * scale
	}
	if !(ymax > 0) {
		ymax = 1
	}

	f := &frame{title: o.Title, subtitle: o.Subtitle, legend: newLegend(), gap: vg.Points(4)}
	anyIO := false
	var allStates [][]StateSpan
	for _, tr := range traces {
		anyIO = anyIO || len(tr.IO) > 0
		allStates = append(allStates, tr.States)
	}
	if o.Layout == Overlay {
		for i, tr := range traces {
			f.legend.add(name(tr.Name, i), swatch{line: draw.LineStyle{Color: seriesColor(i), Width: vg.Points(2)}})
		}
	}
	for _, s := range statesPresent(allStates...) {
		f.legend.add(stateLabel(s), swatch{fill: stateColor(s)})
	}
	if anyIO {
		f.legend.add("I/O busy", swatch{fill: axisColor})
	}
	// The band's legend entry only when a band is drawn, in the colours it
	// is drawn in: a part of the swatch per drive that has one.
	if bands := bandColors(traces); !o.NoBand && len(bands) > 0 {
		f.legend.add("min–max", swatch{bands: bands})
	}

	yLabel := "Power (" + unit + ")"
	eps := map[*plot.Plot][]*envelopePlot{} // per panel, to set a log floor after fixAxis
	timeAxis := func(p *plot.Plot) {
		p.X.Min, p.X.Max = x0, x1
	}
	powerPanel := func(trs []Trace, idx []int, shade bool) *plot.Plot {
		p := newPlot()
		p.Add(hgrid())
		if shade {
			for _, tr := range trs {
				p.Add(stateBands{tr.States})
			}
		}
		var top float64
		for k, tr := range trs {
			ep := &envelopePlot{e: tr.Power, scale: scale, color: seriesColor(idx[k]), band: !o.NoBand, floor: logFloor}
			p.Add(ep)
			eps[p] = append(eps[p], ep)
			_, _, _, m := ep.DataRange()
			top = math.Max(top, m)
		}
		for _, tr := range trs {
			if len(tr.Notes) > 0 {
				p.Add(vlines{tr.Notes, color.Gray{Y: 60}})
			}
		}
		timeAxis(p)
		p.Y.Min, p.Y.Max = 0, ymax
		if o.SeparateY && o.YMax <= 0 && top > 0 {
			p.Y.Max = top * 1.08
		}
		p.Y.Label.Text = yLabel
		p.Y.Tick.Marker = niceTicks{4}
		if o.LogY {
			p.Y.Scale = plot.LogScale{}
			setLogYLabel(p, p.Y.Label.Text)
			p.Y.Tick.Marker = logTicks{}
			p.Y.Min = logFloor
			if o.SeparateY && o.YMax <= 0 && top > 0 {
				p.Y.Max = top * 2
			}
		}
		p.X.Tick.Marker = noLabels{niceTicks{8}}
		return p
	}
	strip := func(tr Trace, i int, shade bool, label string) *plot.Plot {
		p := newPlot()
		if shade {
			p.Add(stateBands{tr.States})
		}
		p.Add(newIOBars(tr.IO, color.Gray{Y: 70}))
		timeAxis(p)
		p.Y.Min, p.Y.Max = 0, 1
		p.Y.Tick.Marker = plot.ConstantTicks{}
		p.Y.Label.Text = "I/O"
		p.Y.Label.TextStyle.Font = font.From(sans, tickSize)
		if label != "" { // overlay: name the strip with a level tick label
			p.Y.Label.Text = ""
			p.Y.Tick.Marker = plot.ConstantTicks{{Value: 0.5, Label: label}}
			p.Y.Tick.Label.Font = font.From(sansBold, noteSize)
			p.Y.Tick.Label.Color = seriesColor(i)
			p.Y.Tick.Length = 0
		}
		p.X.Tick.Marker = noLabels{niceTicks{8}}
		return p
	}

	switch o.Layout {
	case Overlay:
		idx := make([]int, len(traces))
		for i := range idx {
			idx[i] = i
		}
		f.panels = append(f.panels, panel{p: powerPanel(traces, idx, false), weight: 1})
		for i, tr := range traces {
			if anyIO || len(tr.States) > 0 {
				f.panels = append(f.panels, panel{p: strip(tr, i, true, name(tr.Name, i)), weight: 0.14})
			}
		}
		if o.Size.W <= 0 {
			o.Size = Size{10, 4.2 + 0.45*float64(len(traces))}
		}
	default:
		for i, tr := range traces {
			p := powerPanel([]Trace{tr}, []int{i}, true)
			p.Title.Text = name(tr.Name, i)
			f.panels = append(f.panels, panel{p: p, weight: 1})
			if anyIO {
				f.panels = append(f.panels, panel{p: strip(tr, i, false, ""), weight: 0.16})
			}
		}
		if o.Size.W <= 0 {
			o.Size = Size{10, 1.0 + 2.3*float64(len(traces))}
		}
	}
	for _, pn := range f.panels {
		fixAxis(&pn.p.X, false)
		_, isLog := pn.p.Y.Scale.(plot.LogScale)
		fixAxis(&pn.p.Y, isLog)
		if isLog {
			for _, ep := range eps[pn.p] {
				ep.floor = pn.p.Y.Min // fixAxis may have moved the floor
			}
		}
	}
	last := f.panels[len(f.panels)-1].p
	last.X.Tick.Marker = niceTicks{8}
	last.X.Label.Text = "Time (s)"
	return newFigure(o.Size.or(Size{10, 5}), o.DPI, f.draw), nil
}

func name(s string, i int) string {
	if s == "" {
		return fmt.Sprintf("drive %d", i+1)
	}
	return s
}

// anyBand reports whether some row of some trace has a max above its min,
// i.e. a min–max band would be visible.
// bandColors returns the band tint of each trace whose envelope has a band.
func bandColors(traces []Trace) []color.Color {
	var cs []color.Color
	for i, tr := range traces {
		if anyBand([]Trace{tr}) {
			cs = append(cs, tint(seriesColor(i), 70))
		}
	}
	return cs
}

func anyBand(traces []Trace) bool {
	for _, tr := range traces {
		for k := range tr.Power.T {
			if lo, hi := tr.Power.Min[k], tr.Power.Max[k]; finite(lo) && finite(hi) && hi > lo {
				return true
			}
		}
	}
	return false
}
