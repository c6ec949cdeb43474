package main

import (
	"time"

	"github.com/spf13/cobra"

	"github.com/idlewatt/idlewatt/internal/rig"
)

func newDemoCmd() *cobra.Command {
	c := &cobra.Command{
		Use:   "demo [--out DIR]",
		Short: "Measure two simulated JMicron JMF667H drives on the emulated hub: the whole job, no hardware",
		Long: `Runs 'measure' on the built-in emulated hub with two simulated JMicron
JMF667H drives with Toshiba A19 NAND (128 GB on port 1, 256 GB on port 2):
active idle under max_performance, a shortened PCMark-7-like run (idle gaps
compressed to 1.5 s), idle again, then DevSlp cycles on the hub's DEVSLP pins
under med_power_with_dipm. Writes the capture, report, charts and the
simulated drives' ground truth (truth-pN.jsonl) into --out and prints the
headline numbers. Takes about a minute.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			rc := demoConfig()
			user, err := configProfiles(cmd)
			if err != nil {
				return inputErr(err)
			}
			rc.Profiles = user
			rc.Defaults()
			if err := rc.Validate(); err != nil {
				return usageErr("demo: %v", err)
			}
			return runMeasure(cmd, rc, rig.Plan{Workload: true, DevSlp: true,
				Battery: rig.Battery{CapacityWh: 45, PlatformIdleW: 4.5}}, false)
		},
	}
	addMeasureFlags(c)
	return c
}

// demoConfig reproduces the reference review set-up: the two JMF667H A19
// drives, active idle with the link kept up, PCMark-7-like bursts, DevSlp.
func demoConfig() rig.Config {
	return rig.Config{
		Meter:    rig.MeterConfig{Kind: "emulator", Rate: 10000},
		Emulator: rig.EmulatorConfig{Seed: 1},
		Drives: []rig.DriveConfig{
			{Name: "JMF667H 128GB (Toshiba A19)", Port: 1, Profile: "jmf667h-128-a19", SizeBytes: 1 << 30},
			{Name: "JMF667H 256GB (Toshiba A19)", Port: 2, Profile: "jmf667h-256-a19", SizeBytes: 1 << 30},
		},
		// Reviews measure active idle with the link up; DevSlp cycles need
		// Slumber first, which DIPM gives without the HBA's own DevSlp timer.
		Policy: "max_performance",
		Workload: rig.WorkloadConfig{Trace: "pcmark7", App: "all", Scale: 0.1,
			Timing: "compress-idle=1500ms", QD: 1, Seed: 7},
		Idle: 4 * time.Second,
		DevSlp: rig.DevSlpConfig{Cycles: 3, Policy: "med_power_with_dipm",
			Settle: 800 * time.Millisecond, Hold: 300 * time.Millisecond, Return: 500 * time.Millisecond},
	}
}
