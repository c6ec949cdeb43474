package chart

import (
	"bufio"
	"errors"
	"fmt"
	"image/color"
	"image/png"
	"io"
	"path/filepath"
	"strings"
	"sync"

	"github.com/idlewatt/idlewatt/internal/outfile"
	"gonum.org/v1/plot/font"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
	"gonum.org/v1/plot/vg/vgimg"
	"gonum.org/v1/plot/vg/vgsvg"
)

// ErrFormat is returned when an output path's extension names a format the
// package does not write.
var ErrFormat = errors.New("chart: unsupported image format (want .png or .svg)")

// ErrNoData is returned when a chart is asked for with nothing to draw, so a
// caller can skip the chart rather than fail the report.
var ErrNoData = errors.New("chart: no data to plot")

// Figure is a rendered-on-demand chart: the chart functions lay it out and
// validate their input, and Save or Write draw it. A Figure can be written any
// number of times, in any format.
type Figure struct {
	// Width and Height are the page size; DPI applies to PNG only.
	Width, Height vg.Length
	DPI           float64
	draw          func(c draw.Canvas)
}

// Size is a figure size in inches.
type Size struct{ W, H float64 }

func (s Size) or(def Size) Size {
	if s.W <= 0 || s.H <= 0 || !finite(s.W) || !finite(s.H) {
		return def
	}
	return s
}

func newFigure(s Size, dpi float64, fn func(c draw.Canvas)) *Figure {
	if !(dpi > 0) || dpi > 1200 {
		dpi = 96
	}
	return &Figure{Width: vg.Length(s.W) * vg.Inch, Height: vg.Length(s.H) * vg.Inch, DPI: dpi, draw: fn}
}

// Save writes f to path, choosing PNG or SVG by the extension (case
// insensitive), refusing an existing file (see SaveWith).
func (f *Figure) Save(path string) error { return f.SaveWith(path, outfile.Options{}) }

// SaveWith writes f to path as Save does, under o's rules
// (internal/outfile): an existing file only with o.Overwrite, never through
// a symbolic link or over one of o.Inputs. The file is written whole or not
// at all: a failed render leaves no truncated image under the final name
// and an old image as it was.
func (f *Figure) SaveWith(path string, o outfile.Options) error {
	format := strings.ToLower(strings.TrimPrefix(filepath.Ext(path), "."))
	if format != "png" && format != "svg" {
		return fmt.Errorf("%w: %q", ErrFormat, path)
	}
	out, err := outfile.Create(path, o)
	if err != nil {
		return err
	}
	defer out.Abort() // no-op after Commit
	bw := bufio.NewWriterSize(out, 1<<16)
	if err := f.Write(bw, format); err != nil {
		return fmt.Errorf("chart: rendering %s: %w", path, err)
	}
	if err := bw.Flush(); err != nil {
		return err
	}
	return out.Commit()
}

// pngCanvas writes its image as vgimg.PngCanvas does (image/png at the
// default compression: the same bytes) through an Encoder whose buffers —
// the zlib compressor, about 1 MB, and the row buffers — are reused from
// chart to chart instead of allocated and cleared for each.
type pngCanvas struct{ *vgimg.Canvas }

var pngEncoder = png.Encoder{BufferPool: &pngBuffers{}}

// pngBuffers is a png.EncoderBufferPool shared by the charts rendered
// concurrently.
type pngBuffers struct{ p sync.Pool }

func (b *pngBuffers) Get() *png.EncoderBuffer {
	e, _ := b.p.Get().(*png.EncoderBuffer)
	return e
}

func (b *pngBuffers) Put(e *png.EncoderBuffer) { b.p.Put(e) }

// WriteTo implements io.WriterTo.
func (c pngCanvas) WriteTo(w io.Writer) (int64, error) {
	wc := &countWriter{w: w}
	b := bufio.NewWriter(wc)
	if err := pngEncoder.Encode(b, c.Image()); err != nil {
		return wc.n, err
	}
	err := b.Flush()
	return wc.n, err
}

// countWriter counts the bytes written through it.
type countWriter struct {
	w io.Writer
	n int64
}

func (c *countWriter) Write(p []byte) (int, error) {
	n, err := c.w.Write(p)
	c.n += int64(n)
	return n, err
}

// svgCanvas draws nothing in a fully transparent colour: vgsvg divides a
// colour by its alpha, and a transparent one (a panel's background) was
// written as fill="#-8000000000000000-8000000000000000-8000000000000000",
// which SVG viewers refuse. Drawing nothing is what a transparent fill or
// stroke shows.
type svgCanvas struct {
	*vgsvg.Canvas
	clear bool // the current colour has alpha 0
}

func (c *svgCanvas) SetColor(clr color.Color) {
	c.clear = false
	if clr != nil {
		if _, _, _, a := clr.RGBA(); a == 0 {
			c.clear = true
		}
	}
	c.Canvas.SetColor(clr)
}

func (c *svgCanvas) Fill(p vg.Path) {
	if !c.clear {
		c.Canvas.Fill(p)
	}
}

func (c *svgCanvas) Stroke(p vg.Path) {
	if !c.clear {
		c.Canvas.Stroke(p)
	}
}

func (c *svgCanvas) FillString(f font.Face, pt vg.Point, text string) {
	if !c.clear {
		c.Canvas.FillString(f, pt, text)
	}
}

// Write renders f to w as "png" or "svg".
func (f *Figure) Write(w io.Writer, format string) (err error) {
	// The chart functions validate their input, but gonum/plot panics on
	// some ranges they may not foresee; a report must get an error instead.
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("chart: rendering failed: %v", r)
		}
	}()
	var cw vg.CanvasWriterTo
	isPNG := false
	switch strings.ToLower(format) {
	case "png":
		c := vgimg.NewWith(vgimg.UseWH(f.Width, f.Height), vgimg.UseDPI(int(f.DPI)))
		cw, isPNG = pngCanvas{Canvas: c}, true
	case "svg":
		cw = &svgCanvas{Canvas: vgsvg.New(f.Width, f.Height)}
	default:
		return fmt.Errorf("%w: %q", ErrFormat, format)
	}
	dc := draw.New(cw)
	// A white page: an SVG would otherwise be transparent, which renders
	// black in some viewers and in most slide decks. vgimg paints a PNG's
	// canvas white when it makes it, and white over white is white at any
	// coverage (freetype's painter: (0xff·(m−a)·0x101 + 0xffff·a)/m >> 8 =
	// 0xff), so the PNG skips rasterising a page-sized rectangle that would
	// change no pixel (a few ms a chart: TestPNGPageFillChangesNothing).
	dc.SetColor(white)
	if !isPNG {
		dc.Fill(dc.Rectangle.Path())
	}
	f.draw(dc)
	_, err = cw.WriteTo(w)
	return err
}
