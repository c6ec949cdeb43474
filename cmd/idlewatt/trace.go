package main

import (
	"fmt"

	"github.com/spf13/cobra"

	"github.com/idlewatt/idlewatt/internal/settings"
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
		info := &cobra.Command{
			Use:   "info FILE",
			Short: "Ops and bytes by type, duration, size and idle-gap histograms, mix and locality",
			Args:  cobra.ExactArgs(1),
			RunE: func(cmd *cobra.Command, args []string) error {
				return trace.Info(cmd.Context(), get(cmd), args[0], cmd.OutOrStdout())
			},
		}
		declare(info.Flags(), trace.InfoFlags...)
		conv := &cobra.Command{
			Use:   "convert IN --to FORMAT --out OUT",
			Short: "Convert a trace between formats (native, fio2, fio3, blkparse, msr)",
			Args:  cobra.ExactArgs(1),
			RunE: func(cmd *cobra.Command, args []string) error {
				return trace.Convert(cmd.Context(), get(cmd), args[0], cmd.OutOrStdout(), cmd.ErrOrStderr(), outOptions(cmd, args[0]))
			},
		}
		declare(conv.Flags(), trace.ConvertFlags...)
		gc := &cobra.Command{Use: "gen pcmark7|iometer", Short: "Generate a synthetic trace in the native format"}
		gc.AddCommand(genCmd(&cobra.Command{
			Use:   "pcmark7 --out FILE",
			Short: "PCMark-7-like application traces (docs/workload.md)",
		}, gen.PCMark7Flags, gen.ReadPCMark7), genCmd(&cobra.Command{
			Use:   "iometer --pattern P --ops N --out FILE",
			Short: "Iometer-style patterns and the consistency load (untimed; replay with --timing afap)",
		}, gen.IometerFlags, gen.ReadIometer))
		c.AddCommand(info, conv, gc)
		return c
	})
}

// genCmd makes c a generator: flags → the generator read writes → --out.
func genCmd(c *cobra.Command, flags []settings.Flag, read func(settings.Getter) (trace.Reader, string, error)) *cobra.Command {
	c.Args = cobra.NoArgs
	c.RunE = func(cmd *cobra.Command, _ []string) error {
		r, comment, err := read(get(cmd))
		if err != nil {
			return err
		}
		out := get(cmd).String("out")
		if out == "" {
			return usageErr("%s: --out FILE is required", cmd.CommandPath())
		}
		n, _, err := trace.WriteFile(cmd.OutOrStdout(), out, trace.FormatNative, trace.Stoppable(cmd.Context(), r), "", comment, outOptions(cmd))
		if err != nil {
			return err
		}
		if out != "-" {
			fmt.Fprintf(cmd.ErrOrStderr(), "%d ops written to %s\n", n, textsafe.Terminal(out))
		}
		return nil
	}
	declare(c.Flags(), flags...)
	return c
}
