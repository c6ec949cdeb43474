package chart

import (
	"bytes"
	"testing"

	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
	"gonum.org/v1/plot/vg/vgimg"
)

// oldPNG renders f as Write did before it skipped the PNG's page fill and
// reused the encoder's buffers: a page-sized white rectangle rasterised
// over vgimg's white canvas, then vgimg.PngCanvas's own writer.
func oldPNG(t *testing.T, f *Figure) []byte {
	t.Helper()
	c := vgimg.NewWith(vgimg.UseWH(f.Width, f.Height), vgimg.UseDPI(int(f.DPI)))
	cw := vgimg.PngCanvas{Canvas: c}
	dc := draw.New(cw)
	dc.SetColor(white)
	dc.Fill(dc.Rectangle.Path())
	f.draw(dc)
	var b bytes.Buffer
	if _, err := cw.WriteTo(&b); err != nil {
		t.Fatal(err)
	}
	return b.Bytes()
}

// TestPNGPageFillChangesNothing: Write's PNG is byte for byte what it was
// with the page fill and vgimg's encoder, for each kind of chart, at page
// sizes that are and are not whole pixels (a partly covered last row and
// column: white over white stays white at any coverage), written twice
// (the second time through reused encoder buffers).
func TestPNGPageFillChangesNothing(t *testing.T) {
	bars, err := ActiveIdlePower([]Bar{{Label: "a", Value: 0.4, Err: 0.01}, {Label: "b", Value: 0.2}}, "b")
	if err != nil {
		t.Fatal(err)
	}
	power, err := PowerOverTime(synthTraces(t), PowerOpts{Title: "Power", Unit: UnitAuto})
	if err != nil {
		t.Fatal(err)
	}
	hist, err := Histogram(synthHists(t), DistOpts{Title: "Power Distribution", Size: Size{6, 3}, LogY: true})
	if err != nil {
		t.Fatal(err)
	}
	cyc, err := DevSlpCycleChart(synthCycle(t), DevSlpOpts{})
	if err != nil {
		t.Fatal(err)
	}
	for name, f := range map[string]*Figure{"bars": bars, "power": power, "hist": hist, "devslp": cyc} {
		for _, size := range [][2]vg.Length{{f.Width, f.Height}, {4.013 * vg.Inch, 2.507 * vg.Inch}} {
			g := *f
			g.Width, g.Height = size[0], size[1]
			want := oldPNG(t, &g)
			for range 2 {
				var b bytes.Buffer
				if err := g.Write(&b, "png"); err != nil {
					t.Fatal(err)
				}
				if !bytes.Equal(b.Bytes(), want) {
					t.Fatalf("%s at %v × %v: %d bytes, not the %d bytes drawn with the page fill", name, size[0], size[1], b.Len(), len(want))
				}
			}
		}
	}
}
