package importer

// The command line's side of an import: the settings a meter file may need
// (declared once: `idlewatt import`, and report, plot and export given a
// meter file), the classes of an import's errors, its one-line summary, and
// a temporary capture of a meter file for a command that reads captures.

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"

	"github.com/idlewatt/idlewatt/capture"
	"github.com/idlewatt/idlewatt/internal/ctxio"
	"github.com/idlewatt/idlewatt/internal/outfile"
	"github.com/idlewatt/idlewatt/internal/settings"
	"github.com/idlewatt/idlewatt/meter/files"
	"github.com/idlewatt/idlewatt/units"
)

// Flags are the settings a meter file may need (import, and report, plot
// and export given a meter file).
var Flags = []settings.Flag{
	{Name: "voltage", Kind: settings.Float, Help: "meter files without voltage (PPK2 export): the rail voltage of every sample, in V"},
	{Name: "devslp-line", Kind: settings.String, Help: "meter files: the digital line wired to the DEVSLP pin (D0–D7, gpi[0]–gpi[3], GPI1 …)"},
	{Name: "marker-line", Kind: settings.String, Help: "meter files: a digital line the host drives high during I/O"},
	{Name: "rate", Kind: settings.Float, Help: "meter files without timestamps: their sample rate, in S/s"},
	{Name: "d7-first", Kind: settings.Bool, Help: "PPK2 export from Power Profiler 3.0.0–3.1.0, whose digital string is D7 first"},
}

// FileOptions reads Flags (and --port, where the command has it: import's
// drive port) through g.
func FileOptions(g settings.Getter) (files.Options, error) {
	var o files.Options
	v, err := g.Float("voltage")
	if err != nil {
		return o, err
	}
	r, err := g.Float("rate")
	if err != nil {
		return o, err
	}
	if v < 0 || r < 0 {
		return o, settings.Usagef("--voltage and --rate must not be negative")
	}
	o.Voltage, o.Rate = units.Volts(v), units.Hertz(r)
	o.DevSlpLine, o.MarkerLine, o.D7First = g.String("devslp-line"), g.String("marker-line"), g.Bool("d7-first")
	if g.Has("port") {
		p, err := g.Int("port")
		if err != nil {
			return o, err
		}
		if p < 1 || p > capture.MaxPort {
			return o, settings.Usagef("--port %d: want 1 … %d", p, capture.MaxPort)
		}
		o.Port = p
	}
	return o, nil
}

// Classify gives an import's error its class for who (the command):
// an interruption as it is, a refused output or a bad file or option as
// bad usage or input (settings.ErrUsage), anything else a failure.
func Classify(who string, err error) error {
	switch {
	case err == nil:
		return nil
	case errors.Is(err, ctxio.ErrInterrupted):
		return err
	case errors.Is(err, outfile.ErrRefused):
		return settings.Usagef("%s: --out %w", who, err)
	case errors.Is(err, files.ErrMalformed), errors.Is(err, files.ErrUnknownFormat), errors.Is(err, files.ErrOptions),
		errors.Is(err, os.ErrNotExist), errors.Is(err, capture.ErrInvalid):
		return settings.Input(fmt.Errorf("%s: %w", who, err))
	}
	return fmt.Errorf("%s: %w", who, err)
}

// Summary is the one line that says what an import of in holds.
func (res *Result) Summary(in string) string {
	return fmt.Sprintf("%s: %s, %d samples at %g S/s (%.3f s), %d missing, %d logic events, %d I/O spans",
		in, res.Format, res.Samples, res.Rate, res.Rate.Span(float64(res.Span)), res.Missing, res.Events, res.IO)
}

// Input lets a command that reads captures take another meter's file: a
// regular file that is no capture but one of meter/files' formats is
// imported into a temporary capture (removed by done), whose path is
// returned; anything else is returned as it is, for the command's own
// checks. The file's options are read (FileOptions) only when one is
// imported. The import's summary goes to log as who (the command's name)
// says it, and its notes too when notes (report and plot repeat them from
// the capture themselves).
func Input(ctx context.Context, g settings.Getter, path, who, tool string, log io.Writer, notes bool) (string, func(), error) {
	none := func() {}
	fi, err := os.Stat(path)
	if err != nil || !fi.Mode().IsRegular() || capture.IsCapture(path) || files.Sniff(path) == nil {
		return path, none, nil
	}
	fo, err := FileOptions(g)
	if err != nil {
		return "", none, err
	}
	dir, err := os.MkdirTemp("", "idlewatt-import-")
	if err != nil {
		return "", none, fmt.Errorf("%s: reading %s: %w", who, path, err)
	}
	done := func() { os.RemoveAll(dir) }
	tmp := filepath.Join(dir, filepath.Base(path)+".iwcap")
	res, err := Import(ctx, path, tmp, Options{Options: fo, Tool: tool})
	if err != nil {
		done()
		return "", none, Classify(who, err)
	}
	fmt.Fprintf(log, "%s: %s\n", who, res.Summary(path))
	if notes {
		for _, n := range res.Notes {
			fmt.Fprintf(log, "%s: note: %s%s\n", who, NotePrefix, n)
		}
	}
	return tmp, done, nil
}
