package main

import (
	"encoding/json"
	"fmt"
	"os"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/idlewatt/idlewatt/capture/importer"
	"github.com/idlewatt/idlewatt/internal/ctxio"
	"github.com/idlewatt/idlewatt/internal/outfile"
	"github.com/idlewatt/idlewatt/internal/settings"
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
	in, out := args[0], get(cmd).String("out")
	if out == "" {
		return usageErr("import: --out CAPTURE is required")
	}
	fo, err := importer.FileOptions(get(cmd))
	if err != nil {
		return err
	}
	oo := outOptions(cmd, in)
	if err := outfile.Check(out, oo); err != nil {
		return usageErr("import: --out %w", err)
	}
	if fi, err := os.Stat(in); err != nil {
		return inputErr(fmt.Errorf("import: %w", err))
	} else if !fi.Mode().IsRegular() {
		return usageErr("import: %s is %s, not a regular file", in, ctxio.FileKind(fi.Mode()))
	}
	res, err := importer.Import(cmd.Context(), in, out, importer.Options{Options: fo, Name: get(cmd).String("name"),
		Overwrite: oo.Overwrite, Tool: "idlewatt " + version})
	if err != nil {
		return importer.Classify("import", err)
	}
	w := cmd.OutOrStdout()
	if get(cmd).Bool("json") {
		enc := json.NewEncoder(w)
		enc.SetIndent("", "  ")
		return enc.Encode(map[string]any{"file": in, "format": res.Format, "capture": res.Out, "rate_hz": res.Rate,
			"samples": res.Samples, "missing_samples": res.Missing, "duration_s": res.Rate.Span(float64(res.Span)),
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
// (importer.Input): the path of a temporary capture of it (removed by
// done), or path itself.
func meterFileInput(cmd *cobra.Command, path string, notes bool) (string, func(), error) {
	return importer.Input(cmd.Context(), get(cmd), path, cmd.Name(), "idlewatt "+version, cmd.ErrOrStderr(), notes)
}
