package main

import (
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/spf13/cobra"

	"github.com/idlewatt/idlewatt/capture"
	"github.com/idlewatt/idlewatt/capture/notes"
	"github.com/idlewatt/idlewatt/internal/outfile"
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
			RunE: runAnnotate,
		}
		f := c.Flags()
		durationFlag(f, "at", 0, "the note's time T (seconds on the report's timeline)")
		durationFlag(f, "to", 0, "end of the noted interval (after --at)")
		f.String("text", "", "the note (up to 2000 bytes of text)")
		f.Bool("list", false, "print the capture's notes instead")
		f.Bool("json", false, "with --list: as JSON")
		return c
	})
}

func runAnnotate(cmd *cobra.Command, args []string) error {
	path := args[0]
	// It must be a capture: a note beside anything else would never be
	// shown.
	r, err := capture.Open(path)
	if err != nil {
		return inputErr(fmt.Errorf("annotate: %w", err))
	}
	r.Close()
	if optBool(cmd, "list", "") {
		if optSet(cmd, "at", "") || optSet(cmd, "to", "") || optSet(cmd, "text", "") {
			return usageErr("annotate: --list takes no --at, --to or --text")
		}
		ns, err := notes.Read(path)
		if err != nil {
			return inputErr(fmt.Errorf("annotate: %w", err))
		}
		if optBool(cmd, "json", "") {
			if ns == nil {
				ns = []notes.Note{}
			}
			enc := json.NewEncoder(cmd.OutOrStdout())
			enc.SetIndent("", "  ")
			return enc.Encode(ns)
		}
		for _, n := range ns {
			fmt.Fprintln(cmd.OutOrStdout(), noteLine(n))
		}
		return nil
	}
	if !optSet(cmd, "at", "") {
		return usageErr("annotate: --at T is required (or --list)")
	}
	at, err := optDuration(cmd, "at", "")
	if err != nil {
		return err
	}
	n := notes.Note{AtS: at.Seconds(), Text: optString(cmd, "text", ""), Created: time.Now().UTC().Format(time.RFC3339), Source: "cli"}
	if optSet(cmd, "to", "") {
		to, err := optDuration(cmd, "to", "")
		if err != nil {
			return err
		}
		if to <= at {
			return usageErr("annotate: --to %g s is not after --at %g s", to.Seconds(), at.Seconds())
		}
		t := to.Seconds()
		n.ToS = &t
	}
	if err := notes.Check(n); err != nil {
		return usageErr("annotate: --text: %v", err)
	}
	all, err := notes.Add(path, n)
	switch {
	case errors.Is(err, notes.ErrFormat):
		return inputErr(fmt.Errorf("annotate: %w (fix or remove it; the note was not added)", err))
	case errors.Is(err, outfile.ErrRefused):
		return usageErr("annotate: %v", err)
	case err != nil:
		return failErr("annotate: %v", err)
	}
	fmt.Fprintf(cmd.OutOrStdout(), "%s: %s (%d notes)\n", notes.PathFor(path), noteLine(n), len(all))
	return nil
}

func noteLine(n notes.Note) string {
	at := fmt.Sprintf("%g s", n.AtS)
	if n.ToS != nil {
		at = fmt.Sprintf("%g–%g s", n.AtS, *n.ToS)
	}
	return fmt.Sprintf("%s: %q", at, n.Text)
}
