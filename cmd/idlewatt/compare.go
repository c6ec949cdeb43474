package main

import (
	"path/filepath"

	"github.com/spf13/cobra"

	"github.com/idlewatt/idlewatt/analysis"
	"github.com/idlewatt/idlewatt/internal/ctxio"
	"github.com/idlewatt/idlewatt/internal/outfile"
	"github.com/idlewatt/idlewatt/internal/textsafe"
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
		declare(c.Flags(), report.CompareFlags...)
		return c
	})
}

func runCompare(cmd *cobra.Command, args []string) error {
	g := get(cmd)
	out, withHTML, caps := g.String("out"), g.Bool("html"), g.List("capture")
	oo := outOptions(cmd, args...)
	if err := outfile.CheckDir(out); err != nil {
		return usageErr("compare: --out %w", err)
	}
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
	reps, labels, err := report.CompareInputs(cmd.Context(), args)
	if err != nil {
		return err
	}
	base, err := report.CompareBaseline(g.String("baseline"), labels)
	if err != nil {
		return usageErr("compare: --baseline %w", err)
	}
	if err := ctxio.Interrupted(cmd.Context())(); err != nil {
		return err
	}
	var runs []htmlreport.CompareRun
	if withHTML { // before anything is written: a missing or mismatched capture is bad input
		if runs, err = report.CompareRuns(cmd.Context(), cmd.CommandPath(), args, caps, reps, labels, &oo); err != nil {
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
