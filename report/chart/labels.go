package chart

import (
	"fmt"
	"image/color"
	"sort"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
)

// labelStrip writes event labels (phase starts, pin edges) as horizontal
// text in a strip of its own above the data, stacking a label into the next
// row down when it would run into its neighbour. Labels written into the
// data area sit on the trace and, where events crowd, on each other; here
// they cannot. Each label has a short dashed stem down to its time; the
// panels below draw the full dashed line (vlines with labels off).
type labelStrip struct {
	notes   []Annotation // finite T, non-empty text, sorted by T, no duplicates
	color   color.Color
	maxRows int
}

func newLabelStrip(notes []Annotation, clr color.Color) *labelStrip {
	seen := map[Annotation]bool{}
	var ns []Annotation
	for _, n := range notes {
		if finite(n.T) && n.Text != "" && !seen[n] {
			seen[n] = true
			ns = append(ns, n)
		}
	}
	sort.SliceStable(ns, func(i, j int) bool { return ns[i].T < ns[j].T })
	return &labelStrip{notes: ns, color: clr, maxRows: 8}
}

func (l *labelStrip) style() draw.TextStyle {
	sty := textStyle(sans, noteSize)
	sty.Color = l.color
	sty.XAlign, sty.YAlign = draw.XLeft, draw.YTop
	return sty
}

func (l *labelStrip) rowHeight() vg.Length { return l.style().Height("Xg") + vg.Points(1.5) }

type placedLabel struct {
	x, x0 vg.Length // event position, text's left edge
	row   int       // -1: no room
	text  string
}

// layout places the labels for an axis transform over [lo, hi] and returns
// them with the number of rows used.
func (l *labelStrip) layout(trX func(float64) vg.Length, lo, hi vg.Length) ([]placedLabel, int) {
	sty := l.style()
	gap := vg.Points(4)
	var ends []vg.Length // right edge of the last label in each row
	var out []placedLabel
	rows := 0
	last := map[string]vg.Length{} // where each text was last placed
	for _, n := range l.notes {
		x := trX(n.T)
		if !(x >= lo && x <= hi) {
			continue
		}
		// The same event of several drives (a phase starts on each a
		// fraction of a millisecond apart) is one label.
		if px, ok := last[n.Text]; ok && x-px < vg.Points(4) {
			continue
		}
		last[n.Text] = x
		w := sty.Width(n.Text)
		x0 := x + vg.Points(2)
		if x0+w > hi { // no room to the right: end the text at the line
			x0 = x - vg.Points(2) - w
		}
		x0 = max(x0, lo)
		row := -1
		for r, e := range ends {
			if x0 >= e+gap {
				row = r
				break
			}
		}
		if row < 0 && len(ends) < l.maxRows {
			ends = append(ends, 0)
			row = len(ends) - 1
		}
		if row >= 0 {
			ends[row] = x0 + w
			rows = max(rows, row+1)
		}
		out = append(out, placedLabel{x: x, x0: x0, row: row, text: n.Text})
	}
	return out, rows
}

// height returns the strip's data height for a data area w wide over the
// time range [x0, x1].
func (l *labelStrip) height(x0, x1 float64, w vg.Length) vg.Length {
	if !(x1 > x0) || !(w > 0) {
		return 0
	}
	// w is measured before the panels' margins are aligned, which narrows
	// the data area by up to the widest axis labels: count rows for a
	// narrower strip, so the rows drawn never outnumber the rows reserved.
	w *= 0.85
	tr := func(t float64) vg.Length { return vg.Length((t - x0) / (x1 - x0) * float64(w)) }
	_, rows := l.layout(tr, 0, w)
	if l.hidden(tr, 0, w) > 0 {
		rows = max(rows, 1)
	}
	return vg.Length(rows)*l.rowHeight() + vg.Points(3)
}

func (l *labelStrip) hidden(trX func(float64) vg.Length, lo, hi vg.Length) int {
	ps, _ := l.layout(trX, lo, hi)
	n := 0
	for _, p := range ps {
		if p.row < 0 {
			n++
		}
	}
	return n
}

func (l *labelStrip) Plot(c draw.Canvas, p *plot.Plot) {
	trX, _ := p.Transforms(&c)
	ps, _ := l.layout(trX, c.Min.X, c.Max.X)
	sty := l.style()
	rh := l.rowHeight()
	stem := draw.LineStyle{Color: l.color, Width: vg.Points(0.6), Dashes: []vg.Length{vg.Points(2), vg.Points(1.5)}}
	hidden := 0
	for _, pl := range ps {
		if pl.row < 0 {
			hidden++
			continue
		}
		top := c.Max.Y - rh*vg.Length(pl.row)
		c.FillText(sty, vg.Point{X: pl.x0, Y: top}, pl.text)
		c.StrokeLine2(stem, pl.x, top-rh+vg.Points(1), pl.x, c.Min.Y)
	}
	if hidden > 0 {
		s := sty
		s.XAlign = draw.XRight
		s.Color = axisColor
		c.FillText(s, vg.Point{X: c.Max.X, Y: c.Min.Y + rh}, fmt.Sprintf("+%d labels not shown", hidden))
	}
}

// stripPlot returns the plot that carries a label strip over [x0, x1]: no
// axes, no grid.
func (l *labelStrip) plot(x0, x1 float64) *plot.Plot {
	p := newPlot()
	p.Add(l)
	p.X.Min, p.X.Max = x0, x1
	p.Y.Min, p.Y.Max = 0, 1
	p.HideAxes()
	return p
}

// labelPanel is a frame panel sized to the rows its labels need.
func labelPanel(l *labelStrip, x0, x1 float64) panel {
	return panel{p: l.plot(x0, x1), height: func(w vg.Length) vg.Length {
		return l.height(x0, x1, w)
	}}
}
