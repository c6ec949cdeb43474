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
		f.Float64("width", 0, "image width in inches (0 = 10)")
		f.Float64("height", 0, "image height in inches (0 = 1 + 2.3 per drive)")
		f.Float64("dpi", 96, "PNG resolution in dots per inch (30-1200); 300 for print")
		f.Bool("log", false, "logarithmic power axis (mW floors and W bursts together)")
		f.String("unit", "auto", "power axis unit: W, mW or auto (mW when every value is below 1 W)")
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
	var size [2]float64
	for i, name := range []string{"width", "height"} {
		v, err := optFloat(cmd, name, "")
		if err != nil {
			return err
		}
		if v != 0 && (v < 1 || v > 100) {
			return usageErr("plot: --%s %g: want 1 to 100 inches (0 = default)", name, v)
		}
		size[i] = v
	}
	dpi, err := optFloat(cmd, "dpi", "")
	if err != nil {
		return err
	}
	if dpi < 30 || dpi > 1200 {
		return usageErr("plot: --dpi %g: want 30 to 1200", dpi)
	}
	if w, h := max(size[0], 10), max(size[1], 10); w*h*dpi*dpi > 2e8 {
		return usageErr("plot: --width %g --height %g at --dpi %g is over 200 megapixels", size[0], size[1], dpi)
	}
	unit := optString(cmd, "unit", "")
	switch strings.ToLower(unit) {
	case "w":
		unit = "W"
	case "mw":
		unit = "mW"
	case "auto", "":
		unit = ""
	default:
		return usageErr("plot: --unit %q: want W, mW or auto", unit)
	}
	oo := outOptions(cmd, "", args[0])
	if err := outfile.Check(out, oo); err != nil { // before reading the capture
		return usageErr("plot: --out %w", err)
	}
	notes, err := analysis.Plot(args[0], out, analysis.PlotOptions{From: from, To: to, Buckets: pts, Open: open, Out: oo,
		Size: chart.Size{W: size[0], H: size[1]}, DPI: dpi, LogY: optBool(cmd, "log", ""), Unit: unit})
	for _, n := range notes { // the data notes report gives, word for word
		fmt.Fprintf(cmd.ErrOrStderr(), "plot: note: %s\n", n)
	}
	if err != nil {
		return inputErr(err)
	}
	cmd.Printf("%s\n", out)
	return nil
}
