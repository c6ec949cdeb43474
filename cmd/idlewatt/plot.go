package main

import (
	"fmt"
	"path/filepath"
	"strings"

	"github.com/idlewatt/idlewatt/analysis"
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
	oo := outOptions(cmd, "", args[0])
	if err := outfile.Check(out, oo); err != nil { // before reading the capture
		return usageErr("plot: --out %w", err)
	}
	notes, err := analysis.Plot(args[0], out, analysis.PlotOptions{From: from, To: to, Buckets: pts, Title: filepath.Base(args[0]), Open: open, Out: oo})
	for _, n := range notes { // the data notes report gives, word for word
		fmt.Fprintf(cmd.ErrOrStderr(), "plot: note: %s\n", n)
	}
	if err != nil {
		return inputErr(err)
	}
	cmd.Printf("%s\n", out)
	return nil
}
