package main

import (
	"fmt"

	"github.com/spf13/cobra"

	"github.com/idlewatt/idlewatt/app/hoststates"
)

func init() {
	register(func() *cobra.Command {
		c := &cobra.Command{
			Use:   "states",
			Short: "Link power: SATA ALPM and DevSlp, NVMe APST and PCIe ASPM, and what stops each",
			Long: `Shows, per SATA host and drive: the ALPM policy target (what the kernel
recorded — never proof it was applied), whether the port supports LPM
(Linux 6.17+), the AHCI CAP/CAP2/PxCMD bits that matter (Partial, Slumber,
DevSlp, external and hot-plug ports), the drive's IDENTIFY power features
(HIPM, DIPM, DevSlp) and DevSlp timings, and whether DevSlp can work, naming
every failed precondition. Per NVMe controller: the power-state table, the
APST table the kernel programs (and the one read back), the current power
state, ASPM on every PCIe link up to the root port, the pcie_aspm policy,
and whether the drive can reach its deepest state with the link in L1.2,
naming every failed precondition (APSTA, quirks, APST enabled, latency
tolerance, ASPM, policy). Everything is read under --sysfs-root (default
/sys; a directory or a sys.tree archive), so a fixture tree or the
emulator's simulated host works the same. A tree without SATA hosts or
NVMe controllers lists nothing and exits 0. Fields and sources:
docs/states.md.`,
			Args: cobra.NoArgs,
			RunE: func(cmd *cobra.Command, _ []string) error { return hoststates.Show(get(cmd), cmd.OutOrStdout()) },
		}
		declare(c.PersistentFlags(), hoststates.Flags...)
		declare(c.Flags(), hoststates.ShowFlags...)

		set := &cobra.Command{
			Use:   "set-policy POLICY",
			Short: "Write an ALPM policy to every SATA host (or --host hostN)",
			Long: `POLICY is one of max_performance, medium_power, med_power_with_dipm,
min_power_with_partial, min_power (keep_firmware_settings is display-only:
the kernel rejects it). Without --host, every host with a policy file is
written except ports whose link_power_management_supported is 0 (listed as
skipped). Each host's result is listed; the policy read back is the target
set, which the kernel applies later and may still refuse silently.
Exit 2 for a bad policy name, 1 if any host's write failed.`,
			Args: cobra.ExactArgs(1),
			RunE: func(cmd *cobra.Command, args []string) error {
				return hoststates.SetPolicy(get(cmd), args[0], cmd.OutOrStdout())
			},
		}
		declare(set.Flags(), hoststates.PolicyFlags...)
		c.AddCommand(set)

		ns := &cobra.Command{
			Use:   "nvme-set",
			Short: "Set NVMe latency tolerance / APST and the PCIe ASPM policy (all or nothing; --hold restores)",
			Long: `Writes, in this order: nvme_core.default_ps_max_latency_us (--default-latency-us;
the kernel reads it only for controllers enumerated later), each controller's
power/pm_qos_latency_tolerance_us (--latency-us N|auto|any, or --apst off = 0,
--apst on = back to a non-zero tolerance), and pcie_aspm's policy
(--aspm-policy default|performance|powersave|powersupersave). Without
--controller, every controller whose tolerance file exists is written. Each
write is read back. If any write fails, the ones already made are put back
and the command exits 1 naming the file and the errno: nothing is left
changed. With --hold D the settings stay for D (or until Ctrl-C/SIGTERM,
exit 1 as interrupted) and are then restored; without it they stay until
reboot. Under a --sysfs-root other than /sys the tree is a simulated host:
writes are stored as the kernel would show them (the drive's APST table in
the tree is not reprogrammed).`,
			Args: cobra.NoArgs,
			RunE: func(cmd *cobra.Command, _ []string) error {
				return hoststates.NVMeSet(cmd.Context(), get(cmd), cmd.OutOrStdout())
			},
		}
		declare(ns.Flags(), hoststates.NVMeSetFlags...)
		c.AddCommand(ns)

		sim := &cobra.Command{
			Use:   "simulate DIR",
			Short: "Build a simulated host's sysfs tree in DIR (for --sysfs-root)",
			Long: `Builds a writable sysfs tree with one AHCI port per simulated drive, as the
emulator does: a DevSlp-capable mobile HBA (CAP2 SDS, SADM, DESO; PxDEVSLP.DSP
set), each drive supporting HIPM, DIPM and DevSlp, policies at
med_power_with_dipm. With --nvme PROFILE,… it also adds one NVMe controller
per built-in simulated NVMe drive (980pro-1tb, 660p-1tb: power-state tables
as the drives report them) as a well-tuned laptop has it (powersupersave,
L1.2 on, tolerance 100000 µs, the kernel's APST table); --drives 0 leaves
out SATA. Writes to it with states nvme-set reprogram the simulated table.
Try: idlewatt states --sysfs-root DIR.`,
			Args: cobra.ExactArgs(1),
			RunE: func(cmd *cobra.Command, args []string) error {
				root, err := hoststates.Simulate(get(cmd), args[0], outOptions(cmd))
				if err == nil {
					fmt.Fprintf(cmd.OutOrStdout(), "%s\n", root)
				}
				return err
			},
		}
		declare(sim.Flags(), hoststates.SimulateFlags...)
		c.AddCommand(sim)
		c.AddCommand(newStatesDecodeCmd())
		return c
	})
}

// newStatesDecodeCmd is `states decode`.
func newStatesDecodeCmd() *cobra.Command {
	return &cobra.Command{
		Use:   "decode FILE...",
		Short: "Decode saved nvme-cli, smartctl, hdparm, CrystalDiskInfo outputs and dumps, without a sysfs tree",
		Long: `Tells each FILE's format and prints what it holds as idlewatt states does:
NVMe power states (max/idle/active power, operational or not, entry/exit
latency) with the APST table the kernel would program under its defaults,
the APST feature (APSTE and the 32 entries), or a SATA drive's identity,
HIPM, DIPM and DevSlp support and enablement and DETO/MDAT. Reads nvme-cli
id-ctrl (text with or without -H, JSON of 1.x and 2.x, -b binary),
get-feature -f 0x0c (text with or without -H, JSON, binary), smartctl
-a/-x/-c and -j (NVMe) and -a/-x/-i (ATA), hdparm -I and --Istdout, the sysfs
id file, CrystalDiskInfo reports, raw 4096/512/256-byte images and their
xxd, hexdump -C and od -A x -t x1 dumps. A field a format does not carry is
listed as unknown, never guessed. An unknown format (the message lists the
formats read), a truncated or inconsistent file exits 2 naming the field
and line. Formats and examples: docs/states.md.`,
		Args: cobra.MinimumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			return hoststates.Decode(args, get(cmd).Bool("json"), cmd.OutOrStdout())
		},
	}
}
