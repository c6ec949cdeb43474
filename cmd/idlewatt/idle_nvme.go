package main

import (
	"strings"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/idlewatt/idlewatt/app/rig"
	"github.com/idlewatt/idlewatt/states/nvme"
)

// NVMe mode of idle (issue 18 part 3): the flags, checked before the rig
// opens; app/rig's IdleNVMe sets, settles and measures each setting.

func addIdleNVMeFlags(f *pflag.FlagSet) {
	f.String("nvme-latency-us", "", "NVMe mode: latency tolerances to compare (µs, auto or any; comma-separated), written to every NVMe controller's power/pm_qos_latency_tolerance_us")
	f.String("aspm", "", "NVMe mode: pcie_aspm policies to compare (comma-separated); with --nvme-latency-us every combination")
}

// nvmeSettings returns the settings to measure, or nil when neither flag
// is given (ALPM mode). Every value is checked here, before the rig opens.
func nvmeSettings(cmd *cobra.Command, rc rig.Config) ([]rig.NVMeSetting, error) {
	split := func(flag string) []string {
		v, _ := cmd.Flags().GetString(flag)
		if strings.TrimSpace(v) == "" {
			return nil
		}
		return strings.Split(v, ",")
	}
	lats, aspms := split("nvme-latency-us"), split("aspm")
	if lats == nil && aspms == nil {
		return nil, nil
	}
	if f := cmd.Flags().Lookup("policies"); f != nil && f.Changed {
		return nil, usageErr("idle: give --policies (SATA ALPM) or --nvme-latency-us/--aspm (NVMe), not both")
	}
	emuNVMe := false
	for _, d := range rc.Drives {
		emuNVMe = emuNVMe || d.NVMe != ""
	}
	if (rc.Meter.Kind == "" || rc.Meter.Kind == "emulator") && !emuNVMe {
		return nil, usageErr("idle --nvme-latency-us/--aspm: the emulator has no simulated NVMe drive (give one in the config, drives[].nvme), and its SATA drives ignore NVMe settings; or use a meter on the NVMe drive, or the whole laptop (--meter battery)")
	}
	for i, l := range lats {
		lats[i] = strings.TrimSpace(l)
		if _, err := nvme.ParseTolerance(lats[i]); err != nil {
			return nil, usageErr("--nvme-latency-us: %v", err)
		}
	}
	for i, a := range aspms {
		aspms[i] = strings.TrimSpace(a)
		if _, err := nvme.ParseASPMPolicyName(aspms[i]); err != nil {
			return nil, usageErr("--aspm: %v", err)
		}
	}
	return rig.NVMeSettings(lats, aspms), nil
}
