package chart

import (
	"fmt"
	"image/color"
	"math"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"

	"github.com/idlewatt/idlewatt/units"
)

// DevSlpCycle is one DevSlp entry/exit cycle to draw. Times are in
// milliseconds on the cycle's own axis (e.g. 0 = DEVSLP asserted); a NaN
// time means the event did not happen or was not seen, and its line is left
// out. Floor and Limit of 0 are not drawn.
//
// Every number here comes from the analysis that judged the cycle; the
// chart draws them and computes none (one number, one place). New fields
// may be added; their zero value must mean "not given, not drawn".
type DevSlpCycle struct {
	Name  string   // drive name, for the subtitle
	Power Envelope // T in ms, values in W
	// Assert and Deassert are when the host drove the DEVSLP pin.
	Assert, Deassert float64
	// FloorReached is when power first settled at the floor after Assert;
	// FirstIO is when the first I/O after Deassert completed.
	FloorReached, FirstIO float64
	Floor                 units.Watts // measured DevSlp floor (the estimate judged)
	Limit                 units.Watts // the pass limit, e.g. 5 mW
	// FloorLo and FloorHi bound the floor estimate's 95 % interval, drawn
	// as a band around the floor line; FloorHi ≤ FloorLo means not given.
	FloorLo, FloorHi units.Watts
	// FloorFrom and FloorTo (ms) are the window the floor was estimated
	// over, where its line and band are drawn; NaN or FloorTo ≤ FloorFrom
	// draws them across the whole axis.
	FloorFrom, FloorTo float64
	// Verdict is the analysis' verdict for the cycle, printed under the
	// title, e.g. "PASS: floor 4.61 ± 0.05 mW below the 5 mW limit"; Pass
	// colours it (green, else red). Empty: no verdict line.
	Verdict string
	Pass    bool
}

// DevSlpOpts configures DevSlpCycleChart.
type DevSlpOpts struct {
	Title, Subtitle string
	Unit            PowerUnit // UnitMW suits DevSlp; the zero value is W
	// LogY uses a log power axis so the mW floor and the W of active power
	// are both readable. Values at or below its floor (a negative noise
	// sample, say) are drawn on the floor, for display only, and a note
	// under the chart says how many.
	LogY bool
	Size Size    // inches; default 8 × 4.5
	DPI  float64 // PNG resolution; default 96
}

var (
	red   = color.RGBA{0xc0, 0x20, 0x20, 0xff}
	green = color.RGBA{0x1a, 0x7f, 0x37, 0xff}
)

// DevSlpCycleChart draws one cycle's power against time with the pin
// interval hatched, the pin edges, floor reached and first I/O completion
// marked (their labels, with the entry and exit latency, in a strip above
// the trace), the floor estimate with its 95 % interval and the limit as
// horizontal lines, and the analysis' verdict under the title.
func DevSlpCycleChart(cy DevSlpCycle, o DevSlpOpts) (*Figure, error) {
	if err := cy.Power.validate(); err != nil {
		return nil, fmt.Errorf("chart: DevSlp cycle %q: %w", cy.Name, err)
	}
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
		// The log floor follows the means: a noisy bucket's minimum can be
		// anywhere down to below zero, and would push the axis down by
		// decades of nothing.
		if m := cy.Power.Mean[i]; m > 0 {
			lo = math.Min(lo, m)
		}
	}
	if rows == 0 {
		return nil, ErrNoData
	}
	floor, limit := float64(cy.Floor), float64(cy.Limit)
	flo, fhi := float64(cy.FloorLo), float64(cy.FloorHi)
	for _, v := range [...]float64{floor, limit, flo, fhi} {
		if !finite(v) || v < 0 {
			return nil, fmt.Errorf("chart: DevSlp cycle %q: floor %g W (interval %g–%g W) and limit %g W must be finite and ≥ 0", cy.Name, floor, flo, fhi, limit)
		}
	}
	interval := fhi > flo
	for _, v := range [...]float64{floor, limit, flo, fhi} {
		if v > 0 {
			hi, lo = math.Max(hi, v), math.Min(lo, v)
		}
	}
	scale, unit := o.Unit.resolve(hi)
	p := newPlot()
	p.Add(hgrid())
	pin := finite(cy.Assert) && finite(cy.Deassert) && cy.Deassert > cy.Assert
	if pin {
		p.Add(stateBands{[]StateSpan{{cy.Assert, cy.Deassert, "devslp"}}})
	}
	ep := &envelopePlot{e: cy.Power, scale: scale, color: seriesColor(0), band: true}
	if o.LogY {
		if math.IsInf(lo, 1) {
			lo = hi / 1000
		}
		ep.floor = math.Pow(10, math.Floor(math.Log10(lo*scale/1.5)))
	}
	// The estimate goes over the trace: it is what was judged, and the
	// noisy trace would hide it.
	p.Add(ep)
	fx0, fx1 := cy.FloorFrom, cy.FloorTo
	if !finite(fx0) || !finite(fx1) || fx1 <= fx0 {
		fx0, fx1 = math.Inf(-1), math.Inf(1)
	}
	if interval {
		p.Add(hband{lo: flo * scale, hi: fhi * scale, x0: fx0, x1: fx1, color: tint(green, 110)})
	}
	limitStyle := draw.LineStyle{Color: red, Width: vg.Points(1.2), Dashes: []vg.Length{vg.Points(4), vg.Points(2)}}
	floorStyle := draw.LineStyle{Color: green, Width: vg.Points(1.4)}
	if floor > 0 {
		p.Add(hline{y: floor * scale, x0: fx0, x1: fx1, style: floorStyle})
	}
	if limit > 0 {
		p.Add(hline{y: limit * scale, x0: math.Inf(-1), x1: math.Inf(1), style: limitStyle})
	}
	var notes []Annotation
	add := func(t float64, s string) {
		if finite(t) {
			notes = append(notes, Annotation{t, s})
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
	lines := make([]Annotation, len(notes))
	for i, n := range notes {
		lines[i] = Annotation{T: n.T}
	}
	p.Add(vlines{lines, color.Gray{Y: 60}})

	p.X.Label.Text = "Time (ms)"
	p.Y.Label.Text = "Power (" + unit + ")"
	if o.LogY {
		setLogYLabel(p, "Power ("+unit+")")
		p.Y.Scale = plot.LogScale{}
		p.Y.Tick.Marker = logTicks{}
		p.Y.Min, p.Y.Max = ep.floor, hi*scale*2
	} else {
		p.Y.Min, p.Y.Max = 0, hi*scale*1.08
	}
	fixAxis(&p.X, false)
	fixAxis(&p.Y, o.LogY)
	var footnote string
	if o.LogY {
		ep.floor = p.Y.Min // a log axis cannot show ≤ 0: sit on its floor
	}
	n := 0
	for i := range cy.Power.T {
		if v := cy.Power.Min[i]; finite(v) && (v*scale < ep.floor || (o.LogY && v*scale <= ep.floor)) {
			n++
		}
	}
	if n > 0 {
		if !o.LogY {
			footnote = fmt.Sprintf("%d of %d points reach below 0 W (sensor noise): their band is cut at 0, for display only; the analysis used every sample as measured.", n, rows)
		} else {
			footnote = fmt.Sprintf("%d of %d points reach %s or less (sensor noise; some readings negative): their band is cut at the axis floor, for display only; the analysis used every sample as measured.",
				n, rows, fmtPower(ep.floor/scale))
		}
	}
	leg := newLegend()
	leg.add("power (mean)", swatch{line: draw.LineStyle{Color: seriesColor(0), Width: vg.Points(1.5)}})
	leg.add("min–max", swatch{fill: tint(seriesColor(0), 70)})
	if pin {
		leg.add("DEVSLP pin asserted", swatch{state: "devslp"})
	}
	switch {
	case floor > 0 && interval:
		leg.add("floor "+fmtPower(floor)+" (95 %: "+fmtPower(flo)+"–"+fmtPower(fhi)+")", swatch{line: floorStyle, fill: tint(green, 110), lineOnFill: true})
	case floor > 0:
		leg.add("floor "+fmtPower(floor), swatch{line: floorStyle})
	case interval:
		leg.add("floor 95 %: "+fmtPower(flo)+"–"+fmtPower(fhi), swatch{fill: tint(green, 110)})
	}
	if limit > 0 {
		leg.add("limit "+fmtPower(limit), swatch{line: limitStyle})
	}
	sub := o.Subtitle
	if sub == "" && cy.Name != "" {
		sub = cy.Name
	}
	title := o.Title
	if title == "" {
		title = "DevSlp Entry and Exit"
	}
	f := &frame{title: title, subtitle: sub, legend: leg, footnote: footnote, gap: vg.Points(2)}
	if cy.Verdict != "" {
		f.verdict, f.verdictColor = cy.Verdict, red
		if cy.Pass {
			f.verdictColor = green
		}
	}
	x0, x1 := p.X.Min, p.X.Max
	if len(notes) > 0 {
		f.panels = append(f.panels, labelPanel(newLabelStrip(notes, color.Gray{Y: 60}), x0, x1))
	}
	f.panels = append(f.panels, panel{p: p, weight: 1})
	return newFigure(o.Size.or(Size{8, 4.5}), o.DPI, f.draw), nil
}

// fmtPower prints watts as units.Watts does (mW below 1 W).
func fmtPower(w float64) string { return units.Watts(w).String() }

// hband shades [lo, hi] on the y axis between times x0 and x1 (±Inf: the
// whole axis), e.g. an estimate's confidence interval.
type hband struct {
	lo, hi, x0, x1 float64
	color          color.Color
}

func (h hband) Plot(c draw.Canvas, p *plot.Plot) {
	trX, trY := p.Transforms(&c)
	xa, xb := c.Min.X, c.Max.X
	if finite(h.x0) {
		xa = max(xa, clampLen(trX(h.x0), c.Min.X, c.Max.X))
	}
	if finite(h.x1) {
		xb = min(xb, clampLen(trX(h.x1), c.Min.X, c.Max.X))
	}
	ya := max(c.Min.Y, clampLen(trY(h.lo), c.Min.Y, c.Max.Y))
	yb := min(c.Max.Y, clampLen(trY(h.hi), c.Min.Y, c.Max.Y))
	if p.Y.Scale != nil && h.lo <= 0 {
		if _, log := p.Y.Scale.(plot.LogScale); log {
			ya = c.Min.Y
		}
	}
	if xb <= xa || yb <= ya {
		return
	}
	// At least a hairline, so a tight interval still shows.
	if yb-ya < vg.Points(1) {
		m := (ya + yb) / 2
		ya, yb = m-vg.Points(0.5), m+vg.Points(0.5)
	}
	c.FillPolygon(h.color, []vg.Point{{X: xa, Y: ya}, {X: xb, Y: ya}, {X: xb, Y: yb}, {X: xa, Y: yb}})
}
