package chart

import (
	"fmt"
	"image/color"
	"math"
	"sort"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
)

// Bar is one drive's value in a bar chart, e.g. {Label: "JMF667H 128 GB",
// Value: 0.41, Err: 0.01}. Err ≥ 0 draws a ± whisker (0 draws none).
type Bar struct {
	Label string
	Value float64
	Err   float64
}

// BarOpts configures BarChart.
type BarOpts struct {
	Title, Subtitle string
	// Axis is the value axis label with its unit, e.g. "Power (W)".
	Axis string
	// Format prints the value at the bar's end; default "%.3g".
	Format string
	// Descending puts the largest value on top; by default the smallest is
	// on top, as reviews rank power where lower is better.
	Descending bool
	// Keep draws the bars in the given order, top to bottom.
	Keep bool
	// Highlight names bars (by Label) drawn in the accent colour, e.g. the
	// drive under test among reference drives.
	Highlight []string
	Size      Size    // inches; default 8 wide, 0.32 in per bar
	DPI       float64 // PNG resolution; default 96
}

// ActiveIdlePower is BarChart with a review's title and axis for active-idle
// watts: lower is better, smallest on top.
func ActiveIdlePower(bars []Bar, highlight ...string) (*Figure, error) {
	return BarChart(bars, BarOpts{
		Title: "Active Idle Power Consumption", Subtitle: "lower is better",
		Axis: "Power (W)", Highlight: highlight, Format: "%.3f W",
	})
}

// AveragePower is BarChart titled for a workload's average power, e.g.
// AveragePower(bars, "PCMark 7") → "PCMark 7 Average Power Consumption".
func AveragePower(bars []Bar, workload string, highlight ...string) (*Figure, error) {
	return BarChart(bars, BarOpts{
		Title: workload + " Average Power Consumption", Subtitle: "lower is better",
		Axis: "Power (W)", Highlight: highlight, Format: "%.3f W",
	})
}

// BarChart draws horizontal bars, one per drive, with the value printed at
// each bar's end. It returns ErrNoData for no bars and an error naming the
// bar whose Value or Err is not a finite number (Err must also be ≥ 0).
func BarChart(bars []Bar, o BarOpts) (*Figure, error) {
	if len(bars) == 0 {
		return nil, ErrNoData
	}
	for i, b := range bars {
		if !finite(b.Value) || !finite(b.Err) || b.Err < 0 {
			return nil, fmt.Errorf("chart: bar %d (%q): value %g ± %g is not a finite value with a non-negative error", i, b.Label, b.Value, b.Err)
		}
	}
	if o.Format == "" {
		o.Format = "%.3g"
	}
	bs := append([]Bar(nil), bars...)
	if !o.Keep {
		sort.SliceStable(bs, func(i, j int) bool {
			if o.Descending {
				return bs[i].Value > bs[j].Value
			}
			return bs[i].Value < bs[j].Value
		})
	}
	// Bar 0 goes on top, so it takes the highest y.
	n := len(bs)
	labels := make([]string, n)
	for i, b := range bs {
		labels[n-1-i] = b.Label
	}
	hl := map[string]bool{}
	for _, h := range o.Highlight {
		hl[h] = true
	}

	p := newPlot()
	g := hgrid()
	g.Horizontal.Color, g.Vertical.Color, g.Vertical.Width = nil, gridColor, vg.Points(0.5)
	p.Add(g)
	hb := &hbars{bars: bs, highlight: hl, format: o.Format}
	p.Add(hb)
	p.NominalY(labels...)
	p.Y.Tick.Label.Color = textColor
	p.Y.Tick.Label.Font.Size = vg.Points(labelSize)
	p.Y.Tick.Length = 0
	p.Y.Color = nil
	p.X.Label.Text = o.Axis
	lo, hi := hb.xrange()
	// Leave room right of the longest bar for its printed value.
	p.X.Min, p.X.Max = lo, hi+(hi-lo)*0.15
	fixAxis(&p.X, false)
	f := &frame{title: o.Title, subtitle: o.Subtitle, panels: []panel{{p: p, weight: 1}}}
	return newFigure(o.Size.or(Size{8, 1.1 + 0.32*float64(n)}), o.DPI, f.draw), nil
}

type hbars struct {
	bars      []Bar
	highlight map[string]bool
	format    string
}

func (h *hbars) xrange() (lo, hi float64) {
	for _, b := range h.bars {
		lo = math.Min(lo, b.Value-b.Err)
		hi = math.Max(hi, b.Value+b.Err)
	}
	if hi <= lo {
		hi = lo + 1
	}
	return lo, hi
}

func (h *hbars) Plot(c draw.Canvas, p *plot.Plot) {
	trX, trY := p.Transforms(&c)
	n := len(h.bars)
	base, accent := seriesColor(0), seriesColor(1)
	sty := textStyle(sans, tickSize)
	sty.YAlign = draw.YCenter
	whisker := draw.LineStyle{Color: textColor, Width: vg.Points(0.8)}
	half := (trY(1) - trY(0)) * 0.32
	for i, b := range h.bars {
		yc := trY(float64(n - 1 - i))
		clr := color.Color(base)
		if h.highlight[b.Label] {
			clr = accent
		}
		x0, x1 := trX(0), trX(b.Value)
		if x1 < x0 {
			x0, x1 = x1, x0
		}
		if x1-x0 < vg.Points(0.5) {
			x1 = x0 + vg.Points(0.5) // a zero still shows where it is
		}
		c.FillPolygon(clr, c.ClipPolygonXY([]vg.Point{{X: x0, Y: yc - half}, {X: x1, Y: yc - half}, {X: x1, Y: yc + half}, {X: x0, Y: yc + half}}))
		end := trX(math.Max(b.Value, 0) + b.Err)
		if b.Err > 0 {
			e0, e1 := trX(b.Value-b.Err), trX(b.Value+b.Err)
			c.StrokeLine2(whisker, e0, yc, e1, yc)
			c.StrokeLine2(whisker, e0, yc-half/2, e0, yc+half/2)
			c.StrokeLine2(whisker, e1, yc-half/2, e1, yc+half/2)
		}
		c.FillText(sty, vg.Point{X: end + vg.Points(4), Y: yc}, fmt.Sprintf(h.format, b.Value))
	}
}

func (h *hbars) DataRange() (xmin, xmax, ymin, ymax float64) {
	lo, hi := h.xrange()
	return lo, hi, -0.5, float64(len(h.bars)) - 0.5
}
