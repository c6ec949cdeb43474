package main

import (
	"github.com/spf13/cobra"

	"github.com/idlewatt/idlewatt/capture/notes"
)

func init() {
	register(func() *cobra.Command {
		c := &cobra.Command{
			Use:   "annotate CAPTURE --at T [--to T2] --text TEXT | --list",
			Short: "Put a note on a capture's time axis (kept beside it in CAPTURE.notes.jsonl)",
			Long: `Adds a note at T (or over T–T2), seconds on the report's timeline (the times
report.json, report.html and the live view show; 90, 1.5 or 1m30s), to
CAPTURE.notes.jsonl beside the capture. The capture itself is never
rewritten: the notes file is written anew through a temporary file renamed
into place, never through a symbolic link. Notes appear in report.json
("annotations"), report.md, report.html, the power chart and compare's
outputs the next time they are written (idlewatt report CAPTURE). --list
prints the capture's notes.`,
			Args: cobra.ExactArgs(1),
			RunE: func(cmd *cobra.Command, args []string) error {
				return notes.Annotate(get(cmd), args[0], cmd.OutOrStdout())
			},
		}
		declare(c.Flags(), notes.Flags...)
		return c
	})
}
