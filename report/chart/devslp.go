package chart

import (
	"fmt"
	"image/color"
	"math"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"

	"github.com/idlewatt/idlewatt/analysis/series"
	"github.com/idlewatt/idlewatt/units"
)

// DevSlpCycle is series.DevSlpCycle: one DevSlp entry/exit cycle to draw.
type DevSlpCycle = series.DevSlpCycle

// DevSlpOpts configures DevSlpCycleChart.
type DevSlpOpts struct {
	Title, Subtitle string
	Unit            PowerUnit // UnitMW suits DevSlp; the zero value is W
	// LogY uses a log power axis so the mW floor and the W of active power
	// are both readable.
	LogY bool
	Size Size    // inches; default 8 × 4.5
	DPI  float64 // PNG resolution; default 96
}

// DevSlpCycleChart draws one cycle's power against time with the pin edges,
// floor reached and first I/O completion marked, the entry and exit latency
// written on them, and the floor and limit as horizontal lines.
func DevSlpCycleChart(cy DevSlpCycle, o DevSlpOpts) (*Figure, error) {
	lo, hi, err := devSlpRange(cy)
	if err != nil {
		return nil, err
	}
	scale, unit := o.Unit.resolve(hi)
	p := newPlot()
	p.Add(hgrid())
	if finite(cy.Assert) && finite(cy.Deassert) && cy.Deassert > cy.Assert {
		p.Add(stateBands{[]StateSpan{{Start: cy.Assert, End: cy.Deassert, State: "devslp"}}})
	}
	ep := &envelopePlot{e: cy.Power, scale: scale, color: seriesColor(0), band: true}
	if o.LogY {
		if math.IsInf(lo, 1) {
			lo = hi / 1000
		}
		ep.floor = lo * scale / 3
	}
	p.Add(ep)
	lv := newDevSlpLevels(cy)
	lv.plot(p, scale)
	// The lines here; their labels in a strip above the trace, stacked in
	// rows, so no label sits on the trace or on another.
	notes := devSlpNotes(cy)
	lines := make([]Annotation, len(notes))
	for i, n := range notes {
		lines[i] = Annotation{T: n.T}
	}
	p.Add(vlines{lines, color.Gray{Y: 60}})
	devSlpAxes(p, ep, o.LogY, hi*scale, unit)

	leg := newLegend()
	leg.add("power (mean)", swatch{line: draw.LineStyle{Color: seriesColor(0), Width: vg.Points(1.5)}})
	leg.add(devSlpBandLabel(cy, ep, o.LogY, scale), swatch{fill: tint(seriesColor(0), 70)})
	leg.add("DEVSLP pin asserted", swatch{fill: stateColor("devslp")})
	lv.legend(leg)
	sub := o.Subtitle
	if sub == "" && cy.Name != "" {
		sub = cy.Name
	}
	title := o.Title
	if title == "" {
		title = "DevSlp Entry and Exit"
	}
	f := &frame{title: title, subtitle: sub, legend: leg, gap: vg.Points(2)}
	if len(notes) > 0 {
		f.panels = append(f.panels, labelPanel(newLabelStrip(notes, color.Gray{Y: 60}), p.X.Min, p.X.Max))
	}
	f.panels = append(f.panels, panel{p: p, weight: 1})
	return newFigure(o.Size.or(Size{8, 4.5}), o.DPI, f.draw), nil
}

// devSlpRange checks cy and returns the power range the axis must hold (W):
// lo the lowest positive mean, floor or limit, hi the highest value. A log
// axis is scaled to the trace, not to the noise of single samples, whose
// band is clipped at the axis (and the legend says so).
func devSlpRange(cy DevSlpCycle) (lo, hi float64, err error) {
	if err := cy.Power.Validate(); err != nil {
		return 0, 0, fmt.Errorf("chart: DevSlp cycle %q: %w", cy.Name, err)
	}
	lo, hi = math.Inf(1), 0.0
	rows := 0
	for i := range cy.Power.T {
		if !finite(cy.Power.Mean[i]) {
			continue
		}
		rows++
		for _, v := range [...]float64{cy.Power.Min[i], cy.Power.Max[i], cy.Power.Mean[i]} {
			if finite(v) {
				hi = math.Max(hi, v)
			}
		}
		if v := cy.Power.Mean[i]; v > 0 {
			lo = math.Min(lo, v)
		}
	}
	if rows == 0 {
		return 0, 0, ErrNoData
	}
	floor, limit := float64(cy.Floor), float64(cy.Limit)
	flo, fhi := float64(cy.FloorLo), float64(cy.FloorHi)
	// The floor is the mean of noisy readings and may lie a little below
	// 0 W (a floor of a few µW under mA of noise, over a short hold): it is
	// then in the legend, not on the log axis. The limit is a setting.
	for i, v := range [...]float64{floor, limit, flo, fhi} {
		if i == 0 && math.IsNaN(v) {
			continue // no floor (the cycle reached none)
		}
		if !finite(v) || (i == 1 && v < 0) {
			return 0, 0, fmt.Errorf("chart: DevSlp cycle %q: floor %g W (95 %% interval %g–%g W) must be finite and limit %g W finite and ≥ 0", cy.Name, floor, flo, fhi, limit)
		}
		if v > 0 {
			hi, lo = math.Max(hi, v), math.Min(lo, v)
		}
	}
	// At most five decades: the means of a few-µW floor under mA of noise
	// reach down to nothing, and an axis to 10⁻⁷ mW shows only the noise.
	return math.Max(lo, hi*1e-5), hi, nil
}

// devSlpLevels are a cycle's judged levels (W) and how they are drawn: the
// floor with its 95 % interval, and the limit. The judged numbers go over
// the trace, their values in the legend: text on the lines sat on the trace.
type devSlpLevels struct {
	floor, limit, flo, fhi float64
	limitStyle, floorStyle draw.LineStyle
	green                  color.RGBA
}

func newDevSlpLevels(cy DevSlpCycle) devSlpLevels {
	red := color.RGBA{0xc0, 0x20, 0x20, 0xff}
	green := color.RGBA{0x1a, 0x7f, 0x37, 0xff}
	return devSlpLevels{
		floor: float64(cy.Floor), limit: float64(cy.Limit), flo: float64(cy.FloorLo), fhi: float64(cy.FloorHi),
		limitStyle: draw.LineStyle{Color: red, Width: vg.Points(1.2), Dashes: []vg.Length{vg.Points(4), vg.Points(2)}},
		floorStyle: draw.LineStyle{Color: green, Width: vg.Points(1.2)},
		green:      green,
	}
}

func (l devSlpLevels) interval() bool { return l.fhi > l.flo && l.fhi > 0 }

// plot adds the floor's interval band and the limit and floor lines.
func (l devSlpLevels) plot(p *plot.Plot, scale float64) {
	if l.interval() {
		p.Add(hband{lo: l.flo * scale, hi: l.fhi * scale, color: tint(l.green, 110)})
	}
	if l.limit > 0 {
		p.Add(hline{y: l.limit * scale, style: l.limitStyle})
	}
	if l.floor > 0 {
		p.Add(hline{y: l.floor * scale, style: l.floorStyle})
	}
}

// legend adds the floor (and its interval) and the limit with their values.
func (l devSlpLevels) legend(leg *hlegend) {
	w := func(v float64) string { return units.Watts(v).String() }
	switch {
	case l.floor > 0 && l.interval():
		leg.add("floor "+w(l.floor)+" (95 %: "+w(l.flo)+"–"+w(l.fhi)+")", swatch{line: l.floorStyle, fill: tint(l.green, 110), lineOnFill: true})
	case l.floor > 0:
		leg.add("floor "+w(l.floor), swatch{line: l.floorStyle})
	case l.interval():
		leg.add("floor "+w(l.floor)+", at or below 0 W, off the log axis (95 %: "+w(l.flo)+"–"+w(l.fhi)+")", swatch{fill: tint(l.green, 110)})
	case finite(l.floor):
		leg.add("floor "+w(l.floor)+", at or below 0 W, off the log axis", swatch{line: l.floorStyle})
	}
	if l.limit > 0 {
		leg.add("limit "+w(l.limit), swatch{line: l.limitStyle})
	}
}

// devSlpNotes are the cycle's marked instants (pin edges, floor reached,
// first I/O done) with the entry and exit latency where both ends are known.
func devSlpNotes(cy DevSlpCycle) []Annotation {
	var notes []Annotation
	add := func(t float64, s string) {
		if finite(t) {
			notes = append(notes, Annotation{T: t, Text: s})
		}
	}
	add(cy.Assert, "DEVSLP asserted")
	if finite(cy.Assert) && finite(cy.FloorReached) {
		add(cy.FloorReached, fmt.Sprintf("floor reached (entry %.3g ms)", cy.FloorReached-cy.Assert))
	} else {
		add(cy.FloorReached, "floor reached")
	}
	add(cy.Deassert, "DEVSLP deasserted")
	if finite(cy.Deassert) && finite(cy.FirstIO) {
		add(cy.FirstIO, fmt.Sprintf("first I/O done (exit %.3g ms)", cy.FirstIO-cy.Deassert))
	} else {
		add(cy.FirstIO, "first I/O done")
	}
	return notes
}

// devSlpAxes labels and ranges the axes; top is the highest value in the
// plot's unit. On a log axis the envelope sits on the axis floor.
func devSlpAxes(p *plot.Plot, ep *envelopePlot, logY bool, top float64, unit string) {
	p.X.Label.Text = "Time (ms)"
	p.Y.Label.Text = "Power (" + unit + ")"
	if logY {
		p.Y.Scale = plot.LogScale{}
		setLogYLabel(p, p.Y.Label.Text)
		p.Y.Tick.Marker = logTicks{}
		p.Y.Min, p.Y.Max = ep.floor, top*2
	} else {
		p.Y.Min, p.Y.Max = 0, top*1.08
	}
	fixAxis(&p.X, false)
	fixAxis(&p.Y, logY)
	if logY {
		ep.floor = p.Y.Min // a log axis cannot show ≤ 0: sit on its floor
	}
}

// devSlpBandLabel names the min–max band, saying so where a log axis clips it.
func devSlpBandLabel(cy DevSlpCycle, ep *envelopePlot, logY bool, scale float64) string {
	if logY {
		for _, v := range cy.Power.Min {
			if finite(v) && v*scale < ep.floor {
				return "min–max (clipped at the axis)"
			}
		}
	}
	return "min–max"
}

// hband shades [lo, hi] on the y axis across the plot, e.g. an estimate's
// 95 % interval; at least a hairline tall, so a tight interval still shows.
type hband struct {
	lo, hi float64
	color  color.Color
}

func (h hband) Plot(c draw.Canvas, p *plot.Plot) {
	_, trY := p.Transforms(&c)
	lo := h.lo
	if _, log := p.Y.Scale.(plot.LogScale); log && !(lo > p.Y.Min) {
		lo = p.Y.Min
	}
	ya := max(c.Min.Y, clampLen(trY(lo), c.Min.Y, c.Max.Y))
	yb := min(c.Max.Y, clampLen(trY(h.hi), c.Min.Y, c.Max.Y))
	if yb < ya {
		return
	}
	if yb-ya < vg.Points(1) {
		m := (ya + yb) / 2
		ya, yb = m-vg.Points(0.5), m+vg.Points(0.5)
	}
	c.FillPolygon(h.color, []vg.Point{{X: c.Min.X, Y: ya}, {X: c.Max.X, Y: ya}, {X: c.Max.X, Y: yb}, {X: c.Min.X, Y: yb}})
}
