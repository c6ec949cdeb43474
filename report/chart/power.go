package chart

import (
	"fmt"
	"image/color"
	"math"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/font"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"

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
	// Notes are the user's annotations, drawn on every power panel.
	Notes []UserNote
	Size  Size    // inches; default 10 wide, 2.2 in per stacked drive
	DPI   float64 // PNG resolution; default 96
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
	ax, err := newPowerAxes(traces, o)
	if err != nil {
		return nil, err
	}
	pc := &powerChart{o: o, ax: ax, eps: map[*plot.Plot][]*envelopePlot{}}
	anyIO := false
	for _, tr := range traces {
		anyIO = anyIO || len(tr.IO) > 0
	}
	f := &frame{title: o.Title, subtitle: o.Subtitle, legend: powerLegend(traces, o, anyIO), gap: vg.Points(4)}
	var size Size
	if o.Layout == Overlay {
		f.panels, size = pc.overlay(traces, anyIO)
	} else {
		f.panels, size = pc.stacked(traces, anyIO)
	}
	if o.Size.W <= 0 {
		o.Size = size
	}
	pc.fixAxes(f.panels)
	last := f.panels[len(f.panels)-1].p
	last.X.Tick.Marker = niceTicks{8}
	last.X.Label.Text = "Time (s)"
	return newFigure(o.Size.or(Size{10, 5}), o.DPI, f.draw), nil
}

// powerAxes are the ranges every panel of a power chart shares: time from
// x0 to x1 s, power scaled by scale into unit up to ymax, and on a log axis
// down to logFloor.
type powerAxes struct {
	x0, x1         float64
	scale          float64
	unit           string
	ymax, logFloor float64
}

// newPowerAxes checks the traces and options and picks the axes.
func newPowerAxes(traces []Trace, o PowerOpts) (powerAxes, error) {
	if !finite(o.From) || !finite(o.To) || !finite(o.YMax) {
		return powerAxes{}, fmt.Errorf("chart: PowerOpts From %g, To %g, YMax %g must be finite", o.From, o.To, o.YMax)
	}
	x0, x1, maxW, err := powerExtent(traces)
	if err != nil {
		return powerAxes{}, err
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
	ax := powerAxes{x0: x0, x1: x1}
	ax.scale, ax.unit = o.Unit.resolve(maxW)
	ax.ymax = maxW * ax.scale * 1.08
	if o.LogY {
		ax.logFloor = lowestMean(traces, o, maxW) * ax.scale / 3
		ax.ymax = maxW * ax.scale * 2
	}
	if o.YMax > 0 {
		ax.ymax = o.YMax * ax.scale
	}
	if !(ax.ymax > 0) {
		ax.ymax = 1
	}
	return ax, nil
}

// powerExtent is the time span of the traces' power rows and their highest
// max or mean (W); ErrNoData when no row has a mean.
func powerExtent(traces []Trace) (x0, x1, maxW float64, err error) {
	x0, x1 = math.Inf(1), math.Inf(-1)
	rows := 0
	for i, tr := range traces {
		if err := tr.Power.Validate(); err != nil {
			return 0, 0, 0, fmt.Errorf("chart: trace %d (%q): %w", i, tr.Name, err)
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
		return 0, 0, 0, ErrNoData
	}
	return x0, x1, maxW, nil
}

// lowestMean is the lowest positive mean (W) in the time range shown, or a
// thousandth of maxW when there is none; a log power axis starts at a third
// of it.
func lowestMean(traces []Trace, o PowerOpts, maxW float64) float64 {
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
	return lo
}

// powerLegend lists the drives (overlay only), the states shaded, the I/O
// strip and the min–max band, each only when drawn.
func powerLegend(traces []Trace, o PowerOpts, anyIO bool) *hlegend {
	l := newLegend()
	var allStates [][]StateSpan
	for _, tr := range traces {
		allStates = append(allStates, tr.States)
	}
	if o.Layout == Overlay {
		for i, tr := range traces {
			l.add(name(tr.Name, i), swatch{line: draw.LineStyle{Color: seriesColor(i), Width: vg.Points(2)}})
		}
	}
	for _, s := range statesPresent(allStates...) {
		l.add(stateLabel(s), swatch{fill: stateColor(s)})
	}
	if anyIO {
		l.add("I/O busy", swatch{fill: axisColor})
	}
	// The band's legend entry only when a band is drawn, in the colours it
	// is drawn in: a part of the swatch per drive that has one.
	if bands := bandColors(traces); !o.NoBand && len(bands) > 0 {
		l.add("min–max", swatch{bands: bands})
	}
	return l
}

// powerChart builds the panels of one power chart on shared axes.
type powerChart struct {
	o   PowerOpts
	ax  powerAxes
	eps map[*plot.Plot][]*envelopePlot // per panel, to set a log floor after fixAxis
}

// overlay is every drive's line in one panel, then one I/O strip per drive
// (with the state shading) when any drive has I/O or states; and the
// chart's default size.
func (pc *powerChart) overlay(traces []Trace, anyIO bool) ([]panel, Size) {
	idx := make([]int, len(traces))
	for i := range idx {
		idx[i] = i
	}
	panels := []panel{{p: pc.powerPanel(traces, idx, false), weight: 1}}
	for i, tr := range traces {
		if anyIO || len(tr.States) > 0 {
			panels = append(panels, panel{p: pc.ioStrip(tr, i, true, name(tr.Name, i)), weight: 0.14})
		}
	}
	return panels, Size{10, 4.2 + 0.45*float64(len(traces))}
}

// stacked is one titled panel per drive, each followed by its I/O strip
// when any drive has I/O; and the chart's default size.
func (pc *powerChart) stacked(traces []Trace, anyIO bool) ([]panel, Size) {
	var panels []panel
	for i, tr := range traces {
		p := pc.powerPanel([]Trace{tr}, []int{i}, true)
		p.Title.Text = name(tr.Name, i)
		panels = append(panels, panel{p: p, weight: 1})
		if anyIO {
			panels = append(panels, panel{p: pc.ioStrip(tr, i, false, ""), weight: 0.16})
		}
	}
	return panels, Size{10, 1.0 + 2.3*float64(len(traces))}
}

// powerPanel draws trs (series colours by idx) with their annotations and,
// when shade, their state bands.
func (pc *powerChart) powerPanel(trs []Trace, idx []int, shade bool) *plot.Plot {
	o, ax := pc.o, pc.ax
	p := newPlot()
	p.Add(hgrid())
	if shade {
		for _, tr := range trs {
			p.Add(stateBands{tr.States})
		}
	}
	var top float64
	for k, tr := range trs {
		ep := &envelopePlot{e: tr.Power, scale: ax.scale, color: seriesColor(idx[k]), band: !o.NoBand, floor: ax.logFloor}
		p.Add(ep)
		pc.eps[p] = append(pc.eps[p], ep)
		_, _, _, m := ep.DataRange()
		top = math.Max(top, m)
	}
	for _, tr := range trs {
		if len(tr.Notes) > 0 {
			p.Add(vlines{tr.Notes, color.Gray{Y: 60}})
		}
	}
	if len(o.Notes) > 0 {
		p.Add(userNotes{o.Notes})
	}
	p.X.Min, p.X.Max = ax.x0, ax.x1
	pc.powerAxis(p, top)
	p.X.Tick.Marker = noLabels{niceTicks{8}}
	return p
}

// powerAxis sets p's power axis: the shared range, or with SeparateY the
// panel's own top.
func (pc *powerChart) powerAxis(p *plot.Plot, top float64) {
	o, ax := pc.o, pc.ax
	own := o.SeparateY && o.YMax <= 0 && top > 0
	p.Y.Min, p.Y.Max = 0, ax.ymax
	if own {
		p.Y.Max = top * 1.08
	}
	p.Y.Label.Text = "Power (" + ax.unit + ")"
	p.Y.Tick.Marker = niceTicks{4}
	if o.LogY {
		p.Y.Scale = plot.LogScale{}
		setLogYLabel(p, p.Y.Label.Text)
		p.Y.Tick.Marker = logTicks{}
		p.Y.Min = ax.logFloor
		if own {
			p.Y.Max = top * 2
		}
	}
}

// ioStrip is trace i's I/O busy strip, shaded with its states when shade;
// a label (overlay) names the strip in the drive's colour.
func (pc *powerChart) ioStrip(tr Trace, i int, shade bool, label string) *plot.Plot {
	p := newPlot()
	if shade {
		p.Add(stateBands{tr.States})
	}
	p.Add(newIOBars(tr.IO, color.Gray{Y: 70}))
	p.X.Min, p.X.Max = pc.ax.x0, pc.ax.x1
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

// fixAxes rounds every panel's axes to ticks and moves the envelopes' log
// floor to where fixAxis put the axis bottom.
func (pc *powerChart) fixAxes(panels []panel) {
	for _, pn := range panels {
		fixAxis(&pn.p.X, false)
		_, isLog := pn.p.Y.Scale.(plot.LogScale)
		fixAxis(&pn.p.Y, isLog)
		if isLog {
			for _, ep := range pc.eps[pn.p] {
				ep.floor = pn.p.Y.Min // fixAxis may have moved the floor
			}
		}
	}
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
