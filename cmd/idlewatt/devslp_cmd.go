package main

import (
	"github.com/spf13/cobra"
)

func init() {
	register(func() *cobra.Command {
		c := &cobra.Command{Use: "devslp", Short: "Device Sleep verification"}
		v := &cobra.Command{
			Use:   "verify --config FILE [--cycles N]",
			Short: "Cycle DEVSLP and judge entry, floor, hold and exit for each drive",
			Long: `Each cycle: idle until the drive reaches Slumber, assert DEVSLP (the hub's
pin), require the power to reach its floor within devslp.entry_bound, the
floor to be at or below devslp.limit_mw (default 5 mW), the floor to hold
at least MDAT, then deassert and require a read to complete within DETO,
and the drive to return to its pre-cycle level. Prints a table per cycle
and a verdict; exits 1 on failure with the reason. Writes the capture,
measure.json and a chart of one cycle (devslp-pN.png) into --out.`,
			Args: cobra.NoArgs,
			RunE: func(cmd *cobra.Command, args []string) error {
				rc, plan, err := measureConfig(cmd)
				if err != nil {
					return err
				}
				plan.Workload = false
				rc.Workload.Trace = "none"
				for _, o := range []struct {
					flag, key string
					to        *int
				}{{"cycles", "devslp.cycles", &rc.DevSlp.Cycles}, {"max-cycles", "devslp.max_cycles", &rc.DevSlp.MaxCycles}} {
					if n, err := optInt(cmd, o.flag, o.key); err != nil {
						return err
					} else if n < 0 {
						return usageErr("devslp verify: --%s %d is negative", o.flag, n)
					} else if n > 0 {
						*o.to = n
					}
					if rc.DevSlp.Cycles == 0 {
						rc.DevSlp.Cycles = 10
					}
				}
				rc.Idle = 0
				if err := rc.Validate(); err != nil { // the DevSlp settings, now with the cycles
					return usageErr("config: %w", err)
				}
				return runMeasure(cmd, rc, plan, true)
			},
		}
		addMeasureFlags(v)
		v.Flags().Int("cycles", 0, "DevSlp cycles (default: devslp.cycles, else 10)")
		v.Flags().Int("max-cycles", 0, "run more cycles, up to this many, while the entry latency is not resolved to devslp.entry_u95 (default: devslp.max_cycles, else --cycles)")
		c.AddCommand(v)
		return c
	})
}
