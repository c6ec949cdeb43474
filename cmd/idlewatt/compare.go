package main

import (
	"fmt"
	"math"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/spf13/cobra"

	"github.com/idlewatt/idlewatt/analysis"
	"github.com/idlewatt/idlewatt/internal/outfile"
	"github.com/idlewatt/idlewatt/internal/textsafe"
	meterfiles "github.com/idlewatt/idlewatt/meter/files"
	"github.com/idlewatt/idlewatt/report"
	htmlreport "github.com/idlewatt/idlewatt/report/html"
)

func init() {
	register(func() *cobra.Command {
		c := &cobra.Command{
			Use:   "compare REPORT.json... --out DIR [--baseline N|NAME]",
			Short: "Side-by-side table, deltas against a baseline run and review-style bar charts across runs and drives",
			Args:  cobra.MinimumNArgs(1),
			RunE:  runCompare,
		}
		c.Flags().String("out", "compare", "output directory")
		c.Flags().String("baseline", "1", "run the deltas are against: its position among the arguments (1 = first) or its label (the report's directory name)")
		c.Flags().Bool("html", false, "also write compare.html: every run's power with its min–max envelope and I/O, state and DEVSLP strips on one time axis, a selection tool, the delta table and linked tables (re-reads each run's capture)")
		c.Flags().StringArray("capture", nil, "with --html: the capture of each REPORT.json, in the same order (repeat once per report); default each report's capture.path")
		addOverwriteFlag(c.Flags(), "comparison files already in --out")
		return c
	})
}

// maxCompareDrives bounds the rows of one comparison (drives summed over
// every report).
const maxCompareDrives = 500

func runCompare(cmd *cobra.Command, args []string) error {
	out := optString(cmd, "out", "compare.out")
	oo := outOptions(cmd, "", args...)
	if err := outfile.CheckDir(out); err != nil {
		return usageErr("compare: --out %w", err)
	}
	withHTML := optBool(cmd, "html", "compare.html")
	caps, _ := cmd.Flags().GetStringArray("capture")
	if len(caps) > 0 && !withHTML {
		return usageErr("compare: --capture is only for --html")
	}
	if len(caps) > 0 && len(caps) != len(args) {
		return usageErr("compare: %d --capture for %d reports: give one per REPORT.json, in the same order", len(caps), len(args))
	}
	files := append([]string(nil), report.CompareFiles...)
	if withHTML {
		files = append(files, htmlreport.CompareFileName)
	}
	if err := outfile.CheckAll(out, files, oo); err != nil {
		return usageErr("compare: %w", err)
	}
	var reps []*analysis.Report
	var labels []string
	for _, a := range args {
		r, err := loadReportJSON(cmd.Context(), a)
		if err != nil {
			return inputErr(err)
		}
		// Before anything is drawn: an impossible headline value is bad
		// input, named by file and key (docs/cli.md, compare).
		if err := analysis.CheckCompareInput(r); err != nil {
			return inputErr(fmt.Errorf("compare: %s: %w", a, err))
		}
		reps = append(reps, r)
		label := filepath.Base(filepath.Dir(a))
		if label == "." || label == "/" {
			label = filepath.Base(a)
		}
		labels = append(labels, label)
	}
	rows := 0
	for _, r := range reps {
		rows += len(r.Drives)
	}
	if rows > maxCompareDrives {
		// A 25,000-drive report.json drew for 90 s, deaf to SIGTERM, into
		// 25 MB charts.
		return usageErr("compare: %d drives across the reports; at most %d fit one table and chart", rows, maxCompareDrives)
	}
	base, err := compareBaseline(optString(cmd, "baseline", "compare.baseline"), labels)
	if err != nil {
		return usageErr("compare: --baseline %w", err)
	}
	if err := interrupted(cmd.Context())(); err != nil {
		return err
	}
	var runs []htmlreport.CompareRun
	if withHTML {
		// Before anything is written: a missing or mismatched capture is
		// bad input, not a half-written comparison.
		if runs, err = compareRuns(cmd, args, caps, reps, labels, &oo); err != nil {
			return err
		}
	}
	if err := report.CompareWith(reps, labels, base, out, oo); err != nil {
		return failErr("compare: %w", err)
	}
	if withHTML {
		if err := htmlreport.WriteCompare(filepath.Join(out, htmlreport.CompareFileName), runs, base, analysis.CompareNotes(reps, labels), oo); err != nil {
			return failErr("compare: %w", err)
		}
	}
	for _, n := range analysis.CompareNotes(reps, labels) {
		cmd.Printf("note: %s\n", textsafe.Terminal(n))
	}
	cmd.Printf("comparison written to %s\n", textsafe.Terminal(out))
	return nil
}

// compareBaseline resolves --baseline to an index into labels: a number
// 1..len(labels) is a position (it wins over a run labelled the same), else
// the one run with that label.
func compareBaseline(v string, labels []string) (int, error) {
	if n, err := strconv.Atoi(v); err == nil {
		if n < 1 || n > len(labels) {
			return 0, fmt.Errorf("%d: there are %d runs (1..%d)", n, len(labels), len(labels))
		}
		return n - 1, nil
	}
	found := -1
	for i, l := range labels {
		if l != v {
			continue
		}
		if found >= 0 {
			return 0, fmt.Errorf("%q names runs %d and %d; give the position", v, found+1, i+1)
		}
		found = i
	}
	if found < 0 {
		return 0, fmt.Errorf("%q: no run has that label (runs: %s)", v, strings.Join(labels, ", "))
	}
	return found, nil
}

// compareRuns re-reads each report's capture into a pyramid for
// compare.html: the capture given with --capture, else the report's
// capture.path (as written, else relative to the report's directory, else
// its file name in the report's directory, for a run directory moved
// after the run). The
// numbers stay the report's; the capture only gives the trace, and must be
// the one the report was computed from (the same drives and sample counts).
// Each capture joins oo's inputs.
func compareRuns(cmd *cobra.Command, args, caps []string, reps []*analysis.Report, labels []string, oo *outfile.Options) ([]htmlreport.CompareRun, error) {
	var runs []htmlreport.CompareRun
	for i, r := range reps {
		var path string
		if len(caps) > 0 {
			path = caps[i]
		} else {
			path = r.Capture.Path
			if path == "" {
				return nil, usageErr("compare: --html: %s names no capture (capture.path); give it with --capture", args[i])
			}
			// A relative capture.path is relative to where the run was
			// made (demo, measure), else to the report; a run directory
			// moved elsewhere still holds its capture beside report.json.
			if _, err := os.Stat(path); err != nil {
				dir := filepath.Dir(args[i])
				var alts []string
				if !filepath.IsAbs(path) {
					alts = append(alts, filepath.Join(dir, path))
				}
				for _, alt := range append(alts, filepath.Join(dir, filepath.Base(path))) {
					if _, err := os.Stat(alt); err == nil {
						path = alt
						break
					}
				}
			}
		}
		if _, err := os.Stat(path); err != nil {
			return nil, usageErr("compare: --html: the capture of %s: %w (give it with --capture)", args[i], err)
		}
		if !isCapture(path) && meterfiles.Sniff(path) != nil {
			// A report made straight from another meter's file: compare has
			// no import flags (--voltage, lines) to read it again with.
			return nil, usageErr("compare: --html: %s (the source of %s) is another meter's file, not a capture: import it (idlewatt import %s --out %s.iwcap), report that capture, and compare those reports", path, args[i], path, path)
		}
		opts := analysis.DefaultOptions()
		opts.States = &analysis.StateOptions{}
		// The runs share one report.html's size budget.
		pyr := htmlreport.NewPyramidFor(path, htmlreport.CompareBudget(len(reps)))
		opts.Samples = pyr
		again, err := analyzeCapture(cmd, path, opts)
		if err != nil {
			return nil, err
		}
		if err := sameRun(r, again); err != nil {
			return nil, usageErr("compare: --html: %s is not the capture of %s: %w", path, args[i], err)
		}
		oo.Inputs = append(oo.Inputs, path) // never written over
		runs = append(runs, htmlreport.CompareRun{Label: labels[i], Report: r, Pyramid: pyr, Capture: path})
	}
	return runs, nil
}

// sameRun says how a re-analysed capture differs from the report: another
// drive, another number of samples or another energy (which no analysis
// option changes).
func sameRun(r, again *analysis.Report) error {
	if len(r.Drives) != len(again.Drives) {
		return fmt.Errorf("%d drives, the report has %d", len(again.Drives), len(r.Drives))
	}
	for k := range r.Drives {
		d, e := &r.Drives[k], &again.Drives[k]
		if d.Port != e.Port || d.Name != e.Name || d.Samples.Count != e.Samples.Count {
			return fmt.Errorf("port %d %q with %d samples, the report has port %d %q with %d", e.Port, e.Name, e.Samples.Count, d.Port, d.Name, d.Samples.Count)
		}
		dj, ej := float64(d.EnergyJ), float64(e.EnergyJ)
		if !(dj == ej || math.Abs(dj-ej) <= 1e-9*math.Abs(dj) || (math.IsNaN(dj) && math.IsNaN(ej))) {
			return fmt.Errorf("port %d %q drew %.9g J, the report says %.9g J", e.Port, e.Name, e.EnergyJ, d.EnergyJ)
		}
	}
	return nil
}
