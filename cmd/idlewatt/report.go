package main

import (
	"encoding/json"
	"fmt"

	"github.com/spf13/cobra"

	"github.com/idlewatt/idlewatt/internal/ctxio"
	"github.com/idlewatt/idlewatt/internal/outfile"
	"github.com/idlewatt/idlewatt/internal/progress"
	"github.com/idlewatt/idlewatt/internal/textsafe"
	"github.com/idlewatt/idlewatt/report"
	htmlreport "github.com/idlewatt/idlewatt/report/html"
)

func init() {
	register(func() *cobra.Command {
		c := &cobra.Command{
			Use:   "report CAPTURE",
			Short: "Metrics, report.json/report.md/summary.csv and charts from a capture",
			Args:  cobra.ExactArgs(1),
			RunE:  runReport,
		}
		declare(c.Flags(), report.ReportFlags...)
		addImportFlags(c.Flags())
		return c
	})
}

func runReport(cmd *cobra.Command, args []string) error {
	path := args[0]
	opts, err := report.AnalysisOptions(get(cmd))
	if err != nil {
		return err
	}
	out := get(cmd).String("out")
	if out == "" {
		out = path + ".report"
	}
	// Refuse before the analysis, not after it.
	oo := outOptions(cmd, path)
	if err := outfile.CheckDir(out); err != nil {
		return usageErr("report: --out %w", err)
	}
	withHTML := !get(cmd).Bool("no-html")
	files := append([]string(nil), report.Files...)
	if withHTML {
		files = append(files, htmlreport.FileName)
	}
	if err := outfile.CheckAll(out, files, oo); err != nil {
		return usageErr("report: %w", err)
	}
	in, done, err := meterFileInput(cmd, path, false) // another meter's file: a capture of it
	if err != nil {
		return err
	}
	defer done()
	if err := requireSamples(cmd, "report", in); err != nil {
		return err
	}
	prog := startProgress(cmd, "report")
	defer prog.Stop()
	r, outs, chartErr, err := readSession(cmd, path, in, prog).Build(cmd.Context(), opts, out, withHTML)
	if err != nil {
		return err
	}
	prog.Step("writing "+out, nil)
	oo.Inputs = append(oo.Inputs[:len(oo.Inputs):len(oo.Inputs)], path)
	if err := report.WriteOutputs(out, outs, oo, ctxio.Interrupted(cmd.Context())); err != nil {
		return failErr("writing report into %s: %w", out, err)
	}
	outputsPlaced(cmd)
	prog.Stop()
	if chartErr != nil {
		return failErr("writing report into %s: %w", out, chartErr)
	}
	w := cmd.OutOrStdout()
	if get(cmd).Bool("json") {
		enc := json.NewEncoder(w)
		enc.SetIndent("", "  ")
		if err := enc.Encode(r); err != nil {
			return err
		}
		return report.NoPower(path, out, r)
	}
	report.WriteHeadline(w, r)
	fmt.Fprintf(w, "report written to %s\n", textsafe.Terminal(out))
	return report.NoPower(path, out, r)
}

// readSession is cmd's read of the capture in (made of path): its
// progress line, and work a signal ends at once (cancellable).
func readSession(cmd *cobra.Command, path, in string, prog *progress.Line) report.Session {
	return report.Session{Path: path, In: in, Who: cmd.CommandPath(), Log: cmd.ErrOrStderr(), Progress: prog,
		Run: func(f func() error) error { return cancellable(cmd, f) }}
}
