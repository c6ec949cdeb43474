package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/idlewatt/idlewatt/analysis"
	"github.com/idlewatt/idlewatt/capture/importer"
	"github.com/idlewatt/idlewatt/internal/ctxio"
	"github.com/idlewatt/idlewatt/internal/outfile"
	"github.com/idlewatt/idlewatt/internal/settings"
	meterfiles "github.com/idlewatt/idlewatt/meter/files"
	"github.com/idlewatt/idlewatt/report"
)

func init() {
	register(func() *cobra.Command {
		c := &cobra.Command{
			Use:   "import FILE --out CAPTURE",
			Short: "Turn another meter's file (PPK2 CSV export, Joulescope JLS, Otii CSV export) into a capture",
			Long: `Reads FILE — a Nordic Power Profiler (PPK2) CSV export, a Joulescope JLS v2
file or an Otii CSV export, detected from its content — and writes CAPTURE,
which report, plot and export read like a recording (they also take FILE
directly). Samples, gaps, rates and units are the file's; its digital lines
are kept as logic events, and one may be named the drive's DEVSLP pin
(--devslp-line D3) and one an I/O marker (--marker-line D4: high = the host
is doing I/O). What the format cannot carry is said in notes, in the capture
and in its report. docs/meters.md lists the formats, with examples.`,
			Args: cobra.ExactArgs(1),
			RunE: runImport,
		}
		declare(c.Flags(), settings.Flag{Name: "out", Kind: settings.String, Help: "the capture to write (required)"})
		declare(c.Flags(), importer.Flags...)
		declare(c.Flags(), settings.Flag{Name: "name", Kind: settings.String, Help: "the drive's name in the capture (default: FILE's name without its extension)"},
			settings.Flag{Name: "port", Kind: settings.Int, Default: 1, Help: "the drive port of the file's channel"},
			settings.Flag{Name: "json", Kind: settings.Bool, Help: "print what was imported as JSON"}, outfile.Flag("CAPTURE", ""))
		return c
	})
}

// addImportFlags adds the settings a meter file may need to the commands
// that read one (report, plot and export given a meter file).
func addImportFlags(f *pflag.FlagSet) { declare(f, importer.Flags...) }

func runImport(cmd *cobra.Command, args []string) error {
	in, out := args[0], optString(cmd, "out", "")
	if out == "" {
		return usageErr("import: --out CAPTURE is required")
	}
	fo, err := importer.FileOptions(get(cmd))
	if err != nil {
		return err
	}
	oo := outOptions(cmd, "", in)
	if err := outfile.Check(out, oo); err != nil {
		return usageErr("import: --out %w", err)
	}
	if fi, err := os.Stat(in); err != nil {
		return inputErr(fmt.Errorf("import: %w", err))
	} else if !fi.Mode().IsRegular() {
		return usageErr("import: %s is %s, not a regular file", in, ctxio.FileKind(fi.Mode()))
	}
	res, err := importer.Import(cmd.Context(), in, out, importer.Options{Options: fo, Name: optString(cmd, "name", ""),
		Overwrite: oo.Overwrite, Tool: "idlewatt " + version})
	if err != nil {
		return importer.Classify("import", err)
	}
	w := cmd.OutOrStdout()
	if optBool(cmd, "json", "") {
		enc := json.NewEncoder(w)
		enc.SetIndent("", "  ")
		return enc.Encode(map[string]any{"file": in, "format": res.Format, "capture": res.Out, "rate_hz": res.Rate,
			"samples": res.Samples, "missing_samples": res.Missing, "duration_s": float64(res.Span) / res.Rate,
			"logic_events": res.Events, "io_spans": res.IO, "notes": res.Notes})
	}
	fmt.Fprintln(w, res.Summary(in))
	for _, n := range res.Notes {
		fmt.Fprintf(w, "note: %s\n", n)
	}
	fmt.Fprintf(w, "capture written to %s\n", res.Out)
	return nil
}

// meterFileInput lets report, plot and export take another meter's file
// (importer.Temp): the path of a temporary capture of it (removed by done),
// or path itself. The import's summary goes to stderr, and its notes too
// if notes (report and plot repeat them from the capture themselves).
func meterFileInput(cmd *cobra.Command, path string, notes bool) (string, func(), error) {
	tmp, res, done, err := importer.Temp(cmd.Context(), path, cmd.Name(), func() (meterfiles.Options, error) {
		return importer.FileOptions(get(cmd))
	}, "idlewatt "+version)
	if err != nil || res == nil {
		return tmp, done, err
	}
	e := cmd.ErrOrStderr()
	fmt.Fprintf(e, "%s: %s\n", cmd.Name(), res.Summary(path))
	if notes {
		for _, n := range res.Notes {
			fmt.Fprintf(e, "%s: note: %s%s\n", cmd.Name(), importer.NotePrefix, n)
		}
	}
	return tmp, done, nil
}

// plotInput is meterFileInput for plot: a JLS file with a power signal is
// drawn from its own summary levels (importer.Overview: its samples are
// read only if the chart needs them), anything else as meterFileInput
// gives it. It returns the path to check and the opener of the passes.
func plotInput(cmd *cobra.Command, path string, zoomed bool) (string, analysis.Opener, func(), error) {
	none := func() {}
	if fi, err := os.Stat(path); err == nil && fi.Mode().IsRegular() && !zoomed {
		if f := meterfiles.Sniff(path); f != nil && f.Name == "jls" {
			fo, err := importer.FileOptions(get(cmd))
			if err != nil {
				return "", nil, none, err
			}
			ov, err := importer.OpenOverview(cmd.Context(), path, importer.Options{Options: fo, Tool: "idlewatt " + version})
			switch {
			case err == nil:
				open := func() (analysis.Source, error) {
					if err := context.Cause(cmd.Context()); err != nil {
						return nil, err
					}
					return ov.Source(), nil
				}
				return path, open, func() { ov.Close() }, nil
			case !errors.Is(err, importer.ErrNoOverview):
				return "", nil, none, importer.Classify(cmd.Name(), err)
			}
		}
	}
	in, done, err := meterFileInput(cmd, path, false)
	if err != nil {
		return "", nil, none, err
	}
	open, _, err := report.Opener(cmd.Context(), in, cmd.CommandPath())
	if err != nil {
		done()
		return "", nil, none, err
	}
	return in, open, done, nil
}
