package main

import (
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/idlewatt/idlewatt/app/rig"
	nvmesim "github.com/idlewatt/idlewatt/states/nvme/sim"
)

func newDemoCmd() *cobra.Command {
	c := &cobra.Command{
		Use:   "demo [--out DIR] [--nvme[=PROFILE]]",
		Short: "Measure two simulated JMicron JMF667H drives on the emulated hub: the whole job, no hardware",
		Long: `Runs 'measure' on the built-in emulated hub with two simulated JMicron
JMF667H drives with Toshiba A19 NAND (128 GB on port 1, 256 GB on port 2):
active idle under max_performance, a shortened PCMark-7-like run (idle gaps
compressed to 1.5 s), idle again, then DevSlp cycles on the hub's DEVSLP pins
under med_power_with_dipm. Writes the capture, report, charts and the
simulated drives' ground truth (truth-pN.jsonl) into --out and prints the
headline numbers. Takes about a minute.

With --nvme the 256 GB drive on port 2 is replaced by a simulated NVMe
drive (default the Samsung 980 PRO 1 TB; --nvme=660p-1tb the Intel 660p) on
an M.2 interposer: the hub speaks protocol 3 with a 3.3 V rail, the same
phases play on the SATA and the NVMe drive, and one report shows both. The
NVMe drive is programmed as Linux does by default (APST planned for a
100000 µs latency tolerance, ASPM powersupersave); it has no DEVSLP pin
(its DevSlp verdict is not_supported) and measure runs no state detection
on it (apst verify checks its power states).`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			rc := demoConfig()
			if cmd.Flags().Changed("nvme") {
				name, _ := cmd.Flags().GetString("nvme")
				if _, ok := nvmesim.ProfileByName(name); !ok {
					var names []string
					for _, p := range nvmesim.Profiles() {
						names = append(names, p.Name)
					}
					return usageErr("--nvme: no simulated NVMe profile %q (have %s)", name, strings.Join(names, ", "))
				}
				demoNVMe(&rc, name)
			}
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
	c.Flags().String("nvme", "", "put a simulated NVMe drive (980pro-1tb, 660p-1tb) on port 2, on the hub's 3.3 V rail, in place of the 256 GB SATA drive")
	c.Flags().Lookup("nvme").NoOptDefVal = "980pro-1tb"
	return c
}

// demoNVMe replaces the demo's port-2 SATA drive with the simulated NVMe
// drive of profile name (states/nvme/sim) on an M.2 interposer behind the
// hub's 3.3 V rail: the same phases play on both drives; the NVMe drive
// is programmed as Linux does by default (APST for a 100000 µs latency
// tolerance, ASPM powersupersave) and has no DevSlp.
func demoNVMe(rc *rig.Config, name string) {
	p, _ := nvmesim.ProfileByName(name)
	rc.Drives[1] = rig.DriveConfig{Name: p.Identify.Model + " (simulated NVMe)", Port: 2, NVMe: name, SizeBytes: 1 << 30}
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
