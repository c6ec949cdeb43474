package main

import (
	"errors"
	"fmt"
	"path/filepath"

	"github.com/spf13/cobra"

	"github.com/idlewatt/idlewatt/analysis"
	"github.com/idlewatt/idlewatt/internal/ctxio"
	"github.com/idlewatt/idlewatt/internal/outfile"
	"github.com/idlewatt/idlewatt/internal/textsafe"
	"github.com/idlewatt/idlewatt/report"
)

func init() {
	register(func() *cobra.Command {
		c := &cobra.Command{
			Use:   "plot CAPTURE --out FILE.png|FILE.svg",
			Short: "Power over time per drive (summaries when zoomed out, samples when zoomed in)",
			Args:  cobra.ExactArgs(1),
			RunE:  runPlot,
		}
		declare(c.Flags(), report.PlotFlags...)
		addImportFlags(c.Flags())
		return c
	})
}

func runPlot(cmd *cobra.Command, args []string) error {
	g := get(cmd)
	out, from, to, err := report.ReadPlotOut(g)
	if err != nil {
		return err
	}
	in, open, done, err := report.PlotInput(cmd.Context(), g, args[0], cmd.CommandPath(), "idlewatt "+version, cmd.ErrOrStderr(), to > from) // another meter's file: its summaries, or a capture of it
	if err != nil {
		return err
	}
	defer done()
	o := report.PlotOptions{From: from, To: to, Subtitle: filepath.Base(args[0]), Open: open, Stop: ctxio.Interrupted(cmd.Context())}
	oo := outOptions(cmd, args[0])
	if err := report.ReadPlot(g, &o, out, oo); err != nil {
		return err
	}
	if err := requireSamples(cmd, "plot", in); err != nil {
		return err
	}
	if o.Notes, err = report.PlotNotes(args[0]); err != nil {
		fmt.Fprintf(cmd.ErrOrStderr(), "plot: warning: annotations not drawn: %v\n", textsafe.Terminal(err.Error()))
	}
	png, err := drawPlot(cmd, args[0], in, out, o)
	if err != nil {
		return err
	}
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

// drawPlot draws the chart of in (the file path names, or a capture of
// it) in memory: a signal while it is read or drawn leaves no file (issue
// 26 item 1). The data notes report gives are said on stderr, word for
// word.
func drawPlot(cmd *cobra.Command, path, in, out string, o report.PlotOptions) ([]byte, error) {
	prog := startProgress(cmd, "plot")
	defer prog.Stop()
	var notes []string
	var png []byte
	err := cancellable(cmd, func() error {
		prog.Step("reading "+path, nil)
		var err error
		notes, png, err = report.RenderPlot(in, filepath.Ext(out), o)
		return err
	})
	if errors.Is(err, errInterrupted) {
		return nil, err
	}
	if errors.Is(err, report.ErrEmptyWindow) {
		return nil, usageErr("plot: --from/--to: %v; nothing written", err)
	}
	if errors.Is(err, analysis.ErrNoSuchPort) {
		return nil, usageErr("plot: --ports: %s: %v", path, err)
	}
	report.WriteNotes(cmd.ErrOrStderr(), "plot", notes)
	if err != nil {
		return nil, inputErr(err)
	}
	if err := o.Stop(); err != nil {
		return nil, err
	}
	return png, nil
}
