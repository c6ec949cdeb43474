package main

import (
	"fmt"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/idlewatt/idlewatt/analysis"
	"github.com/idlewatt/idlewatt/internal/outfile"
	"github.com/spf13/cobra"
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
	if err := outfile.CheckAll(out, analysis.CompareFiles, oo); err != nil {
		return usageErr("compare: %w", err)
	}
	var reps []*analysis.Report
	var labels []string
	for _, a := range args {
		r, err := loadReportJSON(cmd.Context(), a)
		if err != nil {
			return inputErr(err)
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
	if err := analysis.CompareWith(reps, labels, base, out, oo); err != nil {
		return failErr("compare: %w", err)
	}
	for _, n := range analysis.CompareNotes(reps, labels) {
		cmd.Printf("note: %s\n", n)
	}
	cmd.Printf("comparison written to %s\n", out)
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
