package chart

import (
	"image/color"
	"math"
	"sort"
	"strings"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
)

// The plotters here draw straight onto the data canvas and clip themselves,
// because gonum/plot leaves clipping to each plotter.

// envelopePlot draws an Envelope as a translucent min–max band under a mean
// line, breaking both at NaN rows.
type envelopePlot struct {
	e     Envelope
	scale float64 // W → axis unit
	color color.RGBA
	band  bool
	floor float64 // values below are raised to it (log axes cannot show ≤ 0)
}

func (ep *envelopePlot) val(v float64) float64 {
	v *= ep.scale
	if v < ep.floor {
		v = ep.floor
	}
	return v
}

func (ep *envelopePlot) Plot(c draw.Canvas, p *plot.Plot) {
	trX0, trY0 := p.Transforms(&c)
	trX := func(x float64) vg.Length { return clampLen(trX0(x), c.Min.X, c.Max.X) }
	trY := func(y float64) vg.Length { return clampLen(trY0(y), c.Min.Y, c.Max.Y) }
	line := draw.LineStyle{Color: ep.color, Width: vg.Points(1)}
	fill := tint(ep.color, 70)
	e := ep.e
	for i := 0; i < len(e.T); {
		if !finite(e.Mean[i]) || !finite(e.Min[i]) || !finite(e.Max[i]) {
			i++
			continue
		}
		j := i
		for j < len(e.T) && finite(e.Mean[j]) && finite(e.Min[j]) && finite(e.Max[j]) {
			j++
		}
		// Rows [i, j) are one unbroken segment. It is drawn in chunks that
		// share their end rows: the freetype rasterizer under vgimg is
		// quadratic in the edges a scanline crosses, and a 2000-row band in
		// one path took seconds; chunks keep it to milliseconds.
		if ep.band && j-i == 1 {
			pts := []vg.Point{{X: trX(e.T[i]), Y: trY(ep.val(e.Max[i]))}, {X: trX(e.T[i]), Y: trY(ep.val(e.Min[i]))}}
			c.StrokeLines(draw.LineStyle{Color: fill, Width: vg.Points(1.5)}, c.ClipLinesXY(pts)...)
		}
		for k0 := i; k0 < j-1 || k0 == i; k0 += chunkRows {
			k1 := min(k0+chunkRows+1, j) // rows [k0, k1)
			if ep.band && k1-k0 > 1 {
				poly := make([]vg.Point, 0, 2*(k1-k0))
				for k := k0; k < k1; k++ {
					poly = append(poly, vg.Point{X: trX(e.T[k]), Y: trY(ep.val(e.Max[k]))})
				}
				for k := k1 - 1; k >= k0; k-- {
					poly = append(poly, vg.Point{X: trX(e.T[k]), Y: trY(ep.val(e.Min[k]))})
				}
				if cp := c.ClipPolygonXY(poly); len(cp) > 2 {
					c.FillPolygon(fill, cp)
				}
			}
			pts := make([]vg.Point, 0, k1-k0+1)
			for k := k0; k < k1; k++ {
				pts = append(pts, vg.Point{X: trX(e.T[k]), Y: trY(ep.val(e.Mean[k]))})
			}
			if len(pts) == 1 { // an isolated row: a short tick so it is visible
				pts = append(pts, vg.Point{X: pts[0].X + vg.Points(1), Y: pts[0].Y})
			}
			c.StrokeLines(line, c.ClipLinesXY(pts)...)
		}
		i = j
	}
}

// clampLen keeps a transformed coordinate within a wide margin of [lo, hi]:
// far enough that clipping, not clamping, decides what shows, near enough
// that the fixed-point rasterizer never sees an overflow, Inf or NaN (which
// make it spin).
func clampLen(v, lo, hi vg.Length) vg.Length {
	const margin = 1e5
	switch {
	case v != v:
		return lo
	case v < lo-margin:
		return lo - margin
	case v > hi+margin:
		return hi + margin
	}
	return v
}

// chunkRows is how many envelope rows go in one path; see envelopePlot.Plot.
const chunkRows = 48

func (ep *envelopePlot) DataRange() (xmin, xmax, ymin, ymax float64) {
	xmin, xmax, ymin, ymax = math.Inf(1), math.Inf(-1), math.Inf(1), math.Inf(-1)
	for i, t := range ep.e.T {
		xmin, xmax = math.Min(xmin, t), math.Max(xmax, t)
		for _, v := range [...]float64{ep.e.Min[i], ep.e.Max[i], ep.e.Mean[i]} {
			if finite(v) {
				v = ep.val(v)
				ymin, ymax = math.Min(ymin, v), math.Max(ymax, v)
			}
		}
	}
	return xmin, xmax, ymin, ymax
}

// stateColor returns the background tint for a link/device power state. The
// order light→dark blue follows depth of sleep, so a chart reads at a glance.
func stateColor(state string) color.Color {
	switch strings.ToLower(state) {
	case "active":
		return color.NRGBA{0xf4, 0xc7, 0xc3, 0xff}
	case "idle":
		return color.NRGBA{0xe8, 0xe8, 0xe8, 0xff}
	case "partial":
		return color.NRGBA{0xfc, 0xe8, 0xb2, 0xff}
	case "slumber":
		return color.NRGBA{0xc8, 0xe6, 0xc9, 0xff}
	case "devslp":
		// Violet, not light blue: the min–max band is a light tint of the
		// trace colour (blue for the first drive) and must not read as DevSlp.
		return color.NRGBA{0xdc, 0xcc, 0xf0, 0xff}
	}
	// Unknown names get a stable tint derived from the name.
	var h uint32 = 2166136261
	for _, b := range []byte(strings.ToLower(state)) {
		h = (h ^ uint32(b)) * 16777619
	}
	return color.NRGBA{uint8(200 + h%40), uint8(200 + (h>>8)%40), uint8(215 + (h>>16)%40), 0xff}
}

// stateLabel is the legend text for a state, spelt as SATA documents it.
func stateLabel(s string) string {
	switch s = strings.ToLower(s); s {
	case "devslp":
		return "DevSlp"
	case "":
		return "(unnamed)"
	}
	r := []rune(s)
	return strings.ToUpper(string(r[:1])) + string(r[1:])
}

// stateOrder sorts known states by depth for the legend; unknown ones follow
// in name order.
func stateOrder(s string) int {
	switch strings.ToLower(s) {
	case "active":
		return 0
	case "idle":
		return 1
	case "partial":
		return 2
	case "slumber":
		return 3
	case "devslp":
		return 4
	}
	return 5
}

// statesPresent returns the distinct state names in spans, legend-ordered.
func statesPresent(spans ...[]StateSpan) []string {
	seen := map[string]bool{}
	var out []string
	for _, ss := range spans {
		for _, s := range ss {
			k := strings.ToLower(s.State)
			if !seen[k] && validSpan(s.Start, s.End) {
				seen[k] = true
				out = append(out, k)
			}
		}
	}
	sort.Slice(out, func(i, j int) bool {
		if a, b := stateOrder(out[i]), stateOrder(out[j]); a != b {
			return a < b
		}
		return out[i] < out[j]
	})
	return out
}

func validSpan(a, b float64) bool { return finite(a) && finite(b) && b >= a }

// stateBands shades the full height of the data area over each state span.
type stateBands struct{ spans []StateSpan }

func (s stateBands) Plot(c draw.Canvas, p *plot.Plot) {
	trX, _ := p.Transforms(&c)
	// Neighbouring spans of one state are drawn as one band: a state log
	// cut into one-second pieces would otherwise cost a fill per piece.
	var cur0, cur1 vg.Length
	var cur string
	open := false
	flush := func() {
		x0, x1 := max(cur0, c.Min.X), min(cur1, c.Max.X)
		if open && x1 > x0 {
			c.FillPolygon(stateColor(cur), []vg.Point{{X: x0, Y: c.Min.Y}, {X: x1, Y: c.Min.Y}, {X: x1, Y: c.Max.Y}, {X: x0, Y: c.Max.Y}})
		}
	}
	for _, sp := range s.spans {
		if !validSpan(sp.Start, sp.End) {
			continue
		}
		x0, x1 := clampLen(trX(sp.Start), c.Min.X, c.Max.X), clampLen(trX(sp.End), c.Min.X, c.Max.X)
		st := strings.ToLower(sp.State)
		if open && st == cur && x0 >= cur0 && x0 <= cur1+vg.Points(0.25) {
			cur1 = max(cur1, x1)
			continue
		}
		flush()
		cur0, cur1, cur, open = x0, x1, st, true
	}
	flush()
}

// ioBars draws busy intervals as bars in the middle of a strip. An interval
// narrower than a hairline is widened to one so a lone 4 KiB read still
// shows, and bars closer than that are merged so an hour of I/O draws as a
// few thousand rectangles, not millions.
type ioBars struct {
	iv    []Interval // sorted by Start
	color color.Color
}

func newIOBars(iv []Interval, clr color.Color) ioBars {
	s := make([]Interval, 0, len(iv))
	for _, v := range iv {
		if validSpan(v.Start, v.End) {
			s = append(s, v)
		}
	}
	sort.Slice(s, func(i, j int) bool { return s[i].Start < s[j].Start })
	return ioBars{iv: s, color: clr}
}

func (b ioBars) Plot(c draw.Canvas, p *plot.Plot) {
	trX, _ := p.Transforms(&c)
	y0 := c.Min.Y + (c.Max.Y-c.Min.Y)*0.2
	y1 := c.Max.Y - (c.Max.Y-c.Min.Y)*0.2
	minW := vg.Points(0.75)
	fill := func(x0, x1 vg.Length) {
		x0, x1 = max(x0, c.Min.X), min(x1, c.Max.X)
		if x1 > x0 {
			c.FillPolygon(b.color, []vg.Point{{X: x0, Y: y0}, {X: x1, Y: y0}, {X: x1, Y: y1}, {X: x0, Y: y1}})
		}
	}
	var cur0, cur1 vg.Length
	open := false
	for _, v := range b.iv {
		x0, x1 := clampLen(trX(v.Start), c.Min.X, c.Max.X), clampLen(trX(v.End), c.Min.X, c.Max.X)
		if x1-x0 < minW {
			x1 = x0 + minW
		}
		if open && x0 <= cur1+minW {
			cur1 = max(cur1, x1)
			continue
		}
		if open {
			fill(cur0, cur1)
		}
		cur0, cur1, open = x0, x1, true
	}
	if open {
		fill(cur0, cur1)
	}
}

// vlines draws annotations: a dashed vertical line at T with its text
// written upward beside it, reading from the top of the data area.
type vlines struct {
	notes []Annotation
	color color.Color
}

func (v vlines) Plot(c draw.Canvas, p *plot.Plot) {
	trX, _ := p.Transforms(&c)
	ls := draw.LineStyle{Color: v.color, Width: vg.Points(0.8), Dashes: []vg.Length{vg.Points(3), vg.Points(2)}}
	sty := textStyle(sans, noteSize)
	sty.Color = v.color
	sty.Rotation = math.Pi / 2
	sty.XAlign, sty.YAlign = draw.XRight, draw.YTop
	notes := make([]Annotation, 0, len(v.notes))
	for _, n := range v.notes {
		if finite(n.T) {
			notes = append(notes, n)
		}
	}
	sort.SliceStable(notes, func(i, j int) bool { return notes[i].T < notes[j].T })
	room := sty.Height("X") + vg.Points(3)
	// Labels sit right of their line, unless the next line is too close,
	// and then left, so two nearby events stay readable; a label that would
	// still overlap one already drawn is left out (its line stays), so a
	// burst of events does not pile up into an unreadable block.
	lastR := vg.Length(math.Inf(-1)) // right edge of the last label drawn
	for i, n := range notes {
		x := trX(n.T)
		if !(x >= c.Min.X && x <= c.Max.X) {
			continue
		}
		c.StrokeLine2(ls, x, c.Min.Y, x, c.Max.Y)
		if n.Text == "" {
			continue
		}
		s, dx := sty, vg.Points(1.5)
		left, right := x+dx, x+dx+room
		if i+1 < len(notes) && trX(notes[i+1].T)-x < room {
			s.YAlign, dx = draw.YBottom, -dx
			left, right = x+dx-room, x+dx
		}
		if left < lastR {
			continue
		}
		lastR = right
		// A white halo keeps the label readable where it crosses the trace.
		at := vg.Point{X: x + dx, Y: c.Max.Y - vg.Points(3)}
		halo := s
		halo.Color = color.White
		for _, d := range [...]vg.Point{{X: -1, Y: 0}, {X: 1, Y: 0}, {X: 0, Y: -1}, {X: 0, Y: 1}} {
			c.FillText(halo, vg.Point{X: at.X + d.X, Y: at.Y + d.Y}, n.Text)
		}
		c.FillText(s, at, n.Text)
	}
}

// hline is a horizontal reference line with a label above its right end.
type hline struct {
	y     float64
	text  string
	style draw.LineStyle
	left  bool // label at the left end instead
	below bool // label under the line instead
}

func (h hline) Plot(c draw.Canvas, p *plot.Plot) {
	_, trY := p.Transforms(&c)
	if !finite(h.y) {
		return
	}
	y := trY(h.y)
	if !(y >= c.Min.Y && y <= c.Max.Y) {
		return
	}
	c.StrokeLine2(h.style, c.Min.X, y, c.Max.X, y)
	if h.text != "" {
		sty := textStyle(sans, noteSize)
		sty.Color = h.style.Color
		sty.YAlign = draw.YBottom
		dy := vg.Points(1)
		if h.below {
			sty.YAlign, dy = draw.YTop, -dy
		}
		x := c.Max.X - vg.Points(2)
		sty.XAlign = draw.XRight
		if h.left {
			x, sty.XAlign = c.Min.X+vg.Points(2), draw.XLeft
		}
		c.FillText(sty, vg.Point{X: x, Y: y + dy}, h.text)
	}
}

// cornerText writes a label in the top-left corner of the data area.
type cornerText struct {
	text  string
	color color.Color
}

func (t cornerText) Plot(c draw.Canvas, _ *plot.Plot) {
	sty := textStyle(sansBold, noteSize)
	sty.Color = t.color
	sty.XAlign, sty.YAlign = draw.XLeft, draw.YCenter
	pt := vg.Point{X: c.Min.X + vg.Points(3), Y: (c.Min.Y + c.Max.Y) / 2}
	// A white backing keeps the label readable over bars and shading.
	r := sty.Rectangle(t.text).Add(pt)
	r.Min.X, r.Max.X = r.Min.X-vg.Points(1.5), r.Max.X+vg.Points(1.5)
	c.FillPolygon(color.NRGBA{255, 255, 255, 215}, []vg.Point{r.Min, {X: r.Max.X, Y: r.Min.Y}, r.Max, {X: r.Min.X, Y: r.Max.Y}})
	c.FillText(sty, pt, t.text)
}
