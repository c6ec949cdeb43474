package chart

import (
	"image/color"
	"math"
	"strconv"

	xfont "golang.org/x/image/font"
	"gonum.org/v1/plot"
	"gonum.org/v1/plot/font"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/text"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
)

// The look is a storage review's: sans-serif text, a bold title, light
// horizontal grid lines, no box, saturated series colours on light state
// shading. Fonts are the Liberation faces gonum/plot embeds, never system
// fonts, so a PNG is the same on every machine (the golden tests rely on it).
var (
	sans     = font.Font{Typeface: "Liberation", Variant: "Sans"}
	sansBold = font.Font{Typeface: "Liberation", Variant: "Sans", Weight: xfont.WeightBold}

	white     = color.Gray{Y: 255}
	textColor = color.Gray{Y: 30}
	axisColor = color.Gray{Y: 110}
	gridColor = color.Gray{Y: 225}

	// palette is Tableau 10: distinguishable, and what readers of
	// benchmark charts are used to.
	palette = []color.RGBA{
		{0x1f, 0x77, 0xb4, 0xff}, {0xff, 0x7f, 0x0e, 0xff}, {0x2c, 0xa0, 0x2c, 0xff},
		{0xd6, 0x27, 0x28, 0xff}, {0x94, 0x67, 0xbd, 0xff}, {0x8c, 0x56, 0x4b, 0xff},
		{0xe3, 0x77, 0xc2, 0xff}, {0x7f, 0x7f, 0x7f, 0xff}, {0xbc, 0xbd, 0x22, 0xff},
		{0x17, 0xbe, 0xcf, 0xff},
	}
)

const (
	titleSize  = 13
	labelSize  = 10
	tickSize   = 9
	legendSize = 9
	noteSize   = 8
)

// seriesColor returns the i-th series colour, cycling.
func seriesColor(i int) color.RGBA { return palette[((i%len(palette))+len(palette))%len(palette)] }

// tint returns c with alpha a (0–255), premultiplied as image/color wants.
func tint(c color.RGBA, a uint8) color.NRGBA { return color.NRGBA{R: c.R, G: c.G, B: c.B, A: a} }

func textStyle(f font.Font, size vg.Length) text.Style {
	return text.Style{Color: textColor, Font: font.From(f, size), Handler: plot.DefaultTextHandler}
}

// newPlot returns a plot styled for the package. Titles are drawn by the
// figure, not the plot, so panels of a stack line up.
func newPlot() *plot.Plot {
	p := plot.New()
	p.BackgroundColor = color.Transparent
	restyle := func(s *text.Style, f font.Font, size vg.Length, c color.Color) {
		s.Font = font.From(f, size)
		s.Color = c
	}
	restyle(&p.Title.TextStyle, sansBold, labelSize, textColor)
	p.Title.Padding = vg.Points(3)
	for _, a := range []*plot.Axis{&p.X, &p.Y} {
		restyle(&a.Label.TextStyle, sans, labelSize, textColor)
		restyle(&a.Tick.Label, sans, tickSize, axisColor)
		a.Color = axisColor
		a.Tick.Color = axisColor
		a.Tick.Length = vg.Points(3)
		a.Width = vg.Points(0.6)
		a.Tick.Width = vg.Points(0.6)
		a.Padding = 0
		a.Label.Padding = vg.Points(3)
		a.Tick.Marker = niceTicks{}
	}
	return p
}

// hgrid returns light horizontal grid lines only: reviews read values off
// the y axis, and vertical lines would fight with state shading.
func hgrid() *plotter.Grid {
	g := plotter.NewGrid()
	g.Vertical.Color = nil
	g.Horizontal.Color = gridColor
	g.Horizontal.Width = vg.Points(0.5)
	return g
}

// noLabels keeps an axis' tick positions (and so the grid) but drops the
// text, for panels stacked above the one that carries the time axis.
type noLabels struct{ plot.Ticker }

func (n noLabels) Ticks(lo, hi float64) []plot.Tick {
	ts := n.Ticker.Ticks(lo, hi)
	for i := range ts {
		ts[i].Label = ""
	}
	return ts
}

// padTicks wraps a ticker so that tick labels are drawn with a fixed format.
type fmtTicks struct {
	plot.Ticker
	format func(float64) string
}

func (f fmtTicks) Ticks(lo, hi float64) []plot.Tick {
	ts := f.Ticker.Ticks(lo, hi)
	for i := range ts {
		if ts[i].Label != "" {
			ts[i].Label = f.format(ts[i].Value)
		}
	}
	return ts
}

// legendEntry is one swatch and its text in a horizontal legend.
type legendEntry struct {
	text  string
	thumb plot.Thumbnailer
}

// hlegend is a one-row legend drawn above the panels, the way review charts
// place it, so it never covers data. Entries wrap to more rows if needed.
type hlegend struct {
	entries []legendEntry
	sty     text.Style
}

func newLegend() *hlegend { return &hlegend{sty: textStyle(sans, legendSize)} }

func (l *hlegend) add(s string, t plot.Thumbnailer) {
	l.entries = append(l.entries, legendEntry{s, t})
}

const swatchW = 14

// layout returns, for a row width, each entry's x offset and row number.
func (l *hlegend) layout(width vg.Length) (xs []vg.Length, rows []int, nrows int) {
	gap := vg.Points(12)
	x, row := vg.Length(0), 0
	for _, e := range l.entries {
		w := vg.Points(swatchW+4) + l.sty.Width(e.text)
		if x > 0 && x+w > width {
			x, row = 0, row+1
		}
		xs, rows = append(xs, x), append(rows, row)
		x += w + gap
	}
	if len(l.entries) > 0 {
		nrows = row + 1
	}
	return xs, rows, nrows
}

func (l *hlegend) rowHeight() vg.Length { return l.sty.Height("Xg") + vg.Points(3) }

// height returns the vertical space the legend needs at the given width.
func (l *hlegend) height(width vg.Length) vg.Length {
	_, _, n := l.layout(width)
	return vg.Length(n) * l.rowHeight()
}

// draw draws the legend centred in c, rows from the top.
func (l *hlegend) draw(c draw.Canvas) {
	width := c.Max.X - c.Min.X
	xs, rows, n := l.layout(width)
	// Centre each row: find its right edge.
	rowW := make([]vg.Length, n)
	for i, e := range l.entries {
		end := xs[i] + vg.Points(swatchW+4) + l.sty.Width(e.text)
		if end > rowW[rows[i]] {
			rowW[rows[i]] = end
		}
	}
	rh := l.rowHeight()
	sty := l.sty
	sty.YAlign = draw.YCenter
	for i, e := range l.entries {
		x0 := c.Min.X + (width-rowW[rows[i]])/2 + xs[i]
		yc := c.Max.Y - rh*vg.Length(rows[i]) - rh/2
		sw := draw.Canvas{Canvas: c.Canvas, Rectangle: vg.Rectangle{
			Min: vg.Point{X: x0, Y: yc - vg.Points(4)},
			Max: vg.Point{X: x0 + vg.Points(swatchW), Y: yc + vg.Points(4)},
		}}
		e.thumb.Thumbnail(&sw)
		c.FillText(sty, vg.Point{X: x0 + vg.Points(swatchW+4), Y: yc}, e.text)
	}
}

// swatch is a legend thumbnail: a filled box, a line, or a dot.
type swatch struct {
	fill color.Color
	line draw.LineStyle
	dot  bool
	// lineOnFill draws line across the middle of a fill box (an estimate
	// inside its interval).
	lineOnFill bool
	// bands are side-by-side boxes, one per colour a min–max band is drawn
	// in (one per drive).
	bands []color.Color
}

func (s swatch) Thumbnail(c *draw.Canvas) {
	r := c.Rectangle
	switch {
	case len(s.bands) > 0:
		w := (r.Max.X - r.Min.X) / vg.Length(len(s.bands))
		for i, b := range s.bands {
			x0 := r.Min.X + w*vg.Length(i)
			c.FillPolygon(b, []vg.Point{{X: x0, Y: r.Min.Y}, {X: x0 + w, Y: r.Min.Y}, {X: x0 + w, Y: r.Max.Y}, {X: x0, Y: r.Max.Y}})
		}
	case s.lineOnFill:
		c.FillPolygon(s.fill, []vg.Point{r.Min, {X: r.Max.X, Y: r.Min.Y}, r.Max, {X: r.Min.X, Y: r.Max.Y}})
		y := (r.Min.Y + r.Max.Y) / 2
		c.StrokeLine2(s.line, r.Min.X, y, r.Max.X, y)
	case s.dot:
		c.DrawGlyph(draw.GlyphStyle{Color: s.fill, Radius: vg.Points(3), Shape: draw.CircleGlyph{}}, vg.Point{X: (r.Min.X + r.Max.X) / 2, Y: (r.Min.Y + r.Max.Y) / 2})
	case s.fill != nil:
		c.FillPolygon(s.fill, []vg.Point{r.Min, {X: r.Max.X, Y: r.Min.Y}, r.Max, {X: r.Min.X, Y: r.Max.Y}})
		if s.line.Color != nil {
			c.StrokeLines(s.line, []vg.Point{r.Min, {X: r.Max.X, Y: r.Min.Y}, r.Max, {X: r.Min.X, Y: r.Max.Y}, r.Min})
		}
	default:
		y := (r.Min.Y + r.Max.Y) / 2
		c.StrokeLine2(s.line, r.Min.X, y, r.Max.X, y)
	}
}

// panel is one plot in a vertical stack with its share of the height.
// When height is set, the panel's data area is as tall as height says for
// a data area w wide (a label strip grows by rows, not with the page).
type panel struct {
	p      *plot.Plot
	weight float64
	height func(w vg.Length) vg.Length
}

// frame draws the parts every figure has: a bold title, an optional
// subtitle, a legend row, then the panels stacked with their data areas
// aligned left and right so a shared time axis reads straight down.
type frame struct {
	title, subtitle string
	legend          *hlegend
	panels          []panel
	gap             vg.Length // vertical space between panels
}

func (f *frame) draw(c draw.Canvas) {
	pad := vg.Points(6)
	c = draw.Crop(c, pad, -pad-vg.Points(4), pad, -pad)
	if f.title != "" {
		sty := textStyle(sansBold, titleSize)
		sty.XAlign, sty.YAlign = draw.XCenter, draw.YTop
		c.FillText(sty, vg.Point{X: (c.Min.X + c.Max.X) / 2, Y: c.Max.Y}, f.title)
		c.Max.Y -= sty.Height(f.title) + vg.Points(2)
	}
	if f.subtitle != "" {
		sty := textStyle(sans, legendSize)
		sty.Color = axisColor
		sty.XAlign, sty.YAlign = draw.XCenter, draw.YTop
		c.FillText(sty, vg.Point{X: (c.Min.X + c.Max.X) / 2, Y: c.Max.Y}, f.subtitle)
		c.Max.Y -= sty.Height(f.subtitle) + vg.Points(2)
	}
	if f.legend != nil && len(f.legend.entries) > 0 {
		h := f.legend.height(c.Max.X - c.Min.X)
		lc := c
		lc.Min.Y = c.Max.Y - h
		f.legend.draw(lc)
		c.Max.Y -= h + vg.Points(4)
	}
	if len(f.panels) == 0 {
		return
	}
	// Weights share out the height of the data areas, not of the slots:
	// a panel's axes and title take what they need first, so a thin strip
	// that carries the time axis keeps its thin data area.
	var total float64
	overhead := make([]vg.Length, len(f.panels))
	var fixed vg.Length
	for i, p := range f.panels {
		total += p.weight
		dc := p.p.DataCanvas(c)
		overhead[i] = (c.Max.Y - c.Min.Y) - (dc.Max.Y - dc.Min.Y)
		if p.height != nil {
			// The data width here is before alignment, a few points wide
			// of the final one: close enough to count label rows.
			overhead[i] += p.height(dc.Max.X - dc.Min.X)
			total -= p.weight
		}
		fixed += overhead[i]
	}
	if total <= 0 {
		total = 1
	}
	avail := c.Max.Y - c.Min.Y - f.gap*vg.Length(len(f.panels)-1) - fixed
	if avail < 0 {
		avail = 0
	}
	slots := make([]draw.Canvas, len(f.panels))
	y := c.Max.Y
	for i, p := range f.panels {
		h := overhead[i]
		if p.height == nil {
			h += avail * vg.Length(p.weight/total)
		}
		if !finite(float64(h)) || h < 0 {
			return // nothing sensible fits; a blank page beats a hang
		}
		slots[i] = c
		slots[i].Max.Y, slots[i].Min.Y = y, y-h
		y -= h + f.gap
	}
	// Align data areas: the widest left margin (y tick labels) and right
	// margin win, every other panel is cropped to match.
	var left, right vg.Length
	for i, p := range f.panels {
		dc := p.p.DataCanvas(slots[i])
		left = max(left, dc.Min.X-slots[i].Min.X)
		right = max(right, slots[i].Max.X-dc.Max.X)
	}
	for i, p := range f.panels {
		dc := p.p.DataCanvas(slots[i])
		s := draw.Crop(slots[i], left-(dc.Min.X-slots[i].Min.X), -(right - (slots[i].Max.X - dc.Max.X)), 0, 0)
		if !drawable(s.Rectangle) || !drawable(p.p.DataCanvas(s).Rectangle) {
			continue // degenerate axes: skip the panel rather than hang the rasterizer
		}
		p.p.Draw(s)
	}
}

// niceTicks puts about n major ticks at 1, 2 or 5 × 10^k steps, with minor
// ticks between, labelled with no more decimals than the step needs. gonum's
// default gives too few ticks for a wide time axis and prints "250.00".
type niceTicks struct{ n int }

func (t niceTicks) Ticks(lo, hi float64) []plot.Tick {
	if !(hi > lo) || !finite(lo) || !finite(hi) {
		return nil
	}
	n := t.n
	if n <= 0 {
		n = 6
	}
	raw := (hi - lo) / float64(n)
	mag := math.Pow(10, math.Floor(math.Log10(raw)))
	step := mag
	for _, m := range [...]float64{1, 2, 5, 10} {
		if m*mag >= raw {
			step = m * mag
			break
		}
	}
	if !(step > 0) || !finite(step) || (hi-lo)/step > 100 {
		return nil
	}
	minor := step / 5
	if step/mag == 2 || step/mag == 20 {
		minor = step / 4
	}
	prec := 0
	if step < 1 {
		prec = int(math.Ceil(-math.Log10(step) - 1e-9))
	}
	var ts []plot.Tick
	start := math.Ceil(lo/minor-1e-9) * minor
	for i := 0; i < 1000; i++ {
		v := start + float64(i)*minor
		if v > hi+minor*1e-9 {
			break
		}
		k := math.Round(v / step)
		if math.Abs(v-k*step) < minor*1e-6 {
			v = k * step
			if v == 0 {
				v = 0 // no "-0"
			}
			ts = append(ts, plot.Tick{Value: v, Label: strconv.FormatFloat(v, 'f', prec, 64)})
		} else {
			ts = append(ts, plot.Tick{Value: v})
		}
	}
	return ts
}

// fixAxis makes an axis range drawable whatever the data did: finite,
// non-empty and, on a log axis, positive. gonum/plot panics on a log axis
// that reaches zero, and a chart must never panic on odd input.
func fixAxis(a *plot.Axis, log bool) {
	lo, hi := a.Min, a.Max
	big := math.MaxFloat64 / 4
	if !finite(lo) || lo < -big {
		lo = -big
	}
	if !finite(hi) || hi > big {
		hi = big
	}
	if log {
		if !(hi > 1e-290) {
			hi = 1
		}
		if !(lo > 1e-300) || lo >= hi {
			lo = hi / 1000
		}
	}
	// A range too narrow to tell its ends apart in float64 (or to divide
	// into ticks) is widened around its middle.
	if m := math.Max(math.Abs(lo), math.Abs(hi)); !(hi-lo > 1e-9*m) || hi-lo < 1e-200 {
		if log {
			lo, hi = lo/10, lo*10
		} else {
			mid := lo/2 + hi/2
			w := math.Max(m*1e-6, 1e-6)
			lo, hi = mid-w, mid+w
		}
	}
	a.Min, a.Max = lo, hi
}

// drawable reports whether r is a finite, non-inverted rectangle.
func drawable(r vg.Rectangle) bool {
	for _, v := range [...]vg.Length{r.Min.X, r.Min.Y, r.Max.X, r.Max.Y} {
		if !finite(float64(v)) || math.Abs(float64(v)) > 1e6 {
			return false
		}
	}
	return r.Max.X >= r.Min.X && r.Max.Y >= r.Min.Y
}

// setLogYLabel labels a log y axis. gonum/plot places the axis label's
// glyph box at the arithmetic middle of the range, near the top of a log
// axis, and pads the data area down by the overflow; so the axis gets a
// one-space label that reserves the label's width, and the text is drawn
// by yAxisLabel, centred.
func setLogYLabel(p *plot.Plot, text string) {
	p.Y.Label.Text = " "
	p.Add(yAxisLabel{text})
}

type yAxisLabel struct{ text string }

func (l yAxisLabel) Plot(c draw.Canvas, p *plot.Plot) {
	var w vg.Length
	for _, t := range p.Y.Tick.Marker.Ticks(p.Y.Min, p.Y.Max) {
		if t.Label != "" {
			w = max(w, p.Y.Tick.Label.Width(t.Label))
		}
	}
	sty := p.Y.Label.TextStyle
	sty.Rotation = math.Pi / 2
	sty.XAlign, sty.YAlign = draw.XCenter, draw.YBottom
	x := c.Min.X - p.Y.Width/2 - p.Y.Padding - p.Y.Tick.Length - w - p.Y.Label.Padding
	c.FillText(sty, vg.Point{X: x, Y: (c.Min.Y + c.Max.Y) / 2}, l.text)
}

// logTicks is gonum's LogTicks without the ticks it returns beyond the
// axis range: their labels would count in the plot's padding and push the
// data area down by the height of a label no one sees.
type logTicks struct{}

func (logTicks) Ticks(lo, hi float64) []plot.Tick {
	var out []plot.Tick
	for _, t := range (plot.LogTicks{Prec: -1}).Ticks(lo, hi) {
		if t.Value >= lo*(1-1e-9) && t.Value <= hi*(1+1e-9) {
			out = append(out, t)
		}
	}
	return out
}
