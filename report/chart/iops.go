package chart

import (
	"fmt"
	"math"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
)

// IOPSSeries is one drive's completed I/Os per one-second interval: IOPS[i]
// is the count in the second starting at T[i] seconds.
type IOPSSeries struct {
	Name    string
	T, IOPS []float64
}

// IOPSOpts configures IOPSConsistency.
type IOPSOpts struct {
	Title, Subtitle string
	// LogY uses a log IOPS axis, as consistency charts often do, so the
	// stalls of a drive doing garbage collection stay visible.
	LogY bool
	Size Size    // inches; default 8 × 4
	DPI  float64 // PNG resolution; default 96
}

// IOPSConsistency draws IOPS per second against time as a scatter, one
// colour per drive. It returns ErrNoData when there are no points and an
// error naming the series whose slices differ in length or whose values are
// not finite or negative.
func IOPSConsistency(ss []IOPSSeries, o IOPSOpts) (*Figure, error) {
	n, hi := 0, 0.0
	lo := math.Inf(1)
	for i, s := range ss {
		if len(s.T) != len(s.IOPS) {
			return nil, fmt.Errorf("chart: IOPS series %d (%q): %d times but %d values", i, s.Name, len(s.T), len(s.IOPS))
		}
		for k := range s.T {
			if !finite(s.T[k]) || !finite(s.IOPS[k]) || s.IOPS[k] < 0 {
				return nil, fmt.Errorf("chart: IOPS series %d (%q): point %d (%g s, %g IOPS) is not a finite non-negative value", i, s.Name, k, s.T[k], s.IOPS[k])
			}
			hi = math.Max(hi, s.IOPS[k])
			if s.IOPS[k] > 0 {
				lo = math.Min(lo, s.IOPS[k])
			}
		}
		n += len(s.T)
	}
	if n == 0 {
		return nil, ErrNoData
	}
	p := newPlot()
	p.Add(hgrid())
	floor := 0.0
	if o.LogY {
		// Zero IOPS cannot sit on a log axis; draw them on its floor,
		// where a stall still reads as a stall.
		floor = math.Pow(10, math.Floor(math.Log10(math.Min(lo, math.Max(hi, 1)))))
		if math.IsInf(lo, 1) {
			floor = 1
		}
	}
	leg := newLegend()
	for i, s := range ss {
		p.Add(dots{t: s.T, v: s.IOPS, floor: floor, sty: draw.GlyphStyle{Color: tint(seriesColor(i), 200), Radius: vg.Points(1.6), Shape: draw.CircleGlyph{}}})
		leg.add(name(s.Name, i), swatch{fill: seriesColor(i), dot: true})
	}
	p.X.Label.Text = "Time (s)"
	p.Y.Label.Text = "IOPS"
	p.Y.Tick.Marker = fmtTicks{niceTicks{5}, thousands}
	if o.LogY {
		p.Y.Scale = plot.LogScale{}
		setLogYLabel(p, p.Y.Label.Text)
		p.Y.Tick.Marker = fmtTicks{logTicks{}, thousands}
		p.Y.Min, p.Y.Max = floor, math.Max(hi, floor)*2
	} else {
		p.Y.Min, p.Y.Max = 0, math.Max(hi, 1)*1.08
	}
	fixAxis(&p.X, false)
	fixAxis(&p.Y, o.LogY)
	f := &frame{title: o.Title, subtitle: o.Subtitle, legend: leg, panels: []panel{{p: p, weight: 1}}}
	return newFigure(o.Size.or(Size{8, 4}), o.DPI, f.draw), nil
}

// thousands prints 12000 as "12k", as IOPS axes usually do.
func thousands(v float64) string {
	switch {
	case v >= 1e6 && math.Mod(v, 1e5) == 0:
		return fmt.Sprintf("%gM", v/1e6)
	case v >= 1e3 && math.Mod(v, 100) == 0:
		return fmt.Sprintf("%gk", v/1e3)
	}
	return fmt.Sprintf("%g", v)
}

// dots is a scatter that tolerates zeros on a log axis by raising them to
// floor; plotter.Scatter would reject them.
type dots struct {
	t, v  []float64
	floor float64
	sty   draw.GlyphStyle
}

func (d dots) Plot(c draw.Canvas, p *plot.Plot) {
	trX, trY := p.Transforms(&c)
	for i := range d.t {
		pt := vg.Point{X: trX(d.t[i]), Y: trY(math.Max(d.v[i], d.floor))}
		if c.Contains(pt) {
			c.DrawGlyph(d.sty, pt)
		}
	}
}

func (d dots) DataRange() (xmin, xmax, ymin, ymax float64) {
	xmin, xmax = math.Inf(1), math.Inf(-1)
	for _, t := range d.t {
		xmin, xmax = math.Min(xmin, t), math.Max(xmax, t)
	}
	return xmin, xmax, d.floor, d.floor
}
