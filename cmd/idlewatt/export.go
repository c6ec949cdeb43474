package main

import (
	"errors"
	"fmt"
	"io"
	"os"

	"github.com/spf13/cobra"

	"github.com/idlewatt/idlewatt/analysis"
	"github.com/idlewatt/idlewatt/capture"
	"github.com/idlewatt/idlewatt/internal/ctxio"
	"github.com/idlewatt/idlewatt/internal/outfile"
	"github.com/idlewatt/idlewatt/internal/textsafe"
	"github.com/idlewatt/idlewatt/report"
	"github.com/idlewatt/idlewatt/report/csvexport"
	"github.com/idlewatt/idlewatt/report/pqexport"
)

func init() {
	register(func() *cobra.Command {
		c := &cobra.Command{
			Use:   "export CAPTURE --csv OUT [--from T] [--to T] | --parquet DIR",
			Short: "Write a capture's samples as full-resolution CSV, or the capture and its report as Parquet",
			Long: `Writes one row per sample time: t_s (seconds since the capture's first
sample), sample_index, gap, then for every channel pN_RAIL_v, pN_RAIL_a and
pN_RAIL_w, then pN_total_w per port (its rails' sum), then pN_drive per
port (the drive's name, as the capture header gives it), then run_id (the
capture's run identity, as in the Parquet tables). Where every channel lacks samples [a, b), one row at index a has
gap = b - a and empty value cells; where only some channels lack a sample,
their cells are empty and gap is empty. T is a duration with its unit
(90s, 1.5s, 2m; a bare number other than 0 is refused). OUT "-" is standard
output.

--parquet DIR writes samples.parquet, io.parquet, state.parquet (one row per
detected state interval) and summary.parquet (one row per drive: run metadata
and the report's figures) into DIR, a new directory
(--overwrite replaces the files of an existing one); docs/lab.md has the
schema and DuckDB queries.`,
			Args: cobra.ExactArgs(1),
			RunE: runExport,
		}
		declare(c.Flags(), report.ExportFlags...)
		addImportFlags(c.Flags())
		return c
	})
}

func runExport(cmd *cobra.Command, args []string) error {
	out := optString(cmd, "csv", "export.csv")
	pqDir := optString(cmd, "parquet", "export.parquet")
	if pqDir != "" && out != "" {
		return usageErr("export: --csv and --parquet: give one")
	}
	if pqDir == "" && out == "" {
		return usageErr("export: --csv OUT or --parquet DIR is required")
	}
	in, done, err := meterFileInput(cmd, args[0], true) // another meter's file: a capture of it
	if err != nil {
		return err
	}
	defer done()
	if pqDir != "" {
		return exportParquet(cmd, in, pqDir, args[0])
	}
	win, err := report.ExportWindow(get(cmd))
	if err != nil {
		return err
	}
	r, rc, err := capture.OpenStream(cmd.Context(), in)
	if err != nil {
		return inputErr(err)
	}
	defer rc.Close()
	defer r.Close()
	r.SkipSamples(false)

	var w io.Writer = cmd.OutOrStdout()
	var f *outfile.File
	if out != "-" {
		if f, err = outfile.Create(out, outOptions(cmd, "", args[0])); err != nil {
			if errors.Is(err, outfile.ErrRefused) {
				return usageErr("export: --csv %w", err)
			}
			return failErr("export: --csv %w", err)
		}
		defer f.Abort() // no-op after Commit
		w = f
	}
	prog := startProgress(cmd, "export")
	prog.Step("writing "+out, nil)
	res, err := csvexport.Write(w, r, win)
	prog.Stop()
	if err != nil && !errors.Is(err, capture.ErrTruncated) {
		return failErr("export %s: %v", out, err)
	}
	if !res.Samples { // the account report, plot and repair give; no CSV is left
		acc := r.Account()
		printAccount(cmd.ErrOrStderr(), "export", &acc)
		return capture.NoSamplesError(args[0], err)
	}
	if res.Rows == 0 { // a window past the last sample: no header-only CSV, exit 0
		return usageErr("export: --from %g s: the capture's last sample is at %g s; no rows to write", win.From.Seconds(), res.LastS)
	}
	// A damaged capture still gives every intact row (below). A signal
	// that came with the last read: nothing goes under the name.
	if err := ctxio.Stopped(cmd.Context()); err != nil {
		return err
	}
	if f != nil {
		if err := f.Commit(); err != nil {
			return failErr("export %s: %w", out, err)
		}
		outputsPlaced(cmd)
	}
	// The same account report and plot give (docs/cli.md, "Damaged
	// captures"): exit 0, what was lost said on stderr.
	acc := r.Account()
	if err != nil { // nothing intact follows: everything before is exported
		fmt.Fprintf(cmd.ErrOrStderr(), "export: %d rows written; %s\n", res.Rows, textsafe.Terminal(fmt.Sprintf("%s: %v", args[0], err)))
	}
	printAccount(cmd.ErrOrStderr(), "export", &acc)
	return nil
}

// printAccount prints a capture reader's account (damage, rejected indices,
// trailing bytes) as notes, the lines report.json's notes hold.
func printAccount(w io.Writer, who string, acc *capture.Account) {
	report.WriteNotes(w, who, acc.Notes())
}

// exportParquet writes the capture and its report as Parquet into dir;
// orig is the input the user named (path is a temporary capture of it when
// it is another meter's file).
func exportParquet(cmd *cobra.Command, path, dir, orig string) error {
	oo := outOptions(cmd, "", orig)
	if err := report.CheckParquetOut(dir, oo); err != nil {
		return err
	}
	if err := requireSamples(cmd, "export", path); err != nil {
		return err
	}
	// State detection as report runs it: state.parquet holds its
	// intervals, and summary.parquet's residencies are report.json's.
	opts := analysis.DefaultOptions()
	opts.States = &analysis.StateOptions{}
	open, at, err := captureOpener(cmd, path)
	if err != nil {
		return err
	}
	prog := startProgress(cmd, "export")
	defer prog.Stop()
	var rep *analysis.Report
	err = cancellable(cmd, func() error {
		passes(prog, path, at)
		var err error
		rep, err = report.Analyze(cmd.Context(), open, path, cmd.CommandPath(), opts)
		return err
	})
	if err != nil {
		return err
	}
	// A capture in which no drive has a single power sample (each lacks a
	// rail) gives Parquet files of nulls: bad input, and nothing written
	// (it used to say "the capture holds no samples" and exit 0).
	if report.NoPower(path, dir, rep) != nil {
		report.WriteNotes(cmd.ErrOrStderr(), "export", rep.Notes)
		return inputErr(fmt.Errorf("%s: no drive has a power sample (each lacks a rail; see the notes above); nothing written", path))
	}
	host, _ := os.Hostname()
	prog.Step("writing the Parquet files into "+dir, nil)
	if err := pqexport.Write(path, rep, dir, pqexport.Options{Overwrite: oo.Overwrite, Host: host, Stop: ctxio.Interrupted(cmd.Context())}); err != nil {
		if errors.Is(err, errInterrupted) {
			return err
		}
		if errors.Is(err, outfile.ErrRefused) {
			return usageErr("export: --parquet %v", err)
		}
		return failErr("export: --parquet %v", err)
	}
	outputsPlaced(cmd)
	prog.Stop()
	report.WriteNotes(cmd.ErrOrStderr(), "export", rep.Notes)
	cmd.Printf("%s\n", textsafe.Terminal(dir))
	return nil
}
