package main

import (
	"encoding/json"
	"fmt"

	"github.com/spf13/cobra"

	"github.com/idlewatt/idlewatt/analysis"
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
	out := optString(cmd, "out", "report.out")
	if out == "" {
		out = path + ".report"
	}
	// Refuse before the analysis, not after it.
	oo := outOptions(cmd, "", path)
	if err := outfile.CheckDir(out); err != nil {
		return usageErr("report: --out %w", err)
	}
	withHTML := !optBool(cmd, "no-html", "")
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
	r, outs, chartErr, err := buildReport(cmd, prog, path, in, out, opts, withHTML)
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
	if optBool(cmd, "json", "") {
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

// buildReport analyses the capture in (made of the file path the user
// named) and builds every report file in memory — the analysis, every
// file, the charts, report.html — to be written only then, through
// temporary files renamed into place: a signal at any moment leaves
// nothing under a final name (issue 26 item 1). chartErr is a chart that
// failed when the rest was built.
func buildReport(cmd *cobra.Command, prog *progress.Line, path, in, out string, opts analysis.Options, withHTML bool) (r *analysis.Report, outs []report.Output, chartErr, err error) {
	open, at, err := captureOpener(cmd, in)
	if err != nil {
		return nil, nil, nil, err
	}
	stop := ctxio.Interrupted(cmd.Context())
	err = cancellable(cmd, func() error {
		var pyr *htmlreport.Pyramid
		if withHTML {
			pyr = htmlreport.NewPyramidFor(in, htmlreport.Budget{})
			opts.Samples = pyr
		}
		passes(prog, path, at)
		var err error
		if r, err = report.Analyze(cmd.Context(), open, in, cmd.CommandPath(), opts); err != nil {
			return err
		}
		r.Capture.Path = path
		if warn := report.AttachNotes(r, path); warn != "" {
			fmt.Fprintf(cmd.ErrOrStderr(), "%s: warning: %s\n", cmd.CommandPath(), warn)
		}
		prog.Step("building the report files and charts", nil)
		if outs, chartErr = report.Build(r, report.WriteOptions{Stop: stop}); outs == nil {
			return chartErr
		}
		if withHTML {
			prog.Step("building "+htmlreport.FileName, nil)
			b, err := htmlreport.Render(r, pyr, htmlreport.Options{Capture: in, Stop: stop}) // in: the capture made of another meter's file, not the file
			if err != nil {
				return failErr("writing %s into %s: %w", htmlreport.FileName, out, err)
			}
			outs = append(outs, report.Output{Name: htmlreport.FileName, Data: b})
		}
		return nil
	})
	return r, outs, chartErr, err
}
