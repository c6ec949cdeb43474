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
)

// Hist counts power values into fixed bins as they stream past, so a
// histogram or CDF of an hour of samples costs one counter per bin. Bins are
// evenly spaced in watts, or in log10(watts) when Log is set, which suits a
// drive that spends time at both mW (DevSlp) and W (active). Values below Lo
// or above Hi are counted as under/overflow and still weigh in the totals.
type Hist struct {
	lo, hi      float64
	log         bool
	a, b        float64 // bin = floor(a·x + b), x = w or log10(w)
	counts      []float64
	under, over float64
}

// NewHist returns an empty histogram of bins bins over [lo, hi] watts.
func NewHist(lo, hi float64, bins int, log bool) (*Hist, error) {
	if bins < 1 || bins > 1<<20 || !finite(lo) || !finite(hi) || hi <= lo || (log && lo <= 0) {
		return nil, fmt.Errorf("chart: histogram [%g, %g] W with %d bins (log %v): want 0 < bins ≤ 2^20, lo < hi, lo > 0 if log", lo, hi, bins, log)
	}
	h := &Hist{lo: lo, hi: hi, log: log, counts: make([]float64, bins)}
	x0, x1 := lo, hi
	if log {
		x0, x1 = math.Log10(lo), math.Log10(hi)
	}
	h.a = float64(bins) / (x1 - x0)
	h.b = -x0 * h.a
	return h, nil
}

// Add counts one value. NaN is ignored (it is a gap, not a power).
func (h *Hist) Add(w float64) { h.AddN(w, 1) }

// AddN counts a value n times, e.g. a summary point's mean for its samples.
func (h *Hist) AddN(w, n float64) {
	if w != w || !(n > 0) || math.IsInf(n, 0) {
		return
	}
	switch {
	case w < h.lo:
		h.under += n
		return
	case w > h.hi:
		h.over += n
		return
	}
	x := w
	if h.log {
		x = math.Log10(w)
	}
	i := int(h.a*x + h.b)
	if i >= len(h.counts) { // w == hi
		i = len(h.counts) - 1
	}
	if i < 0 {
		i = 0
	}
	h.counts[i] += n
}

// occupied returns the first and last bins holding any weight.
func (h *Hist) occupied() (first, last int, ok bool) {
	first, last = -1, -1
	for i, c := range h.counts {
		if c > 0 {
			if first < 0 {
				first = i
			}
			last = i
		}
	}
	return first, last, first >= 0
}

// Total returns the weight counted, including under- and overflow.
func (h *Hist) Total() float64 {
	t := h.under + h.over
	for _, c := range h.counts {
		t += c
	}
	return t
}

// edge returns the lower edge of bin i in watts (i = len gives hi).
func (h *Hist) edge(i int) float64 {
	x := (float64(i) - h.b) / h.a
	if h.log {
		return math.Pow(10, x)
	}
	return x
}

// Quantile returns the value (W) below which fraction q of the weight lies,
// interpolating inside a bin; NaN when the histogram is empty or the
// quantile falls in the under/overflow.
func (h *Hist) Quantile(q float64) float64 {
	t := h.Total()
	if t == 0 || !(q >= 0 && q <= 1) {
		return math.NaN()
	}
	want := q * t
	acc := h.under
	if want < acc {
		return math.NaN()
	}
	for i, c := range h.counts {
		if c > 0 && acc+c >= want {
			return h.edge(i) + (want-acc)/c*(h.edge(i+1)-h.edge(i))
		}
		acc += c
	}
	if h.over > 0 {
		return math.NaN()
	}
	return h.hi
}

// Distribution is one drive's histogram for Histogram and CDF.
type Distribution struct {
	Name string
	Hist *Hist
	// P50 and P99 (W), when > 0, are the quantiles the CDF marks and its
	// legend prints: the report's own figures, printed as report.md prints
	// them (4 decimals in W, 0.1 mW in mW), so the chart shows the same
	// numbers. Zero or NaN: not given, neither printed nor marked (the
	// chart never estimates its own: one number, one place).
	P50, P99 float64
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
	hasData, logX, maxW := false, false, 0.0
	logY := o.LogY && !cdf
	for i, d := range ds {
		if d.Hist == nil {
			return nil, fmt.Errorf("chart: distribution %d (%q) has no histogram", i, d.Name)
		}
		if d.Hist.Total() > 0 {
			hasData = true
		}
		logX = logX || d.Hist.log
		maxW = math.Max(maxW, d.Hist.hi)
	}
	if !hasData {
		return nil, ErrNoData
	}
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
		var pts plotter.XYs
		if cdf {
			acc := h.under
			pts = append(pts, plotter.XY{X: h.edge(0) * scale, Y: acc / t})
			for k, c := range h.counts {
				acc += c
				pts = append(pts, plotter.XY{X: h.edge(k+1) * scale, Y: acc / t})
			}
		} else {
			for k, c := range h.counts {
				y := 100 * c / t
				if logY {
					y = math.Max(y, logShareFloor)
				}
				ymax = math.Max(ymax, y)
				pts = append(pts, plotter.XY{X: h.edge(k) * scale, Y: y}, plotter.XY{X: h.edge(k+1) * scale, Y: y})
			}
		}
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
				label += " (" + strings.Join(qs, ", ") + ")"
			}
		}
		leg.add(label, swatch{line: draw.LineStyle{Color: clr, Width: vg.Points(2)}})
		if k0, k1, ok := h.occupied(); ok {
			xlo, xhi = math.Min(xlo, h.edge(k0)*scale), math.Max(xhi, h.edge(k1+1)*scale)
		}
	}
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
	f := &frame{title: o.Title, subtitle: o.Subtitle, legend: leg, panels: []panel{{p: p, weight: 1}}}
	return newFigure(o.Size.or(Size{8, 4}), o.DPI, f.draw), nil
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
