package chart

import (
	"fmt"
	"image/color"
	"math"
	"strings"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"

	"github.com/idlewatt/idlewatt/analysis/series"
)

// The histogram analysis fills lives in analysis/series; these names keep
// chart.Hist, chart.NewHist and chart.Distribution working.
type (
	// Hist is series.Hist: power values counted into fixed bins.
	Hist = series.Hist
	// Distribution is series.Distribution: one drive's histogram for
	// Histogram and CDF.
	Distribution = series.Distribution
)

// NewHist is series.NewHist.
func NewHist(lo, hi float64, bins int, log bool) (*Hist, error) {
	return series.NewHist(lo, hi, bins, log)
}

// DistOpts configures Histogram and CDF.
type DistOpts struct {
	Title, Subtitle string
	Unit            PowerUnit
	// LogY makes the histogram's share-of-time axis logarithmic (0.01 % to
	// 100 %), so a mode holding 1 % of the time (DevSlp) is as visible as
	// one holding 60 %. The CDF ignores it.
	LogY bool
	Size Size    // inches; default 8 × 4
	DPI  float64 // PNG resolution; default 96
}

// logShareFloor is the lowest share (%) a logarithmic histogram axis shows.
const logShareFloor = 0.01

// Histogram draws each drive's share of time per power bin as a step
// outline over a light fill. Sample counts are time shares because samples
// are evenly spaced. It returns ErrNoData if no histogram has any weight.
func Histogram(ds []Distribution, o DistOpts) (*Figure, error) {
	return distChart(ds, o, false)
}

// CDF draws, per drive, the fraction of time spent at or below each power,
// with the median and 99th percentile marked. The x axis is logarithmic when
// the histograms are.
func CDF(ds []Distribution, o DistOpts) (*Figure, error) {
	return distChart(ds, o, true)
}

func distChart(ds []Distribution, o DistOpts, cdf bool) (*Figure, error) {
	logX, maxW, err := distRange(ds)
	if err != nil {
		return nil, err
	}
	logY := o.LogY && !cdf
	scale, unit := o.Unit.resolve(maxW)
	p := newPlot()
	p.Add(hgrid())
	leg := newLegend()
	var ymax float64
	xlo, xhi := math.Inf(1), math.Inf(-1)
	for i, d := range ds {
		h := d.Hist
		t := h.Total()
		if t == 0 {
			continue
		}
		clr := seriesColor(i)
		pts, ym := distPoints(h, scale, cdf, logY)
		ymax = math.Max(ymax, ym)
		l, err := plotter.NewLine(pts)
		if err != nil {
			return nil, fmt.Errorf("chart: distribution %d (%q): %w", i, d.Name, err)
		}
		l.Color, l.Width = clr, vg.Points(1.4)
		if !cdf && !logY {
			l.FillColor = tint(clr, 50)
		}
		p.Add(l)
		label := name(d.Name, i)
		if cdf {
			label += quantileMarks(p, d, scale, unit, clr)
		}
		leg.add(label, swatch{line: draw.LineStyle{Color: clr, Width: vg.Points(2)}})
		if k0, k1, ok := h.Occupied(); ok {
			xlo, xhi = math.Min(xlo, h.Edge(k0)*scale), math.Max(xhi, h.Edge(k1+1)*scale)
		}
	}
	distAxes(p, unit, cdf, logX, logY, xlo, xhi, ymax)
	f := &frame{title: o.Title, subtitle: o.Subtitle, legend: leg, panels: []panel{{p: p, weight: 1}}}
	return newFigure(o.Size.or(Size{8, 4}), o.DPI, f.draw), nil
}

// distRange checks that every distribution has a histogram and one has
// weight: whether any is logarithmic, and the highest bin edge.
func distRange(ds []Distribution) (logX bool, maxW float64, err error) {
	hasData := false
	for i, d := range ds {
		if d.Hist == nil {
			return false, 0, fmt.Errorf("chart: distribution %d (%q) has no histogram", i, d.Name)
		}
		if d.Hist.Total() > 0 {
			hasData = true
		}
		logX = logX || d.Hist.Log()
		maxW = math.Max(maxW, d.Hist.Hi())
	}
	if !hasData {
		return false, 0, ErrNoData
	}
	return logX, maxW, nil
}

// distPoints is a histogram's curve: the cumulative fraction at each bin
// edge, or the share of time per bin as steps (floored for a logarithmic
// axis), with the highest share.
func distPoints(h *Hist, scale float64, cdf, logY bool) (pts plotter.XYs, ymax float64) {
	t := h.Total()
	if cdf {
		acc := h.Under()
		pts = append(pts, plotter.XY{X: h.Edge(0) * scale, Y: acc / t})
		for k, c := range h.Counts() {
			acc += c
			pts = append(pts, plotter.XY{X: h.Edge(k+1) * scale, Y: acc / t})
		}
		return pts, 0
	}
	for k, c := range h.Counts() {
		y := 100 * c / t
		if logY {
			y = math.Max(y, logShareFloor)
		}
		ymax = math.Max(ymax, y)
		pts = append(pts, plotter.XY{X: h.Edge(k) * scale, Y: y}, plotter.XY{X: h.Edge(k+1) * scale, Y: y})
	}
	return pts, ymax
}

// quantileMarks puts a dot on d's CDF at its median and 99th percentile and
// returns them for its legend label (" (p50 …, p99 …)", or "").
func quantileMarks(p *plot.Plot, d Distribution, scale float64, unit string, clr color.RGBA) string {
	// The quantiles go in the legend, where labels of several
	// drives cannot collide; the curve gets a dot at each.
	var qs []string
	for k, q := range [...]float64{0.5, 0.99} {
		v := [...]float64{d.P50, d.P99}[k]
		if !(v > 0) || !finite(v) {
			continue
		}
		qs = append(qs, quantileText(q, v, unit))
		p.Add(quantileMark{x: v * scale, y: q, color: clr})
	}
	if len(qs) > 0 {
		return " (" + strings.Join(qs, ", ") + ")"
	}
	return ""
}

// distAxes labels and scales the axes: x zoomed to the occupied bins
// [xlo, xhi] with a margin, y to the highest share (or the fraction 0–1).
func distAxes(p *plot.Plot, unit string, cdf, logX, logY bool, xlo, xhi, ymax float64) {
	p.X.Label.Text = "Power (" + unit + ")"
	if xhi > xlo { // zoom to the occupied bins, with a margin
		if logX {
			xlo, xhi = xlo/1.5, xhi*1.5
		} else {
			m := (xhi - xlo) * 0.04
			xlo, xhi = xlo-m, xhi+m
		}
		p.X.Min, p.X.Max = xlo, xhi
	}
	if logX {
		p.X.Scale = plot.LogScale{}
		p.X.Tick.Marker = plot.LogTicks{Prec: -1}
	}
	if cdf {
		p.Y.Label.Text = "Fraction of time"
		p.Y.Min, p.Y.Max = 0, 1.02
	} else {
		p.Y.Label.Text = "Share of time (%)"
		p.Y.Min, p.Y.Max = 0, ymax*1.08
		if logY {
			p.Y.Scale = plot.LogScale{}
			setLogYLabel(p, p.Y.Label.Text)
			p.Y.Tick.Marker = logTicks{}
			p.Y.Min, p.Y.Max = logShareFloor, math.Max(ymax*1.5, 1)
		}
	}
	fixAxis(&p.X, logX)
	fixAxis(&p.Y, logY)
}

// quantileMark is a dot on a CDF.
type quantileMark struct {
	x, y  float64
	color color.RGBA
}

func (q quantileMark) Plot(c draw.Canvas, p *plot.Plot) {
	trX, trY := p.Transforms(&c)
	pt := vg.Point{X: trX(q.x), Y: trY(q.y)}
	if !c.Contains(pt) {
		return
	}
	c.DrawGlyph(draw.GlyphStyle{Color: q.color, Radius: vg.Points(2.5), Shape: draw.CircleGlyph{}}, pt)
}

// quantileText prints a quantile as report.md prints it: "p50 0.3998 W"
// (4 decimals), or to 0.1 mW on a mW axis ("p50 399.8 mW").
func quantileText(q, w float64, unit string) string {
	if unit == "mW" {
		return fmt.Sprintf("p%g %.1f mW", q*100, w*1e3)
	}
	return fmt.Sprintf("p%g %.4f W", q*100, w)
}
