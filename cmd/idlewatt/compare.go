package main

import (
	"path/filepath"

	"github.com/idlewatt/idlewatt/analysis"
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
		return c
	})
}

func runCompare(cmd *cobra.Command, args []string) error {
	var reps []*analysis.Report
	var labels []string
	for _, a := range args {
		r, err := analysis.LoadJSON(a)
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
	out := optString(cmd, "out", "compare.out")
	if err := analysis.Compare(reps, labels, out); err != nil {
		return failErr("compare: %v", err)
	}
	for _, n := range analysis.CompareNotes(reps, labels) {
		cmd.Printf("note: %s\n", n)
	}
	cmd.Printf("comparison written to %s\n", out)
	return nil
}
