package chart

import (
	"bytes"
	"image/png"
	"math"
	"testing"
)

// Annotations are drawn in their green: a note at 10 s of 0–40 s puts a
// dashed line a quarter of the way across the plot, an interval note tints
// its span; without notes there is no such green.
func TestPowerUserNotes(t *testing.T) {
	e := Envelope{}
	for i := 0; i <= 400; i++ {
		e.T = append(e.T, float64(i)*0.1)
		e.Min, e.Max, e.Mean = append(e.Min, 0.4), append(e.Max, 0.4), append(e.Mean, 0.4)
	}
	green := func(o PowerOpts) (cols []int, width int) {
		f, err := PowerOverTime([]Trace{{Name: "d", Power: e}}, o)
		if err != nil {
			t.Fatal(err)
		}
		var b bytes.Buffer
		if err := f.Write(&b, "png"); err != nil {
			t.Fatal(err)
		}
		img, err := png.Decode(&b)
		if err != nil {
			t.Fatal(err)
		}
		bd := img.Bounds()
		for x := bd.Min.X; x < bd.Max.X; x++ {
			n := 0
			for y := bd.Min.Y; y < bd.Max.Y; y++ {
				r, g, bl, _ := img.At(x, y).RGBA()
				if int(g>>8) > int(r>>8)+30 && int(g>>8) > int(bl>>8)+30 { // the note green, anti-aliased
					n++
				}
			}
			if n > 20 {
				cols = append(cols, x)
			}
		}
		return cols, bd.Dx()
	}
	if cols, _ := green(PowerOpts{Size: Size{6, 3}}); len(cols) != 0 {
		t.Fatalf("annotation green without annotations at columns %v", cols)
	}
	cols, w := green(PowerOpts{Size: Size{6, 3}, Notes: []UserNote{{At: 10, To: math.NaN(), Text: "fan <b>on</b>"}}})
	if len(cols) == 0 || len(cols) > 4 {
		t.Fatalf("the note's line: green columns %v", cols)
	}
	// The plot area spans most of the image; 10 s of 40 s is about a
	// quarter of it, past the axis.
	if x := float64(cols[0]) / float64(w); x < 0.2 || x > 0.4 {
		t.Errorf("the note's line at %.2f of the width, want about a quarter into the plot", x)
	}
	tint, _ := green(PowerOpts{Size: Size{6, 3}, Notes: []UserNote{{At: 20, To: 30, Text: "door"}}})
	if len(tint) == 0 {
		t.Error("the interval note drew no line")
	}
}
