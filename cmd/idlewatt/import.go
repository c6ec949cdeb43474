package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/idlewatt/idlewatt/analysis"
	"github.com/idlewatt/idlewatt/capture"
	"github.com/idlewatt/idlewatt/capture/importer"
	"github.com/idlewatt/idlewatt/internal/outfile"
	meterfiles "github.com/idlewatt/idlewatt/meter/files"
	"github.com/idlewatt/idlewatt/units"
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
		f := c.Flags()
		f.String("out", "", "the capture to write (required)")
		addImportFlags(f)
		f.String("name", "", "the drive's name in the capture (default: FILE's name without its extension)")
		f.Int("port", 1, "the drive port of the file's channel")
		f.Bool("json", false, "print what was imported as JSON")
		addOverwriteFlag(f, "CAPTURE")
		return c
	})
}

// addImportFlags adds the settings a meter file may need to the commands
// that read one (import, and report, plot and export given a meter file).
func addImportFlags(f *pflag.FlagSet) {
	f.Float64("voltage", 0, "meter files without voltage (PPK2 export): the rail voltage of every sample, in V")
	f.String("devslp-line", "", "meter files: the digital line wired to the DEVSLP pin (D0–D7, gpi[0]–gpi[3], GPI1 …)")
	f.String("marker-line", "", "meter files: a digital line the host drives high during I/O")
	f.Float64("rate", 0, "meter files without timestamps: their sample rate, in S/s")
	f.Bool("d7-first", false, "PPK2 export from Power Profiler 3.0.0–3.1.0, whose digital string is D7 first")
}

// importOptions reads addImportFlags' flags.
func importOptions(cmd *cobra.Command) (meterfiles.Options, error) {
	var o meterfiles.Options
	v, err := optFloat(cmd, "voltage", "")
	if err != nil {
		return o, err
	}
	r, err := optFloat(cmd, "rate", "")
	if err != nil {
		return o, err
	}
	if v < 0 || r < 0 {
		return o, usageErr("--voltage and --rate must not be negative")
	}
	o.Voltage, o.Rate = units.Volts(v), units.Hertz(r)
	o.DevSlpLine = optString(cmd, "devslp-line", "")
	o.MarkerLine = optString(cmd, "marker-line", "")
	o.D7First = optBool(cmd, "d7-first", "")
	if f := cmd.Flags().Lookup("port"); f != nil {
		p, err := optInt(cmd, "port", "")
		if err != nil {
			return o, err
		}
		if p < 1 || p > capture.MaxPort {
			return o, usageErr("--port %d: want 1 … %d", p, capture.MaxPort)
		}
		o.Port = p
	}
	return o, nil
}

// importErr maps an import's error to an exit code.
func importErr(who string, err error) error {
	switch {
	case err == nil:
		return nil
	case errors.Is(err, errInterrupted):
		return err
	case errors.Is(err, outfile.ErrRefused):
		return usageErr("%s: --out %w", who, err)
	case errors.Is(err, meterfiles.ErrMalformed), errors.Is(err, meterfiles.ErrUnknownFormat), errors.Is(err, meterfiles.ErrOptions),
		errors.Is(err, os.ErrNotExist), errors.Is(err, capture.ErrInvalid):
		return inputErr(fmt.Errorf("%s: %w", who, err))
	}
	return failErr("%s: %w", who, err)
}

func runImport(cmd *cobra.Command, args []string) error {
	in, out := args[0], optString(cmd, "out", "")
	if out == "" {
		return usageErr("import: --out CAPTURE is required")
	}
	fo, err := importOptions(cmd)
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
		return usageErr("import: %s is %s, not a regular file", in, describeMode(fi.Mode()))
	}
	res, err := importer.Import(cmd.Context(), in, out, importer.Options{Options: fo, Name: optString(cmd, "name", ""),
		Overwrite: oo.Overwrite, Tool: "idlewatt " + version})
	if err != nil {
		return importErr("import", err)
	}
	w := cmd.OutOrStdout()
	if optBool(cmd, "json", "") {
		enc := json.NewEncoder(w)
		enc.SetIndent("", "  ")
		return enc.Encode(map[string]any{"file": in, "format": res.Format, "capture": res.Out, "rate_hz": res.Rate,
			"samples": res.Samples, "missing_samples": res.Missing, "duration_s": res.Rate.Span(float64(res.Span)),
			"logic_events": res.Events, "io_spans": res.IO, "notes": res.Notes})
	}
	printImport(w, in, res)
	for _, n := range res.Notes {
		fmt.Fprintf(w, "note: %s\n", n)
	}
	fmt.Fprintf(w, "capture written to %s\n", res.Out)
	return nil
}

func printImport(w io.Writer, in string, res *importer.Result) {
	fmt.Fprintf(w, "%s: %s, %d samples at %g S/s (%.3f s), %d missing, %d logic events, %d I/O spans\n",
		in, res.Format, res.Samples, res.Rate, res.Rate.Span(float64(res.Span)), res.Missing, res.Events, res.IO)
}

func describeMode(m os.FileMode) string {
	if m.IsDir() {
		return "a directory"
	}
	return fileKind(m)
}

// meterFileInput lets report, plot and export take another meter's file:
// a regular file that is no capture but one of meter/files' formats is
// imported into a temporary capture (removed by done), whose path is
// returned; anything else is returned as it is, for the command's own
// checks. The import's summary goes to stderr, and its notes too if notes
// (report and plot repeat them from the capture themselves).
func meterFileInput(cmd *cobra.Command, path string, notes bool) (string, func(), error) {
	none := func() {}
	fi, err := os.Stat(path)
	if err != nil || !fi.Mode().IsRegular() || isCapture(path) || meterfiles.Sniff(path) == nil {
		return path, none, nil
	}
	fo, err := importOptions(cmd)
	if err != nil {
		return "", none, err
	}
	dir, err := os.MkdirTemp("", "idlewatt-import-")
	if err != nil {
		return "", none, failErr("%s: reading %s: %w", cmd.Name(), path, err)
	}
	done := func() { os.RemoveAll(dir) }
	tmp := filepath.Join(dir, filepath.Base(path)+".iwcap")
	res, err := importer.Import(cmd.Context(), path, tmp, importer.Options{Options: fo, Tool: "idlewatt " + version})
	if err != nil {
		done()
		return "", none, importErr(cmd.Name(), err)
	}
	e := cmd.ErrOrStderr()
	fmt.Fprintf(e, "%s: ", cmd.Name())
	printImport(e, path, res)
	if notes {
		for _, n := range res.Notes {
			fmt.Fprintf(e, "%s: note: %s%s\n", cmd.Name(), importer.NotePrefix, n)
		}
	}
	return tmp, done, nil
}

// isCapture reports whether the file starts with the capture magic.
func isCapture(path string) bool {
	f, err := os.Open(path)
	if err != nil {
		return false
	}
	defer f.Close()
	var b [8]byte
	n, _ := io.ReadFull(f, b[:])
	return n == 8 && strings.HasPrefix(string(b[:]), "\x89IWC")
}

// plotInput is meterFileInput for plot: a JLS file with a power signal is
// drawn from its own summary levels (importer.Overview: its samples are
// read only if the chart needs them), anything else as meterFileInput
// gives it. It returns the path to check and the opener of the passes.
func plotInput(cmd *cobra.Command, path string, zoomed bool) (string, analysis.Opener, func(), error) {
	none := func() {}
	if fi, err := os.Stat(path); err == nil && fi.Mode().IsRegular() && !zoomed {
		if f := meterfiles.Sniff(path); f != nil && f.Name == "jls" {
			fo, err := importOptions(cmd)
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
				return "", nil, none, importErr(cmd.Name(), err)
			}
		}
	}
	in, done, err := meterFileInput(cmd, path, false)
	if err != nil {
		return "", nil, none, err
	}
	open, err := captureOpener(cmd.Context(), cmd, in)
	if err != nil {
		done()
		return "", nil, none, err
	}
	return in, open, done, nil
}
