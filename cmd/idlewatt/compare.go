package main

import (
	"fmt"
	"path/filepath"

	"github.com/idlewatt/idlewatt/analysis"
	"github.com/idlewatt/idlewatt/internal/outfile"
	"github.com/spf13/cobra"
)

func init() {
	register(func() *cobra.Command {
		c := &cobra.Command{
			Use:   "compare REPORT.json... --out DIR",
			Short: "Side-by-side table and review-style bar charts across runs and drives",
			Args:  cobra.MinimumNArgs(1),
			RunE:  runCompare,
		}
		c.Flags().String("out", "compare", "output directory")
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
	if err := interrupted(cmd.Context())(); err != nil {
		return err
	}
	if err := analysis.CompareWith(reps, labels, out, oo); err != nil {
		return failErr("compare: %w", err)
	}
	for _, n := range analysis.CompareNotes(reps, labels) {
		cmd.Printf("note: %s\n", n)
	}
	cmd.Printf("comparison written to %s\n", out)
	return nil
}
