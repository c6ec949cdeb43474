package main

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"

	"github.com/spf13/cobra"

	"github.com/idlewatt/idlewatt/internal/outfile"
	"github.com/idlewatt/idlewatt/states/alpm"
)

// Settings: --sysfs-root / config key sysfs_root / IDLEWATT_SYSFS_ROOT,
// shared with every command that touches the host's ALPM policy.
const keySysfsRoot = "sysfs_root"

func init() {
	register(func() *cobra.Command {
		c := &cobra.Command{
			Use:   "states",
			Short: "SATA link power: ALPM policies, HBA and drive capabilities, DevSlp eligibility",
			Long: `Shows, per SATA host and drive: the ALPM policy target (what the kernel
recorded — never proof it was applied), whether the port supports LPM
(Linux 6.17+), the AHCI CAP/CAP2/PxCMD bits that matter (Partial, Slumber,
DevSlp, external and hot-plug ports), the drive's IDENTIFY power features
(HIPM, DIPM, DevSlp) and DevSlp timings, and whether DevSlp can work, naming
every failed precondition. Everything is read under --sysfs-root (default
/sys), so a fixture tree or the emulator's simulated host works the same.
Fields and sources: docs/states.md.`,
			Args: cobra.NoArgs,
			RunE: runStates,
		}
		c.PersistentFlags().String("sysfs-root", alpm.DefaultRoot, "sysfs tree to read and write (config sysfs_root)")
		c.PersistentFlags().Bool("json", false, "print JSON ("+alpm.SchemaStates+")")

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
			RunE: runSetPolicy,
		}
		set.Flags().StringSlice("host", nil, "scsi_host to write (hostN; repeat or comma-separate)")
		c.AddCommand(set)

		sim := &cobra.Command{
			Use:   "simulate DIR",
			Short: "Build a simulated host's sysfs tree in DIR (for --sysfs-root)",
			Long: `Builds a writable sysfs tree with one AHCI port per simulated drive, as the
emulator does: a DevSlp-capable mobile HBA (CAP2 SDS, SADM, DESO; PxDEVSLP.DSP
set), each drive supporting HIPM, DIPM and DevSlp, policies at
med_power_with_dipm. Try: idlewatt states --sysfs-root DIR.`,
			Args: cobra.ExactArgs(1),
			RunE: runStatesSimulate,
		}
		sim.Flags().Int("drives", 2, "number of simulated drives")
		addOverwriteFlag(sim.Flags(), "the files of a tree already in DIR")
		c.AddCommand(sim)
		return c
	})
}

func sysfsRoot(cmd *cobra.Command) string {
	r := optString(cmd, "sysfs-root", keySysfsRoot)
	if r == "" {
		r = alpm.DefaultRoot
	}
	return r
}

func runStates(cmd *cobra.Command, args []string) error {
	root := sysfsRoot(cmd)
	sys, err := alpm.Open(root).Discover()
	if err != nil {
		if errors.Is(err, alpm.ErrNoSysfs) {
			return inputErr(fmt.Errorf("--sysfs-root: %w", err))
		}
		return failErr("states: %v", err)
	}
	out := cmd.OutOrStdout()
	if optBool(cmd, "json", "") {
		return writeJSON(out, sys)
	}
	return sys.WriteText(out)
}

func writeJSON(w io.Writer, v any) error {
	b, err := json.MarshalIndent(v, "", "  ")
	if err != nil {
		return err
	}
	_, err = w.Write(append(b, '\n'))
	return err
}

// setPolicyReport is the JSON form of set-policy.
type setPolicyReport struct {
	Schema  string            `json:"schema"`
	Root    string            `json:"sysfs_root"`
	Policy  alpm.Policy       `json:"policy"`
	Results []alpm.HostResult `json:"results"`
}

func runSetPolicy(cmd *cobra.Command, args []string) error {
	p, err := alpm.ParseWritablePolicy(args[0])
	if err != nil {
		return inputErr(err)
	}
	hosts, _ := cmd.Flags().GetStringSlice("host")
	root := sysfsRoot(cmd)
	res, err := alpm.Open(root).SetPolicy(hosts, p)
	if err != nil {
		if errors.Is(err, alpm.ErrNoSysfs) {
			return inputErr(fmt.Errorf("--sysfs-root: %w", err))
		}
		return failErr("set-policy: %v", err)
	}
	out := cmd.OutOrStdout()
	if optBool(cmd, "json", "") {
		err = writeJSON(out, setPolicyReport{Schema: "idlewatt.states.set-policy/v1", Root: root, Policy: p, Results: res})
	} else {
		err = alpm.WriteResultsText(out, res)
	}
	if err != nil {
		return err
	}
	if len(res) == 0 {
		return failErr("set-policy: no host under %s has a link_power_management_policy", root)
	}
	if alpm.Failed(res) {
		n := 0
		for _, r := range res {
			if r.Err != nil {
				n++
			}
		}
		return failErr("set-policy %s: %d of %d hosts failed", p, n, len(res))
	}
	return nil
}

func runStatesSimulate(cmd *cobra.Command, args []string) error {
	n, err := optInt(cmd, "drives", "")
	if err != nil {
		return err
	}
	if n < 1 || n > 26 {
		return usageErr("--drives %d: want 1 to 26", n)
	}
	// A tree is built only in a new or empty directory (or rebuilt over one
	// with --overwrite): DIR could otherwise be any directory, /sys included.
	if err := outfile.RunDir(args[0], outOptions(cmd, "")); err != nil {
		return inputErr(fmt.Errorf("states simulate: %w", err))
	}
	drives := make([]alpm.DriveSpec, n)
	for i := range drives {
		drives[i] = alpm.DriveSpec{Model: fmt.Sprintf("idlewatt SIM SSD %d", i), Serial: fmt.Sprintf("SIM%04d", i),
			Firmware: "SIM1", Sectors: 500118192, HIPM: true, DIPM: true, DIPMEnabled: true, DevSlp: true,
			Log: true, LogValid: true, MDATms: 10, DETOms: 20}
	}
	h, err := alpm.NewSimHost(args[0], drives)
	if err != nil {
		return failErr("simulate: %v", err)
	}
	fmt.Fprintf(cmd.OutOrStdout(), "%s\n", h.Root)
	return nil
}
