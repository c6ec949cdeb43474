package main

import (
	"errors"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"strings"

	"github.com/spf13/cobra"

	"github.com/idlewatt/idlewatt/analysis"
	capnotes "github.com/idlewatt/idlewatt/capture/notes"
	"github.com/idlewatt/idlewatt/internal/ctxio"
	"github.com/idlewatt/idlewatt/internal/outfile"
	"github.com/idlewatt/idlewatt/internal/textsafe"
	"github.com/idlewatt/idlewatt/report"
	"github.com/idlewatt/idlewatt/report/chart"
)

func init() {
	register(func() *cobra.Command {
		c := &cobra.Command{
			Use:   "plot CAPTURE --out FILE.png|FILE.svg",
			Short: "Power over time per drive (summaries when zoomed out, samples when zoomed in)",
			Args:  cobra.ExactArgs(1),
			RunE:  runPlot,
		}
		f := c.Flags()
		f.String("out", "", "output image, .png or .svg (required)")
		durationFlag(f, "from", 0, "start T from the stream start (90s, 1m30s; a bare number is refused)")
		durationFlag(f, "to", 0, "end T from the stream start (0 = the end)")
		f.Int("points", 2000, "envelope points")
		f.Float64("width", 0, "image width in inches (default 10)")
		f.Float64("height", 0, "image height in inches (default 1 + 2.3 per drive)")
		f.Float64("dpi", 96, "PNG resolution, dots per inch (e.g. 300 for print)")
		f.Bool("log", false, "logarithmic power axis (mW idle states and W bursts on one chart)")
		f.String("unit", "auto", "power unit: W, mW or auto (mW when everything is below 1 W)")
		f.String("title", "", "chart title (default: \"Power over Time: \" and the drives' names; the capture's name is the subtitle)")
		f.IntSlice("ports", nil, fmt.Sprintf("only these drive ports, in this order (at most %d drives are drawn; default: the first %d)", report.MaxChartDrives, report.MaxChartDrives))
		addOverwriteFlag(f, "the --out image")
		addImportFlags(f)
		return c
	})
}

// maxPlotPixels bounds a plot PNG (200 Mpx: 800 MB while it is drawn).
const maxPlotPixels = 200_000_000

// maxPlotPoints bounds --points: a chart has far fewer pixels, and
// --points 9223372036854775807 panicked allocating the envelope.
const maxPlotPoints = 100000

func runPlot(cmd *cobra.Command, args []string) error {
	out := optString(cmd, "out", "")
	if out == "" {
		return usageErr("plot: --out FILE.png or FILE.svg is required")
	}
	if ext := strings.ToLower(filepath.Ext(out)); ext != ".png" && ext != ".svg" {
		return usageErr("plot: --out %s: want a .png or .svg file", out)
	}
	fromD, err := optDuration(cmd, "from", "")
	if err != nil {
		return err
	}
	toD, err := optDuration(cmd, "to", "")
	if err != nil {
		return err
	}
	from, to := fromD.Seconds(), toD.Seconds()
	in, open, done, err := plotInput(cmd, args[0], to > from) // another meter's file: its summaries, or a capture of it
	if err != nil {
		return err
	}
	defer done()
	ports, _ := cmd.Flags().GetIntSlice("ports")
	if len(ports) > report.MaxChartDrives {
		return usageErr("plot: --ports names %d drives; a chart draws at most %d", len(ports), report.MaxChartDrives)
	}
	if to != 0 && to <= from {
		return usageErr("plot: --to %g must be after --from %g", to, from)
	}
	pts, err := optInt(cmd, "points", "plot.points")
	if err != nil {
		return err
	}
	if pts < 0 || pts == 1 || pts > maxPlotPoints { // 0: the default
		return usageErr("plot: --points %d: want 2 to %d envelope points (0 or unset: 2000)", pts, maxPlotPoints)
	}
	var size [3]float64
	for i, n := range []string{"width", "height", "dpi"} {
		v, err := optFloat(cmd, n, "")
		if err != nil {
			return err
		}
		// 0 = the default size; below 1 in the chart is a sliver (--width
		// 0.01 gave an image 1 pixel wide, exit 0).
		if v < 0 || (n != "dpi" && (v > 100 || (v > 0 && v < 1))) || (n == "dpi" && (v < 10 || v > 1200)) {
			return usageErr("plot: --%s %g is out of range (width and height 1–100 in or 0 for the default, dpi 10–1200)", n, v)
		}
		size[i] = v
	}
	// A PNG is a bitmap in memory before it is written: 100 × 100 in at
	// 1200 dpi would be 14 G pixels, 58 GB. (0 = the default size; 10 in
	// stands in for the height, which depends on the drive count.)
	if strings.EqualFold(filepath.Ext(out), ".png") {
		w, h := size[0], size[1]
		if w == 0 {
			w = 10
		}
		if h == 0 {
			h = 10
		}
		if px := w * h * size[2] * size[2]; px > maxPlotPixels {
			return usageErr("plot: --width %g --height %g at --dpi %g is %.0f megapixels, over the %d the PNG may have", w, h, size[2], px/1e6, maxPlotPixels/1000000)
		}
	}
	var unit chart.PowerUnit
	switch u := optString(cmd, "unit", ""); strings.ToLower(u) {
	case "auto", "":
		unit = chart.UnitAuto
	case "w":
		unit = chart.UnitW
	case "mw":
		unit = chart.UnitMW
	default:
		return usageErr("plot: --unit %q: want W, mW or auto", u)
	}
	oo := outOptions(cmd, "", args[0])
	if err := outfile.Check(out, oo); err != nil { // before reading the capture
		if !errors.Is(err, outfile.ErrRefused) {
			return failErr("plot: --out %w", err) // as export and trace gen: the path cannot be written
		}
		return usageErr("plot: --out %w", err)
	}
	// The chart is written only after the capture is read: a directory that
	// is not there is found now, and is the failure export and trace gen
	// give (it used to come after the analysis, as bad input).
	if fi, err := os.Stat(filepath.Dir(out)); err != nil {
		return failErr("plot: --out %s: %w", out, err)
	} else if !fi.IsDir() {
		return failErr("plot: --out %s: %s is not a directory", out, filepath.Dir(out))
	}
	if err := requireSamples(cmd, "plot", in); err != nil {
		return err
	}
	var userNotes []chart.UserNote
	if ns, err := capnotes.Read(args[0]); err != nil {
		fmt.Fprintf(cmd.ErrOrStderr(), "plot: warning: annotations not drawn: %v\n", textsafe.Terminal(err.Error()))
	} else {
		for _, n := range ns {
			u := chart.UserNote{At: n.AtS, To: math.NaN(), Text: n.Text}
			if n.ToS != nil {
				u.To = *n.ToS
			}
			userNotes = append(userNotes, u)
		}
	}
	prog := startProgress(cmd, "plot")
	defer prog.Stop()
	stop := ctxio.Interrupted(cmd.Context())
	// The chart is drawn in memory and written only then: a signal while
	// it is read or drawn leaves no file (issue 26 item 1).
	var notes []string
	var png []byte
	err = cancellable(cmd, func() error {
		prog.Step("reading "+args[0], nil)
		var err error
		notes, png, err = report.RenderPlot(in, filepath.Ext(out), report.PlotOptions{From: from, To: to, Buckets: pts, Notes: userNotes,
			Title: optString(cmd, "title", ""), Subtitle: filepath.Base(args[0]), Ports: ports,
			Width: size[0], Height: size[1], DPI: size[2], LogY: optBool(cmd, "log", ""), Unit: unit, Open: open, Stop: stop})
		return err
	})
	if errors.Is(err, errInterrupted) {
		return err
	}
	if errors.Is(err, report.ErrEmptyWindow) {
		return usageErr("plot: --from/--to: %v; nothing written", err)
	}
	if errors.Is(err, analysis.ErrNoSuchPort) {
		return usageErr("plot: --ports: %s: %v", args[0], err)
	}
	for _, n := range notes { // the data notes report gives, word for word
		fmt.Fprintf(cmd.ErrOrStderr(), "plot: note: %s\n", textsafe.Terminal(n))
	}
	if err != nil {
		return inputErr(err)
	}
	if err := stop(); err != nil {
		return err
	}
	prog.Stop()
	oo.Inputs = append(oo.Inputs[:len(oo.Inputs):len(oo.Inputs)], args[0])
	if err := outfile.WriteFile(out, png, oo); err != nil {
		if errors.Is(err, outfile.ErrRefused) {
			return usageErr("plot: --out %w", err)
		}
		return failErr("plot: --out %w", err)
	}
	outputsPlaced(cmd)
	cmd.Printf("%s\n", textsafe.Terminal(out))
	return nil
}
