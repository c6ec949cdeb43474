package main

import (
	"github.com/spf13/cobra"

	"github.com/idlewatt/idlewatt/app/apst"
)

// `apst verify` and `apst idle` (issue 18): the CLI of app/apst,
// APST verification and idle power per latency tolerance × ASPM policy on
// a simulated NVMe drive (docs/states.md).

func init() {
	register(func() *cobra.Command {
		c := &cobra.Command{Use: "apst", Short: "NVMe APST verification and idle power on a simulated NVMe drive"}
		c.AddCommand(apstVerifyCmd(), apstIdleCmd())
		return c
	})
}

// apstVerifyCmd is `apst verify`: APST entry, floor and exit per cycle.
func apstVerifyCmd() *cobra.Command {
	v := &cobra.Command{
		Use:   "verify [--sim PROFILE] [--latency-us N] [--aspm POLICY] [--cycles N]",
		Short: "Cycle a simulated NVMe drive through APST and judge entry, floor and exit for each cycle",
		Long: `Each cycle: a read, then idle while the APST table the kernel would program
(for --latency-us, --quirk and the drive's power-state table) takes the
drive down, then a probe read and a warm read. The power must reach the
expected non-operational state's level (--expect-ps, default the deepest
the quirks allow) within that state's entry latency after the table's idle
time (ITPT) ran out, and the probe must wait no longer than the exit
latency of the state reached, plus the PCIe link's exit under --aspm.
Levels come from the power-state table (--levels table) or are learned
from the capture (--levels learned). Verdicts as for DevSlp: pass, fail,
inconclusive, not_supported (APSTA clear, or a NO_APST quirk). Exit 1
unless the verdict is pass.

The drive is simulated (states/nvme/sim), on a virtual clock, with a
simulated 20 kHz meter on its 3.3 V rail (with --hub: on port 1's 3.3 V rail
of an emulated protocol-3 hub, read by the hub driver over its pty at
10 kS/s, in real time); --entry-scale and --exit-scale
make its actual latencies a multiple of the declared ones (default 0.6:
within spec; over 1 breaks the descriptor).`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return apst.RunVerify(cmd.Context(), get(cmd), cmd.OutOrStdout())
		},
	}
	declare(v.Flags(), apst.VerifyFlags...)
	return v
}

// apstIdleCmd is `apst idle`: idle power per latency tolerance × ASPM policy.
func apstIdleCmd() *cobra.Command {
	id := &cobra.Command{
		Use:   "idle [--sim PROFILE] --latency-us LIST --aspm LIST",
		Short: "Idle power of a simulated NVMe drive per latency tolerance × ASPM policy, recovered against the model",
		Long: `For each combination: a fresh simulated drive with the APST table the kernel
would program for the tolerance, the link states the policy allows; idle
for --settle, then measure for --measure with the simulated meter. Prints
the recovered mean ± 95 % (batch means), the model's exact mean over the
same window, and their difference. --hub measures through an emulated
hub's 3.3 V rail instead, in real time (settle + measure per combination).`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return apst.RunIdle(cmd.Context(), get(cmd), cmd.OutOrStdout())
		},
	}
	declare(id.Flags(), apst.IdleFlags...)
	return id
}
