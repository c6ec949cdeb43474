package main

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strconv"
	"strings"

	"github.com/spf13/cobra"

	"github.com/idlewatt/idlewatt/internal/outfile"
	"github.com/idlewatt/idlewatt/internal/textsafe"
	"github.com/idlewatt/idlewatt/workload/gen"
	"github.com/idlewatt/idlewatt/workload/trace"
)

func init() {
	register(func() *cobra.Command {
		c := &cobra.Command{
			Use:   "trace",
			Short: "Generate, inspect and convert I/O traces",
			Long: `Traces are read streaming in fio iolog v2/v3, blkparse text, SNIA/MSR CSV or
the native idlewatt format (docs/trace-formats.md); the format is detected
unless --format names it.`,
		}
		c.AddCommand(newTraceInfoCmd(), newTraceConvertCmd(), newTraceGenCmd())
		return c
	})
}

func newTraceInfoCmd() *cobra.Command {
	c := &cobra.Command{
		Use:   "info FILE",
		Short: "Ops and bytes by type, duration, size and idle-gap histograms, mix and locality",
		Args:  cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			f, err := wlOpenTrace(cmd, args[0])
			if err != nil {
				return err
			}
			defer f.Close()
			s, err := trace.Summarize(f)
			if err != nil {
				return inputErr(err)
			}
			if optBool(cmd, "json", "") {
				enc := json.NewEncoder(cmd.OutOrStdout())
				enc.SetIndent("", "  ")
				return enc.Encode(struct {
					File   string       `json:"file"`
					Format trace.Format `json:"format"`
					Stats  *trace.Stats `json:"stats"`
				}{args[0], f.Format, s})
			}
			fmt.Fprintf(cmd.OutOrStdout(), "%s (%s)\n%s", textsafe.Terminal(args[0]), f.Format, textsafe.Lines(s.Text()))
			return nil
		},
	}
	c.Flags().Bool("json", false, "print JSON")
	c.Flags().String("format", "", "trace format (default: detect)")
	return c
}

func newTraceConvertCmd() *cobra.Command {
	c := &cobra.Command{
		Use:   "convert IN --to FORMAT --out OUT",
		Short: "Convert a trace between formats (native, fio2, fio3, blkparse, msr)",
		Args:  cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			to, err := trace.ParseFormat(optString(cmd, "to", ""))
			if err != nil {
				return usageErr("--to: %v", err)
			}
			out := optString(cmd, "out", "")
			if out == "" {
				return usageErr("trace convert: --out OUT is required")
			}
			// Refused before the input is opened: converting a trace onto
			// itself would read what it is overwriting.
			oo := outOptions(cmd, "", args[0])
			if out != "-" {
				if err := outfile.Check(out, oo); err != nil {
					return usageErr("trace convert: --out %w", err)
				}
			}
			in, err := wlOpenTrace(cmd, args[0])
			if err != nil {
				return err
			}
			defer in.Close()
			n, dropped, err := wlWriteTrace(cmd.OutOrStdout(), out, to, in, optString(cmd, "redirect", ""), "converted from "+args[0], oo)
			if err != nil {
				return err
			}
			fmt.Fprintf(cmd.ErrOrStderr(), "%d ops written to %s (%s)", n, textsafe.Terminal(out), to)
			if dropped != "" {
				fmt.Fprintf(cmd.ErrOrStderr(), "; %s", textsafe.Terminal(dropped))
			}
			fmt.Fprintln(cmd.ErrOrStderr())
			return nil
		},
	}
	f := c.Flags()
	f.String("to", "native", "output format: native, fio2, fio3, blkparse, msr")
	f.String("out", "", "output file ('-' for stdout)")
	addOverwriteFlag(f, "OUT")
	f.String("format", "", "input format (default: detect)")
	f.String("redirect", "", "name every op's file PATH (like fio's replay_redirect)")
	return c
}

func newTraceGenCmd() *cobra.Command {
	c := &cobra.Command{
		Use:   "gen pcmark7|iometer",
		Short: "Generate a synthetic trace in the native format",
	}
	pc := &cobra.Command{
		Use:   "pcmark7 --out FILE",
		Short: "PCMark-7-like application traces (docs/workload.md)",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			app := optString(cmd, "app", "gen.app")
			seed, err := optInt(cmd, "seed", "gen.seed")
			if err != nil {
				return err
			}
			scale, err := optFloat(cmd, "duration-scale", "gen.duration_scale")
			if err != nil {
				return err
			}
			span, err := wlBytes(cmd, "span", "gen.span")
			if err != nil {
				return err
			}
			r, err := gen.PCMark7(app, int64(seed), span, scale)
			if err != nil {
				return usageErr("%v", err)
			}
			return wlGenOut(cmd, r, fmt.Sprintf("generator: pcmark7 app=%s seed=%d span=%d duration-scale=%g", app, seed, span, scale))
		},
	}
	pf := pc.Flags()
	pf.String("app", "all", "application: "+strings.Join(gen.AppNames(), ", "))
	pf.Int("seed", 1, "random seed")
	pf.Float64("duration-scale", 1, "multiply the number of bursts (0.1 = a tenth as long)")
	pf.String("span", "16GiB", "LBA span in bytes (suffixes KiB, MiB, GiB, KB, MB, GB)")
	pf.String("out", "", "output file ('-' for stdout)")
	addOverwriteFlag(pf, "the --out file")

	io := &cobra.Command{
		Use:   "iometer --pattern P --ops N --out FILE",
		Short: "Iometer-style patterns and the consistency load (untimed; replay with --timing afap)",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			pat := optString(cmd, "pattern", "")
			seed, err := optInt(cmd, "seed", "gen.seed")
			if err != nil {
				return err
			}
			n, err := optInt(cmd, "ops", "")
			if err != nil {
				return err
			}
			if n <= 0 {
				return usageErr("--ops: want a positive count")
			}
			span, err := wlBytes(cmd, "span", "gen.span")
			if err != nil {
				return err
			}
			r, err := gen.Pattern(pat, int64(seed), span, int64(n))
			if err != nil {
				return usageErr("%v", err)
			}
			return wlGenOut(cmd, r, fmt.Sprintf("generator: iometer pattern=%s seed=%d span=%d ops=%d (replay with --timing afap --qd N)", pat, seed, span, n))
		},
	}
	iof := io.Flags()
	iof.String("pattern", "randread4k", "pattern: "+strings.Join(gen.Patterns, ", ")+", or fio's rw names (randread, read128k, …)")
	iof.Int("ops", 100000, "number of ops")
	iof.Int("seed", 1, "random seed")
	iof.String("span", "16GiB", "LBA span in bytes")
	iof.String("out", "", "output file ('-' for stdout)")
	addOverwriteFlag(iof, "the --out file")
	c.AddCommand(pc, io)
	return c
}

func wlGenOut(cmd *cobra.Command, r trace.Reader, comment string) error {
	out := optString(cmd, "out", "")
	if out == "" {
		return usageErr("%s: --out FILE is required", cmd.CommandPath())
	}
	n, _, err := wlWriteTrace(cmd.OutOrStdout(), out, trace.FormatNative, trace.Stoppable(cmd.Context(), r), "", comment, outOptions(cmd, ""))
	if err != nil {
		return err
	}
	if out != "-" {
		fmt.Fprintf(cmd.ErrOrStderr(), "%d ops written to %s\n", n, textsafe.Terminal(out))
	}
	return nil
}

// wlOpenTrace opens a trace named on the command line; errors exit 2.
func wlOpenTrace(cmd *cobra.Command, path string) (*trace.File, error) {
	var format trace.Format
	if s := optString(cmd, "format", ""); s != "" {
		var err error
		if format, err = trace.ParseFormat(s); err != nil {
			return nil, usageErr("--format: %v", err)
		}
	}
	f, err := trace.OpenCtx(cmd.Context(), path, format)
	if err != nil {
		return nil, inputErr(err)
	}
	return f, nil
}

// wlWriteTrace streams r into path ("-" = stdout, the command's) in format to, under o's
// rules (internal/outfile): the trace goes to a temporary file renamed into
// place only when the whole input was read, so a bad input or a full disk
// leaves an old file as it was. n counts the ops written; dropped says how
// many the format could not carry, of which types ("" if none).
func wlWriteTrace(stdout io.Writer, path string, to trace.Format, r trace.Reader, redirect, comment string, o outfile.Options) (n int64, dropped string, err error) {
	out := stdout
	if path != "-" {
		f, oerr := outfile.Create(path, o) // not err: the deferred Commit reads the result
		if oerr != nil {
			if errors.Is(oerr, outfile.ErrRefused) {
				return 0, "", usageErr("--out %w", oerr)
			}
			return 0, "", failErr("--out %w", oerr)
		}
		defer f.Abort() // no-op after Commit
		out = f
		defer func() {
			if err == nil {
				if cerr := f.Commit(); cerr != nil {
					err = failErr("%w", cerr)
				}
			}
		}()
	}
	w, err := trace.NewWriter(out, to)
	if err != nil {
		return 0, "", usageErr("%v", err)
	}
	w.Comment(comment)
	if n, err = trace.Copy(w, r, redirect); err != nil {
		return n, "", inputErr(err)
	}
	if err := w.Close(); err != nil {
		return n, "", failErr("%s: %v", path, err)
	}
	return n, w.SkippedNote(), nil
}

// wlBytes resolves a byte-size option such as "16GiB" or "1000000".
func wlBytes(cmd *cobra.Command, flag, key string) (int64, error) {
	s := optString(cmd, flag, key)
	n, err := parseBytes(s)
	if err != nil {
		return 0, usageErr("%s: %v", where(cmd, flag, key), err)
	}
	return n, nil
}

func parseBytes(s string) (int64, error) {
	t := strings.TrimSpace(s)
	mult := int64(1)
	for _, u := range []struct {
		suffix string
		m      int64
	}{{"KiB", 1 << 10}, {"MiB", 1 << 20}, {"GiB", 1 << 30}, {"TiB", 1 << 40}, {"KB", 1e3}, {"MB", 1e6}, {"GB", 1e9}, {"TB", 1e12},
		{"K", 1 << 10}, {"M", 1 << 20}, {"G", 1 << 30}, {"T", 1 << 40}, {"B", 1}} {
		if strings.HasSuffix(t, u.suffix) {
			t, mult = strings.TrimSpace(strings.TrimSuffix(t, u.suffix)), u.m
			break
		}
	}
	v, err := strconv.ParseFloat(t, 64)
	if err != nil || v < 0 || v*float64(mult) > 1<<62 {
		return 0, fmt.Errorf("%q is not a byte size (e.g. 4096, 512MiB, 16GiB)", s)
	}
	return int64(v * float64(mult)), nil
}
