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
	if err := cy.Power.Validate(); err != nil {
		return nil, fmt.Errorf("chart: DevSlp cycle %q: %w", cy.Name, err)
	}
	// lo is the lowest positive mean: a log axis is scaled to the trace,
	// not to the noise of single samples, whose band is clipped at the
	// axis (and the legend says so).
	lo, hi := math.Inf(1), 0.0
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
		return nil, ErrNoData
	}
	floor, limit := float64(cy.Floor), float64(cy.Limit)
	flo, fhi := float64(cy.FloorLo), float64(cy.FloorHi)
	for _, v := range [...]float64{floor, limit, flo, fhi} {
		if !finite(v) || v < 0 {
			return nil, fmt.Errorf("chart: DevSlp cycle %q: floor %g W (95 %% interval %g–%g W) and limit %g W must be finite and ≥ 0", cy.Name, floor, flo, fhi, limit)
		}
		if v > 0 {
			hi, lo = math.Max(hi, v), math.Min(lo, v)
		}
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
	red := color.RGBA{0xc0, 0x20, 0x20, 0xff}
	green := color.RGBA{0x1a, 0x7f, 0x37, 0xff}
	// The judged numbers go over the trace, their values in the legend:
	// text on the lines sat on the trace.
	interval := fhi > flo
	if interval {
		p.Add(hband{lo: flo * scale, hi: fhi * scale, color: tint(green, 110)})
	}
	limitStyle := draw.LineStyle{Color: red, Width: vg.Points(1.2), Dashes: []vg.Length{vg.Points(4), vg.Points(2)}}
	floorStyle := draw.LineStyle{Color: green, Width: vg.Points(1.2)}
	if limit > 0 {
		p.Add(hline{y: limit * scale, style: limitStyle})
	}
	if floor > 0 {
		p.Add(hline{y: floor * scale, style: floorStyle})
	}
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
	// The lines here; their labels in a strip above the trace, stacked in
	// rows, so no label sits on the trace or on another.
	lines := make([]Annotation, len(notes))
	for i, n := range notes {
		lines[i] = Annotation{T: n.T}
	}
	p.Add(vlines{lines, color.Gray{Y: 60}})

	p.X.Label.Text = "Time (ms)"
	p.Y.Label.Text = "Power (" + unit + ")"
	if o.LogY {
		p.Y.Scale = plot.LogScale{}
		setLogYLabel(p, p.Y.Label.Text)
		p.Y.Tick.Marker = logTicks{}
		p.Y.Min, p.Y.Max = ep.floor, hi*scale*2
	} else {
		p.Y.Min, p.Y.Max = 0, hi*scale*1.08
	}
	fixAxis(&p.X, false)
	fixAxis(&p.Y, o.LogY)
	if o.LogY {
		ep.floor = p.Y.Min // a log axis cannot show ≤ 0: sit on its floor
	}
	leg := newLegend()
	leg.add("power (mean)", swatch{line: draw.LineStyle{Color: seriesColor(0), Width: vg.Points(1.5)}})
	band := "min–max"
	if o.LogY {
		for _, v := range cy.Power.Min {
			if finite(v) && v*scale < ep.floor {
				band = "min–max (clipped at the axis)"
				break
			}
		}
	}
	leg.add(band, swatch{fill: tint(seriesColor(0), 70)})
	leg.add("DEVSLP pin asserted", swatch{fill: stateColor("devslp")})
	switch {
	case floor > 0 && interval:
		leg.add("floor "+units.Watts(floor).String()+" (95 %: "+units.Watts(flo).String()+"–"+units.Watts(fhi).String()+")", swatch{line: floorStyle, fill: tint(green, 110), lineOnFill: true})
	case floor > 0:
		leg.add("floor "+units.Watts(floor).String(), swatch{line: floorStyle})
	case interval:
		leg.add("floor 95 %: "+units.Watts(flo).String()+"–"+units.Watts(fhi).String(), swatch{fill: tint(green, 110)})
	}
	if limit > 0 {
		leg.add("limit "+units.Watts(limit).String(), swatch{line: limitStyle})
	}
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
