package main

import (
	"fmt"
	"path/filepath"
	"strings"

	"github.com/idlewatt/idlewatt/analysis"
	"github.com/idlewatt/idlewatt/analysis/chart"
	"github.com/idlewatt/idlewatt/internal/outfile"
	"github.com/spf13/cobra"
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
		durationFlag(f, "from", 0, "start T from the stream start (90s, 1m30s, or seconds: 90)")
		durationFlag(f, "to", 0, "end T from the stream start (0 = the end)")
		f.Int("points", 2000, "envelope points")
		f.Float64("width", 0, "image width in inches (default 10)")
		f.Float64("height", 0, "image height in inches (default 1 + 2.3 per drive)")
		f.Float64("dpi", 96, "PNG resolution, dots per inch (e.g. 300 for print)")
		f.Bool("log", false, "logarithmic power axis (mW idle states and W bursts on one chart)")
		f.String("unit", "auto", "power unit: W, mW or auto (mW when everything is below 1 W)")
		f.String("title", "Power over time", "chart title (the capture's name is the subtitle)")
		addOverwriteFlag(f, "the --out image")
		return c
	})
}

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
	open, err := captureOpener(cmd.Context(), cmd, args[0])
	if err != nil {
		return err
	}
	if to != 0 && to <= from {
		return usageErr("plot: --to %g must be after --from %g", to, from)
	}
	pts, err := optInt(cmd, "points", "plot.points")
	if err != nil {
		return err
	}
	var size [3]float64
	for i, n := range []string{"width", "height", "dpi"} {
		v, err := optFloat(cmd, n, "")
		if err != nil {
			return err
		}
		if v < 0 || (n != "dpi" && v > 100) || (n == "dpi" && (v < 10 || v > 2400)) {
			return usageErr("plot: --%s %g is out of range (width and height 0–100 in, dpi 10–2400)", n, v)
		}
		size[i] = v
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
		return usageErr("plot: --out %w", err)
	}
	notes, err := analysis.Plot(args[0], out, analysis.PlotOptions{From: from, To: to, Buckets: pts,
		Title: optString(cmd, "title", ""), Subtitle: filepath.Base(args[0]),
		Width: size[0], Height: size[1], DPI: size[2], LogY: optBool(cmd, "log", ""), Unit: unit, Open: open, Out: oo})
	for _, n := range notes { // the data notes report gives, word for word
		fmt.Fprintf(cmd.ErrOrStderr(), "plot: note: %s\n", n)
	}
	if err != nil {
		return inputErr(err)
	}
	cmd.Printf("%s\n", out)
	return nil
}
