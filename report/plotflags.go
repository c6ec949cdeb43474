package report

// `idlewatt plot`'s settings, declared once and checked here before the
// capture is read: the limits that keep a chart drawable live beside the
// options they guard.

import (
	"errors"
	"fmt"
	"github.com/idlewatt/idlewatt/units"
	"math"
	"os"
	"path/filepath"
	"strings"

	capnotes "github.com/idlewatt/idlewatt/capture/notes"
	"github.com/idlewatt/idlewatt/internal/outfile"
	"github.com/idlewatt/idlewatt/internal/settings"
	"github.com/idlewatt/idlewatt/report/chart"
)

// PlotFlags are `idlewatt plot`'s settings (with capture/importer's).
var PlotFlags = []settings.Flag{
	{Name: "out", Kind: settings.String, Help: "output image, .png or .svg (required)"},
	{Name: "from", Kind: settings.Duration, Help: "start T from the stream start (90s, 1m30s; a bare number is refused)"},
	{Name: "to", Kind: settings.Duration, Help: "end T from the stream start (0 = the end)"},
	{Name: "points", Key: "plot.points", Kind: settings.Int, Default: 2000, Help: "envelope points"},
	{Name: "width", Kind: settings.Float, Help: "image width in inches (default 10)"},
	{Name: "height", Kind: settings.Float, Help: "image height in inches (default 1 + 2.3 per drive)"},
	{Name: "dpi", Kind: settings.Float, Default: 96.0, Help: "PNG resolution, dots per inch (e.g. 300 for print)"},
	{Name: "log", Kind: settings.Bool, Help: "logarithmic power axis (mW idle states and W bursts on one chart)"},
	{Name: "unit", Kind: settings.String, Default: "auto", Help: "power unit: W, mW or auto (mW when everything is below 1 W)"},
	{Name: "title", Kind: settings.String, Help: "chart title (default: \"Power over Time: \" and the drives' names; the capture's name is the subtitle)"},
	{Name: "ports", Kind: settings.Ints, Help: fmt.Sprintf("only these drive ports, in this order (at most %d drives are drawn; default: the first %d)", MaxChartDrives, MaxChartDrives)},
	outfile.Flag("the --out image", ""),
}

// maxPlotPixels bounds a plot PNG (200 Mpx: 800 MB while it is drawn).
const maxPlotPixels = 200_000_000

// maxPlotPoints bounds --points: a chart has far fewer pixels, and
// --points 9223372036854775807 panicked allocating the envelope.
const maxPlotPoints = 100000

// ReadPlotOut reads the image plot writes (--out) and its window
// (--from, --to, seconds from the stream start).
func ReadPlotOut(g settings.Getter) (out string, from, to units.Seconds, err error) {
	out = g.String("out")
	if out == "" {
		return "", 0, 0, settings.Usagef("plot: --out FILE.png or FILE.svg is required")
	}
	if ext := strings.ToLower(filepath.Ext(out)); ext != ".png" && ext != ".svg" {
		return "", 0, 0, settings.Usagef("plot: --out %s: want a .png or .svg file", out)
	}
	fromD, err := g.Duration("from")
	if err != nil {
		return "", 0, 0, err
	}
	toD, err := g.Duration("to")
	if err != nil {
		return "", 0, 0, err
	}
	return out, units.SecondsOf(fromD), units.SecondsOf(toD), nil
}

// ReadPlot reads and checks the rest of plot's settings into o (whose
// From and To ReadPlotOut read) for the image out, and checks out can be
// written under oo before the capture is read.
func ReadPlot(g settings.Getter, o *PlotOptions, out string, oo outfile.Options) error {
	o.Ports = g.Ints("ports")
	if len(o.Ports) > MaxChartDrives {
		return settings.Usagef("plot: --ports names %d drives; a chart draws at most %d", len(o.Ports), MaxChartDrives)
	}
	if o.To != 0 && o.To <= o.From {
		return settings.Usagef("plot: --to %g must be after --from %g", o.To, o.From)
	}
	var err error
	if o.Buckets, err = g.Int("points"); err != nil {
		return err
	}
	if pts := o.Buckets; pts < 0 || pts == 1 || pts > maxPlotPoints { // 0: the default
		return settings.Usagef("plot: --points %d: want 2 to %d envelope points (0 or unset: 2000)", pts, maxPlotPoints)
	}
	if err := readSize(g, o, out); err != nil {
		return err
	}
	switch u := g.String("unit"); strings.ToLower(u) {
	case "auto", "":
		o.Unit = chart.UnitAuto
	case "w":
		o.Unit = chart.UnitW
	case "mw":
		o.Unit = chart.UnitMW
	default:
		return settings.Usagef("plot: --unit %q: want W, mW or auto", u)
	}
	o.Title, o.LogY = g.String("title"), g.Bool("log")
	if err := outfile.Check(out, oo); err != nil { // before reading the capture
		if !errors.Is(err, outfile.ErrRefused) {
			return fmt.Errorf("plot: --out %w", err) // as export and trace gen: the path cannot be written
		}
		return settings.Usagef("plot: --out %w", err)
	}
	// The chart is written only after the capture is read: a directory that
	// is not there is found now, and is the failure export and trace gen
	// give (it used to come after the analysis, as bad input).
	if fi, err := os.Stat(filepath.Dir(out)); err != nil {
		return fmt.Errorf("plot: --out %s: %w", out, err)
	} else if !fi.IsDir() {
		return fmt.Errorf("plot: --out %s: %s is not a directory", out, filepath.Dir(out))
	}
	return nil
}

// readSize reads --width, --height and --dpi: 0 is the default size; below
// 1 in the chart is a sliver (--width 0.01 gave an image 1 pixel wide,
// exit 0); and a PNG is a bitmap in memory before it is written: 100 × 100
// in at 1200 dpi would be 14 G pixels, 58 GB.
func readSize(g settings.Getter, o *PlotOptions, out string) error {
	var size [3]float64
	for i, n := range []string{"width", "height", "dpi"} {
		v, err := g.Float(n)
		if err != nil {
			return err
		}
		if v < 0 || (n != "dpi" && (v > 100 || (v > 0 && v < 1))) || (n == "dpi" && (v < 10 || v > 1200)) {
			return settings.Usagef("plot: --%s %g is out of range (width and height 1–100 in or 0 for the default, dpi 10–1200)", n, v)
		}
		size[i] = v
	}
	if strings.EqualFold(filepath.Ext(out), ".png") {
		w, h := size[0], size[1]
		if w == 0 {
			w = 10
		}
		if h == 0 { // 10 in stands in for the height, which depends on the drive count
			h = 10
		}
		if px := w * h * size[2] * size[2]; px > maxPlotPixels {
			return settings.Usagef("plot: --width %g --height %g at --dpi %g is %.0f megapixels, over the %d the PNG may have", w, h, size[2], px/1e6, maxPlotPixels/1000000)
		}
	}
	o.Width, o.Height, o.DPI = size[0], size[1], size[2]
	return nil
}

// PlotNotes are the capture's annotations (capture/notes) as the chart
// draws them; a notes file that cannot be read is a warning, and none are
// drawn.
func PlotNotes(capturePath string) ([]chart.UserNote, error) {
	ns, err := capnotes.Read(capturePath)
	if err != nil {
		return nil, err
	}
	var out []chart.UserNote
	for _, n := range ns {
		u := chart.UserNote{At: n.AtS, To: math.NaN(), Text: n.Text}
		if n.ToS != nil {
			u.To = *n.ToS
		}
		out = append(out, u)
	}
	return out, nil
}
