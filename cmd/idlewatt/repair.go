package main

import (
	"fmt"

	"github.com/spf13/cobra"

	"github.com/idlewatt/idlewatt/capture"
	"github.com/idlewatt/idlewatt/internal/outfile"
	"github.com/idlewatt/idlewatt/internal/textsafe"
)

func init() {
	register(func() *cobra.Command {
		c := &cobra.Command{
			Use:   "repair CAPTURE --out NEW",
			Short: "Write a clean capture of what a damaged capture still holds",
			Long: `Reads CAPTURE as report does — skipping damaged stretches, mending single
flipped bits, leaving out samples whose indices are already covered — and
writes NEW: every intact record, the holes as gaps with reason "damaged",
an end chunk, and host notes saying what was repaired. Bytes after the end
chunk are not copied. NEW must not exist unless --overwrite; it is never
CAPTURE and never written through a symbolic link; CAPTURE is only read.`,
			Args: cobra.ExactArgs(1),
			RunE: runRepair,
		}
		c.Flags().String("out", "", "the repaired capture to write (required)")
		c.Flags().Bool("overwrite", false, "replace NEW if it exists (never CAPTURE itself)")
		return c
	})
}

func runRepair(cmd *cobra.Command, args []string) error {
	in, out := args[0], get(cmd).String("out")
	if out == "" {
		return usageErr("repair: --out NEW is required")
	}
	oo := outOptions(cmd, in) // never the input, never through a symlink
	if err := outfile.Check(out, oo); err != nil {
		return usageErr("repair: --out %w", err)
	}
	// repair reads the capture twice (summaries, then records): a FIFO
	// would block the second open.
	if _, _, err := capture.Passes(cmd.Context(), in, cmd.CommandPath()); err != nil {
		return err
	}
	// Nothing to repair into a capture any command could read.
	if err := requireSamples(cmd, "repair", in); err != nil {
		return err
	}
	prog := startProgress(cmd, "repair")
	prog.Step(fmt.Sprintf("copying %s into %s", in, out), nil)
	res, err := capture.Repair(cmd.Context(), in, out, oo)
	prog.Stop()
	if err != nil {
		return capture.ClassifyRepair(out, err)
	}
	outputsPlaced(cmd)
	acc := res.Account
	stderr := cmd.ErrOrStderr()
	if res.End != nil {
		fmt.Fprintf(stderr, "repair: %s\n", textsafe.Terminal(fmt.Sprintf("%s: %v", in, res.End)))
	}
	printAccount(stderr, "repair", &acc)
	cmd.Println(res.Summary(in, out))
	return nil
}
