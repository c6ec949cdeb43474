package main

import (
	"io"

	"github.com/spf13/cobra"

	"github.com/idlewatt/idlewatt/capture"
	"github.com/idlewatt/idlewatt/internal/textsafe"
	"github.com/idlewatt/idlewatt/report"
	"github.com/idlewatt/idlewatt/report/csvexport"
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
	csvOut, pqDir := get(cmd).String("csv"), get(cmd).String("parquet")
	if pqDir != "" && csvOut != "" {
		return usageErr("export: --csv and --parquet: give one")
	}
	if pqDir == "" && csvOut == "" {
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
	placed, err := csvexport.Export{Named: args[0], In: in, Out: csvOut, Window: win, Rules: outOptions(cmd, args[0]),
		Stdout: cmd.OutOrStdout(), Notes: cmd.ErrOrStderr(), Progress: startProgress(cmd, "export")}.Run(cmd.Context())
	if placed {
		outputsPlaced(cmd)
	}
	return err
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
	prog := startProgress(cmd, "export")
	defer prog.Stop()
	placed, err := readSession(cmd, path, path, prog).ExportParquet(cmd.Context(), dir, outOptions(cmd, orig))
	if !placed {
		return err
	}
	outputsPlaced(cmd)
	cmd.Printf("%s\n", textsafe.Terminal(dir))
	return nil
}
