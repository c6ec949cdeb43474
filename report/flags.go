package report

// The settings of the commands that write what this package draws, each
// declared once with its flag, config key, default and help
// (internal/settings): cmd/idlewatt declares them and app/config adds
// their keys to the schema.

import (
	"fmt"
	"github.com/idlewatt/idlewatt/units"
	"os"
	"path/filepath"
	"time"

	"github.com/idlewatt/idlewatt/analysis"
	"github.com/idlewatt/idlewatt/internal/outfile"
	"github.com/idlewatt/idlewatt/internal/settings"
	"github.com/idlewatt/idlewatt/report/csvexport"
	"github.com/idlewatt/idlewatt/report/pqexport"
)

// CompareFlags are `idlewatt compare`'s.
var CompareFlags = []settings.Flag{
	{Name: "out", Key: "compare.out", Kind: settings.String, Default: "compare", Help: "output directory"},
	{Name: "baseline", Key: "compare.baseline", Kind: settings.String, Default: "1", Help: "run the deltas are against: its position among the arguments (1 = first) or its label (the report's directory name)"},
	{Name: "html", Key: "compare.html", Kind: settings.Bool, Help: "also write compare.html: every run's power with its min–max envelope and I/O, state and DEVSLP strips on one time axis, a selection tool, the delta table and linked tables (re-reads each run's capture)"},
	{Name: "capture", Kind: settings.StringArray, Help: "with --html: the capture of each REPORT.json, in the same order (repeat once per report); default each report's capture.path"},
	outfile.Flag("comparison files already in --out", ""),
}

// ReportFlags are `idlewatt report`'s (with capture/importer's for a meter
// file).
var ReportFlags = []settings.Flag{
	{Name: "out", Key: "report.out", Kind: settings.String, Help: "output directory (default: CAPTURE's name + .report)"},
	{Name: "settle", Key: "report.settle", Kind: settings.Duration, Default: 500 * time.Millisecond, Help: "settle tail after each busy interval (config report.settle)"},
	{Name: "ports", Kind: settings.Ints, Help: "only these drive ports"},
	{Name: "json", Kind: settings.Bool, Help: "print report.json to stdout instead of the headline"},
	{Name: "no-html", Kind: settings.Bool, Help: "do not write report.html (the interactive viewer)"},
	{Name: "from", Kind: settings.Duration, Help: "report only from T on the report's timeline, a duration with its unit (90s, 1.5s, 1m30s); every figure is then of the interval"},
	{Name: "to", Kind: settings.Duration, Help: "report only up to T (default: the end)"},
	outfile.Flag("report files already in --out", ""),
}

// AnalysisOptions are the analysis of `idlewatt report` as its settings
// (g) ask: the settle tail, the ports, the interval (--from, --to), and
// state detection with every drive's levels learned from the capture (a
// simulator profile, even one a config names, is never read).
func AnalysisOptions(g settings.Getter) (analysis.Options, error) {
	opts := analysis.DefaultOptions()
	settle, err := g.Duration("settle")
	if err != nil {
		return opts, err
	}
	opts.Settle = settle
	opts.Ports = g.Ints("ports")
	opts.States = &analysis.StateOptions{}
	if opts.Window, err = window(g); err != nil {
		return opts, err
	}
	return opts, nil
}

// window reads --from and --to (nil: the whole capture).
func window(g settings.Getter) (*analysis.Window, error) {
	if !g.Set("from") && !g.Set("to") {
		return nil, nil
	}
	from, err := g.Duration("from")
	if err != nil {
		return nil, err
	}
	to, err := g.Duration("to")
	if err != nil {
		return nil, err
	}
	w := &analysis.Window{FromS: units.SecondsOf(from)}
	if g.Set("to") {
		if to <= from {
			return nil, settings.Usagef("report: --to %g s is not after --from %g s", to.Seconds(), from.Seconds())
		}
		w.ToS = units.SecondsOf(to)
	}
	return w, nil
}

// ExportFlags are `idlewatt export`'s (with capture/importer's).
var ExportFlags = []settings.Flag{
	{Name: "csv", Key: "export.csv", Kind: settings.String, Help: "CSV file to write (- for stdout)"},
	{Name: "parquet", Key: "export.parquet", Kind: settings.String, Help: "directory to create with the Parquet files"},
	{Name: "from", Key: "export.from", Kind: settings.Duration, Help: "start at T from the first sample (90s, 1m30s; a bare number is refused)"},
	{Name: "to", Key: "export.to", Kind: settings.Duration, Help: "stop before T (default: the end)"},
	outfile.Flag("OUT", ""),
}

// ExportWindow reads export's --from and --to (config export.from,
// export.to): the CSV's window, every sample when neither is set.
func ExportWindow(g settings.Getter) (csvexport.Window, error) {
	win := csvexport.All
	var fromSet, toSet bool
	var err error
	if win.From, fromSet, err = offset(g, "from"); err != nil {
		return win, err
	}
	if win.To, toSet, err = offset(g, "to"); err != nil {
		return win, err
	}
	if !toSet {
		win.To = csvexport.NoEnd
	}
	if fromSet && toSet && win.To <= win.From {
		return win, settings.Usagef("export: --to %g s is not after --from %g s", win.To.Seconds(), win.From.Seconds())
	}
	return win, nil
}

// offset reads a time on the capture and whether it was given.
func offset(g settings.Getter, flag string) (time.Duration, bool, error) {
	if !g.Set(flag) {
		return 0, false, nil
	}
	d, err := g.Duration(flag)
	return d, err == nil, err
}

// CheckParquetOut refuses, before the capture is read, every output
// pqexport.Write would refuse on the way: DIR a symbolic link or not a
// directory; an existing DIR without Overwrite; and, with it, any of the
// four member files that is a symbolic link, not a regular file, one of
// the inputs (a hard link to the capture included) or a file another
// process is writing in place. pqexport.Write checks each member again as
// it writes it; without this, the members before a refused one were
// already replaced when the refusal came.
func CheckParquetOut(dir string, oo outfile.Options) error {
	if err := outfile.CheckDir(dir); err != nil {
		return settings.Usagef("export: --parquet %w", err)
	}
	if _, err := os.Lstat(dir); err != nil {
		// A new directory: its parent must exist (os.Mkdir fails after
		// the whole analysis otherwise).
		if _, perr := os.Stat(filepath.Dir(dir)); perr != nil {
			return fmt.Errorf("export: --parquet %s: %w", dir, perr)
		}
		return nil
	}
	if !oo.Overwrite {
		return settings.Usagef("export: --parquet %s exists: %w (--overwrite replaces its Parquet files)", dir, outfile.ErrRefused)
	}
	if err := outfile.CheckAll(dir, pqexport.Files, oo); err != nil {
		return settings.Usagef("export: --parquet %w", err)
	}
	return nil
}
