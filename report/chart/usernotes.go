package chart

import (
	"image/color"
	"math"
	"sort"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
)

// UserNote is a user's annotation on the time axis (capture/notes): at At
// s, over At–To when To > At. Its text is drawn as text, never read as
// markup.
type UserNote struct {
	At, To float64
	Text   string
}

// noteGreen is the annotations' colour, as report.html draws them.
var noteGreen = color.RGBA{R: 0x2e, G: 0x7d, B: 0x32, A: 0xff}

// userNotes draws annotations: a tinted band for an interval, a dashed
// line at its start, and the text along the top where it does not overlap
// the previous label (long text is cut with an ellipsis).
type userNotes struct{ notes []UserNote }

func (u userNotes) Plot(c draw.Canvas, p *plot.Plot) {
	trX, _ := p.Transforms(&c)
	ns := append([]UserNote(nil), u.notes...)
	sort.SliceStable(ns, func(i, j int) bool { return ns[i].At < ns[j].At })
	ls := draw.LineStyle{Color: noteGreen, Width: vg.Points(0.9), Dashes: []vg.Length{vg.Points(4), vg.Points(2)}}
	sty := textStyle(sans, noteSize)
	sty.Color = noteGreen
	sty.XAlign, sty.YAlign = draw.XLeft, draw.YTop
	lastR := vg.Length(math.Inf(-1))
	for _, n := range ns {
		if !finite(n.At) {
			continue
		}
		x := trX(n.At)
		if n.To > n.At && finite(n.To) {
			x0, x1 := max(x, c.Min.X), min(trX(n.To), c.Max.X)
			if x1 > x0 {
				c.FillPolygon(color.NRGBA{R: 0x2e, G: 0x7d, B: 0x32, A: 0x24}, []vg.Point{{X: x0, Y: c.Min.Y}, {X: x1, Y: c.Min.Y}, {X: x1, Y: c.Max.Y}, {X: x0, Y: c.Max.Y}})
			}
		}
		if !(x >= c.Min.X && x <= c.Max.X) {
			continue
		}
		c.StrokeLine2(ls, x, c.Min.Y, x, c.Max.Y)
		text := []rune(n.Text)
		for i, r := range text {
			if r == '\n' || r == '\t' {
				text[i] = ' '
			}
		}
		if len(text) > 40 {
			text = append(text[:39], '…')
		}
		at := vg.Point{X: x + vg.Points(2), Y: c.Max.Y - vg.Points(14)}
		if at.X < lastR {
			continue
		}
		lastR = at.X + sty.Width(string(text)) + vg.Points(4)
		halo := sty
		halo.Color = color.White
		for _, d := range [...]vg.Point{{X: -1, Y: 0}, {X: 1, Y: 0}, {X: 0, Y: -1}, {X: 0, Y: 1}} {
			c.FillText(halo, vg.Point{X: at.X + d.X, Y: at.Y + d.Y}, string(text))
		}
		c.FillText(sty, at, string(text))
	}
}
