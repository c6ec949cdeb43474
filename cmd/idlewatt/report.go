package main

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"time"

	"github.com/spf13/cobra"

	"github.com/idlewatt/idlewatt/analysis"
	"github.com/idlewatt/idlewatt/capture"
	"github.com/idlewatt/idlewatt/capture/notes"
	"github.com/idlewatt/idlewatt/internal/outfile"
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
		f := c.Flags()
		f.String("out", "", "output directory (default: CAPTURE's name + .report)")
		durationFlag(f, "settle", 500*time.Millisecond, "settle tail after each busy interval (config report.settle)")
		f.IntSlice("ports", nil, "only these drive ports")
		f.Bool("json", false, "print report.json to stdout instead of the headline")
		f.Bool("no-html", false, "do not write report.html (the interactive viewer)")
		durationFlag(f, "from", 0, "report only from T, seconds on the report's timeline (90, 1.5, 1m30s); every figure is then of the interval")
		durationFlag(f, "to", 0, "report only up to T (default: the end)")
		addOverwriteFlag(f, "report files already in --out")
		addImportFlags(f)
		return c
	})
}

func runReport(cmd *cobra.Command, args []string) error {
	path := args[0]
	opts := analysis.DefaultOptions()
	settle, err := optDuration(cmd, "settle", "report.settle")
	if err != nil {
		return err
	}
	opts.Settle = settle
	opts.Ports, _ = cmd.Flags().GetIntSlice("ports")
	// Every drive's levels are learned from the capture; a simulator
	// profile, even one the config names, is never read.
	opts.States = &analysis.StateOptions{}
	if opts.Window, err = reportWindow(cmd); err != nil {
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
	if err := requireSamples(cmd.Context(), cmd, "report", in); err != nil {
		return err
	}
	open, at, err := captureOpenerAt(cmd.Context(), cmd, in)
	if err != nil {
		return err
	}
	prog := startProgress(cmd, "report")
	defer prog.Stop()
	stop := interrupted(cmd.Context())
	// Everything is built in memory first — the analysis, every file, the
	// charts, report.html — and only then written, through temporary files
	// renamed into place once all are written: a signal at any moment leaves
	// nothing under a final name (issue 26 item 1).
	var r *analysis.Report
	var outs []report.Output
	var chartErr error
	err = cancellable(cmd, func() error {
		var pyr *htmlreport.Pyramid
		if withHTML {
			pyr = htmlreport.NewPyramidFor(in, htmlreport.Budget{})
			opts.Samples = pyr
		}
		prog.Passes(path, at)
		var err error
		if r, err = analyzeOpened(cmd, open, in, opts); err != nil {
			return err
		}
		r.Capture.Path = path
		attachAnnotations(cmd, r, path)
		prog.Step("building the report files and charts", nil)
		outs, chartErr = report.Build(r, report.WriteOptions{Stop: stop})
		if outs == nil {
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
	if err != nil {
		return err
	}
	prog.Step("writing "+out, nil)
	oo.Inputs = append(oo.Inputs[:len(oo.Inputs):len(oo.Inputs)], path)
	if err := report.WriteOutputs(out, outs, oo, stop); err != nil {
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
		return noPowerErr(path, out, r)
	}
	printHeadline(w, r)
	fmt.Fprintf(w, "report written to %s\n", textsafe.Terminal(out))
	return noPowerErr(path, out, r)
}

// noPowerErr is bad input (exit 2) when no drive of r has a single power
// sample — every drive lacks a rail, as when damage took one rail's
// samples: the report is written (its notes say why), but a report of
// nulls is not a measurement, and exit 0 would pass it off as one.
func noPowerErr(path, out string, r *analysis.Report) error {
	for _, d := range r.Drives {
		if d.Samples.Count > 0 {
			return nil
		}
	}
	return inputErr(fmt.Errorf("%s: no drive has a power sample (each lacks a rail; see the notes above); the report in %s holds only nulls", path, out))
}

// analyzeCapture runs analysis and maps its errors to exit codes.
func analyzeCapture(cmd *cobra.Command, path string, opts analysis.Options) (*analysis.Report, error) {
	open, err := captureOpener(cmd.Context(), cmd, path)
	if err != nil {
		return nil, err
	}
	return analyzeOpened(cmd, open, path, opts)
}

// analyzeOpened is analyzeCapture of a capture already opened for passes.
func analyzeOpened(cmd *cobra.Command, open analysis.Opener, path string, opts analysis.Options) (*analysis.Report, error) {
	r, err := analysis.AnalyzeSource(open, opts)
	if r != nil {
		r.Capture.Path = path
	}
	// A signal during the analysis ends a pass early, which the analysis
	// takes for a capture cut short and reports on; that report describes
	// the signal, not the capture, and is not written.
	if err := interrupted(cmd.Context())(); err != nil {
		return nil, err
	}
	switch {
	case err == nil:
		return r, nil
	case errors.Is(err, analysis.ErrNoSuchPort): // say which flag, and of which capture
		return nil, inputErr(fmt.Errorf("%s: --ports: %s: %w", cmd.Name(), path, err))
	case errors.Is(err, os.ErrNotExist), errors.Is(err, capture.ErrNotCapture), errors.Is(err, capture.ErrVersion),
		errors.Is(err, capture.ErrTruncated), errors.Is(err, capture.ErrInvalid), errors.Is(err, analysis.ErrNoSuchPort), errors.Is(err, analysis.ErrNoChannels),
		errors.Is(err, analysis.ErrOptions):
		return nil, inputErr(err)
	}
	return nil, inputErr(fmt.Errorf("%s: %w", path, err))
}

func printHeadline(w io.Writer, r *analysis.Report) {
	printDriveTable(w, r, "active idle", nil, true)
	for _, d := range r.Drives {
		if d.DevSlp.Outcome != "" {
			fmt.Fprintf(w, "DevSlp port %d: %s\n", d.Port, textsafe.Terminal(d.DevSlp.Verdict.String()))
		}
	}
	printDeclared(w, r)
	for _, n := range r.Notes {
		fmt.Fprintf(w, "note: %s\n", textsafe.Terminal(n))
	}
}

// printDeclared prints each declared figure beside the measured one.
func printDeclared(w io.Writer, r *analysis.Report) {
	for i := range r.Drives {
		d := &r.Drives[i]
		for _, f := range d.Declared {
			text, agree := f.Text(d)
			fmt.Fprintf(w, "declared: %s: %s: %s (%s)\n", d.Name, f.Name, text, agree)
		}
	}
}

// reportWindow reads --from and --to (nil: the whole capture).
func reportWindow(cmd *cobra.Command) (*analysis.Window, error) {
	if !optSet(cmd, "from", "") && !optSet(cmd, "to", "") {
		return nil, nil
	}
	from, err := optDuration(cmd, "from", "")
	if err != nil {
		return nil, err
	}
	to, err := optDuration(cmd, "to", "")
	if err != nil {
		return nil, err
	}
	w := &analysis.Window{FromS: from.Seconds()}
	if optSet(cmd, "to", "") {
		if to <= from {
			return nil, usageErr("report: --to %g s is not after --from %g s", to.Seconds(), from.Seconds())
		}
		w.ToS = to.Seconds()
	}
	return w, nil
}

// attachAnnotations puts the capture's notes (capture/notes) into the
// report — those that reach into its interval, when it has one. A notes
// file that cannot be read is said on stderr and in the report's notes;
// the report is still written.
func attachAnnotations(cmd *cobra.Command, r *analysis.Report, capturePath string) {
	ns, err := notes.Read(capturePath)
	if err != nil {
		msg := fmt.Sprintf("annotations not shown: %v", err)
		fmt.Fprintf(cmd.ErrOrStderr(), "%s: warning: %s\n", cmd.CommandPath(), msg)
		r.Notes = append(r.Notes, msg)
		return
	}
	if iv := r.Interval; iv != nil {
		var in []notes.Note
		for _, n := range ns {
			end := n.AtS
			if n.ToS != nil {
				end = *n.ToS
			}
			if end >= iv.FromS && n.AtS <= iv.ToS {
				in = append(in, n)
			}
		}
		ns = in
	}
	r.Annotations = ns
}
