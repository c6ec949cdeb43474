package main

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/idlewatt/idlewatt/internal/outfile"
	"github.com/idlewatt/idlewatt/internal/textsafe"
	"github.com/idlewatt/idlewatt/states/alpm"
	"github.com/idlewatt/idlewatt/states/nvme"
	nvmesim "github.com/idlewatt/idlewatt/states/nvme/sim"
)

// Settings: --sysfs-root / config key sysfs_root / IDLEWATT_SYSFS_ROOT,
// shared with every command that touches the host's ALPM policy.
const keySysfsRoot = "sysfs_root"

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
			RunE: runStates,
		}
		c.PersistentFlags().String("sysfs-root", alpm.DefaultRoot, "sysfs tree to read and write (config sysfs_root)")
		c.PersistentFlags().Bool("json", false, "print JSON ("+alpm.SchemaStates+")")
		c.Flags().StringArray("nvme-id-ctrl", nil, "NAME=FILE: Identify Controller of nvmeN from a file (nvme id-ctrl text/-H/JSON/-b, smartctl -a, or a hex dump: every format of states decode); repeatable")
		c.Flags().StringArray("nvme-apst", nil, "NAME=FILE: feature 0x0C of nvmeN (nvme get-feature -f 0x0c [-H] text or JSON, the 256-byte table or its dump)")
		c.Flags().StringArray("sata-id", nil, "devN.M=FILE: IDENTIFY of ata_device devN.M from a file instead of its sysfs id (hdparm -I or --Istdout, smartctl, CrystalDiskInfo, binary, dumps); repeatable")
		c.Flags().StringArray("sata-log", nil, "devN.M=FILE: log 30h page 08h of devN.M (a dump of the page, or hdparm -I with its Device Sleep section); repeatable")
		c.Flags().StringArray("nvme-power-state", nil, "NAME=FILE: feature 0x02 of nvmeN (nvme get-feature -f 0x02 -H -o json, or Dword 0)")
		c.Flags().Bool("nvme-ioctl", true, "on /sys, read Identify and features through the admin ioctl on /dev/nvmeN (needs root)")

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
		c.AddCommand(newStatesDecodeCmd())

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
			RunE: runNVMeSet,
		}
		ns.Flags().StringSlice("controller", nil, "NVMe controller to write (nvmeN; repeat or comma-separate)")
		ns.Flags().String("latency-us", "", "per-controller latency tolerance: microseconds, auto or any")
		ns.Flags().String("apst", "", "on or off (off writes tolerance 0)")
		ns.Flags().String("default-latency-us", "", "nvme_core.default_ps_max_latency_us (new controllers only)")
		ns.Flags().String("aspm-policy", "", "pcie_aspm policy")
		ns.Flags().Duration("hold", 0, "keep the settings this long, then restore them (0: keep until reboot)")
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
			RunE: runStatesSimulate,
		}
		sim.Flags().Int("drives", 2, "number of simulated SATA drives (0 with --nvme: none)")
		sim.Flags().StringSlice("nvme", nil, "simulated NVMe drives to add (980pro-1tb, 660p-1tb)")
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

// rootName names the sysfs root's origin for messages: the flag or config
// key the user gave, or "the sysfs root" for the default nobody typed.
func rootName(cmd *cobra.Command, root string) string {
	if f := cmd.Flags().Lookup("sysfs-root"); (f != nil && f.Changed) || cliOf(cmd).cfg.IsSet(keySysfsRoot) {
		return where(cmd, "sysfs-root", keySysfsRoot) + " " + root
	}
	return "the sysfs root " + root
}

// openRoot checks that root is a sysfs tree (a directory with class/,
// devices/ or module/) or a tree archive (extracted to a temporary
// directory, removed by cleanup). An empty directory or a missing path is
// bad input; a tree without SATA or NVMe is not.
func openRoot(cmd *cobra.Command, root string) (dir string, cleanup func(), err error) {
	st, err := os.Stat(root)
	if err != nil {
		return "", nil, inputErr(fmt.Errorf("%s: %w", rootName(cmd, root), err))
	}
	cleanup = func() {}
	dir = root
	if st.Mode().IsRegular() {
		f, err := os.Open(root)
		if err != nil {
			return "", nil, inputErr(fmt.Errorf("%s: %w", rootName(cmd, root), err))
		}
		defer f.Close()
		tmp, err := os.MkdirTemp("", "idlewatt-sysfs-")
		if err != nil {
			return "", nil, err
		}
		cleanup = func() { os.RemoveAll(tmp) }
		if err := alpm.ExtractTreeArchive(f, tmp); err != nil {
			cleanup()
			return "", nil, inputErr(fmt.Errorf("%s: not a tree archive: %w", rootName(cmd, root), err))
		}
		dir = tmp
	} else if !st.IsDir() {
		return "", nil, inputErr(fmt.Errorf("%s: neither a directory nor a tree archive", rootName(cmd, root)))
	}
	for _, d := range []string{"class", "devices", "module"} {
		if st, err := os.Stat(filepath.Join(dir, d)); err == nil && st.IsDir() {
			return dir, cleanup, nil
		}
	}
	cleanup()
	return "", nil, inputErr(fmt.Errorf("%s: not a sysfs tree (no class/, devices/ or module/)", rootName(cmd, root)))
}

// statesReport is the JSON form of states: the SATA keys as before, and
// the NVMe controllers under "nvme".
type statesReport struct {
	*alpm.System
	NVMe *nvme.System `json:"nvme"`
}

// nvmeFiles reads --nvme-id-ctrl/--nvme-apst/--nvme-power-state
// (NAME=FILE, or FILE for nvme0) and checks each file parses, so a bad
// file the user named is bad input, not a line among the problems.
func nvmeFiles(cmd *cobra.Command) (map[string]nvme.Files, error) {
	out := map[string]nvme.Files{}
	for _, f := range []struct {
		flag  string
		set   func(*nvme.Files, string)
		parse func([]byte) error
	}{
		{"nvme-id-ctrl", func(x *nvme.Files, p string) { x.IDCtrl = p }, func(b []byte) error { _, _, err := nvme.ParseIdentify(b); return err }},
		{"nvme-apst", func(x *nvme.Files, p string) { x.APST = p }, func(b []byte) error { _, _, err := nvme.ParseAPST(b); return err }},
		{"nvme-power-state", func(x *nvme.Files, p string) { x.PowerMgmt = p }, func(b []byte) error { _, _, err := nvme.ParsePowerManagement(b); return err }},
	} {
		vals, _ := cmd.Flags().GetStringArray(f.flag)
		for _, v := range vals {
			name, file, ok := strings.Cut(v, "=")
			if !ok {
				name, file = "nvme0", v
			}
			if !reNVMeName.MatchString(name) {
				return nil, usageErr("--%s %s: %q is not a controller name (like nvme0)", f.flag, v, name)
			}
			b, err := os.ReadFile(file)
			if err != nil {
				return nil, inputErr(fmt.Errorf("--%s: %w", f.flag, err))
			}
			if err := f.parse(b); err != nil {
				return nil, inputErr(fmt.Errorf("--%s %s: %w", f.flag, file, err))
			}
			x := out[name]
			f.set(&x, file)
			out[name] = x
		}
	}
	return out, nil
}

var reNVMeName = regexp.MustCompile(`^nvme[0-9]+$`)

func runStates(cmd *cobra.Command, args []string) error {
	root := sysfsRoot(cmd)
	files, err := nvmeFiles(cmd)
	if err != nil {
		return err
	}
	sataF, err := sataFiles(cmd)
	if err != nil {
		return err
	}
	dir, cleanup, err := openRoot(cmd, root)
	if err != nil {
		return err
	}
	defer cleanup()
	sfs := alpm.Open(dir)
	sfs.Files = sataF
	sata, err := sfs.Discover()
	switch {
	case errors.Is(err, alpm.ErrNoSysfs):
		sata = nil // no SCSI in this kernel (a VM with virtio-blk, a laptop with NVMe only)
	case err != nil:
		return failErr("states: %v", err)
	}
	opt := nvme.Options{Files: files}
	// The ioctl only makes sense on the live tree: a fixture's or archive's
	// controllers are not this machine's /dev/nvmeN.
	if ioctl, _ := cmd.Flags().GetBool("nvme-ioctl"); ioctl && filepath.Clean(dir) == alpm.DefaultRoot {
		opt.DevDir = nvme.DefaultDev
	}
	nv := nvme.Open(dir, opt)
	for name := range files {
		found := false
		for _, c := range nv.Ctrls {
			found = found || c.Name == name
		}
		if !found {
			return inputErr(fmt.Errorf("NVMe files given for %s, but %s has no class/nvme/%s", name, rootName(cmd, root), name))
		}
	}
	for name := range sataF {
		found := false
		if sata != nil {
			for _, h := range sata.Hosts {
				for _, d := range h.Devices {
					found = found || d.Name == name
				}
			}
		}
		if !found {
			return inputErr(fmt.Errorf("SATA files given for %s, but %s has no class/ata_device/%s with a drive", name, rootName(cmd, root), name))
		}
	}
	nv.Root = root
	out := cmd.OutOrStdout()
	if optBool(cmd, "json", "") {
		rep := statesReport{System: sata, NVMe: nv}
		if sata == nil {
			rep.System = &alpm.System{Schema: alpm.SchemaStates, Root: root, Hosts: []alpm.Host{}}
		}
		rep.System.Root = root
		return writeJSON(out, rep)
	}
	var b strings.Builder
	if sata != nil {
		sata.Root = root
		if err := sata.WriteText(&b); err != nil {
			return err
		}
	} else {
		fmt.Fprintf(&b, "sysfs root: %s\nSATA: no hosts (no class/scsi_host under the sysfs root)\n", root)
	}
	b.WriteString("\n")
	if err := nv.WriteText(&b); err != nil {
		return err
	}
	// Values read from sysfs and the IDENTIFY data (model strings, policy
	// files of a fixture tree) are shown, never acted on.
	_, err = io.WriteString(out, textsafe.Lines(b.String()))
	return err
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
	if st, err := os.Stat(root); err == nil && st.Mode().IsRegular() {
		return inputErr(fmt.Errorf("%s is a file (a tree archive?): set-policy writes a live tree; extract the archive to a directory first", rootName(cmd, root)))
	}
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
	nvmeNames, _ := cmd.Flags().GetStringSlice("nvme")
	var profiles []nvmesim.Profile
	for _, name := range nvmeNames {
		p, ok := nvmesim.ProfileByName(name)
		if !ok {
			var all []string
			for _, q := range nvmesim.Profiles() {
				all = append(all, q.Name)
			}
			return usageErr("--nvme %q: no such simulated NVMe drive (one of %s)", name, strings.Join(all, ", "))
		}
		profiles = append(profiles, p)
	}
	if min := map[bool]int{true: 0, false: 1}[len(profiles) > 0]; n < min || n > 26 {
		return usageErr("--drives %d: want %d to 26", n, min)
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
	root := args[0]
	if n > 0 {
		h, err := alpm.NewSimHost(args[0], drives)
		if err != nil {
			return failErr("simulate: %v", err)
		}
		root = h.Root
	}
	if len(profiles) > 0 {
		if err := nvmesim.BuildHost(root, profiles); err != nil {
			return failErr("simulate: %v", err)
		}
	}
	fmt.Fprintf(cmd.OutOrStdout(), "%s\n", root)
	return nil
}

// nvmeSetReport is the JSON form of nvme-set.
type nvmeSetReport struct {
	Schema   string        `json:"schema"`
	Root     string        `json:"sysfs_root"`
	Changes  []nvme.Change `json:"changes"`
	Restored []nvme.Change `json:"restored"`
	Held     bool          `json:"held"`
}

// nvmeSetRequest is what nvme-set was asked to change, every value checked.
type nvmeSetRequest struct {
	lat, apst, def, pol string // "" = leave alone
	defUs               uint64 // def, parsed
	hold                time.Duration
	ctrls               []string
}

// parseNVMeSet reads and checks nvme-set's flags: every value is checked
// before any write.
func parseNVMeSet(cmd *cobra.Command) (nvmeSetRequest, error) {
	get := func(f string) string { v, _ := cmd.Flags().GetString(f); return v }
	var q nvmeSetRequest
	q.lat, q.apst, q.def, q.pol = get("latency-us"), get("apst"), get("default-latency-us"), get("aspm-policy")
	q.hold, _ = cmd.Flags().GetDuration("hold")
	q.ctrls, _ = cmd.Flags().GetStringSlice("controller")
	if q.lat == "" && q.apst == "" && q.def == "" && q.pol == "" {
		return q, usageErr("nvme-set: nothing to set (give --latency-us, --apst, --default-latency-us or --aspm-policy)")
	}
	if q.lat != "" && q.apst != "" {
		return q, usageErr("nvme-set: --latency-us and --apst both set the tolerance; give one")
	}
	if q.lat != "" {
		if _, err := nvme.ParseTolerance(q.lat); err != nil {
			return q, usageErr("--latency-us: %v", err)
		}
	}
	if q.apst != "" && q.apst != "on" && q.apst != "off" {
		return q, usageErr("--apst %q: want on or off", q.apst)
	}
	if q.def != "" {
		v, err := strconv.ParseUint(q.def, 10, 64)
		if err != nil {
			return q, usageErr("--default-latency-us %q: want microseconds", q.def)
		}
		q.defUs = v
	}
	if q.pol != "" {
		if _, err := nvme.ParseASPMPolicyName(q.pol); err != nil {
			return q, usageErr("--aspm-policy: %v", err)
		}
	}
	for _, c := range q.ctrls {
		if !reNVMeName.MatchString(c) {
			return q, usageErr("--controller %q: not a controller name (like nvme0)", c)
		}
	}
	if q.hold < 0 {
		return q, usageErr("--hold %v: want a duration ≥ 0", q.hold)
	}
	return q, nil
}

func runNVMeSet(cmd *cobra.Command, args []string) error {
	root := sysfsRoot(cmd)
	q, err := parseNVMeSet(cmd)
	if err != nil {
		return err
	}
	st, err := os.Stat(root)
	if err != nil {
		return inputErr(fmt.Errorf("%s: %w", rootName(cmd, root), err))
	}
	if !st.IsDir() {
		return inputErr(fmt.Errorf("%s is not a directory (a tree archive?): nvme-set writes a live tree", rootName(cmd, root)))
	}
	fsys := alpm.DirFS(root)
	if filepath.Clean(root) != alpm.DefaultRoot {
		fsys = nvme.SimFS(fsys)
	}
	if (q.lat != "" || q.apst != "") && len(q.ctrls) == 0 {
		for _, c := range nvme.Discover(fsys, root, nvme.Options{}).Ctrls {
			if c.Tolerance != nil {
				q.ctrls = append(q.ctrls, c.Name)
			}
		}
		if len(q.ctrls) == 0 {
			return failErr("nvme-set: no controller under %s has %s (the kernel shows it only when it enabled APST)", root, "power/pm_qos_latency_tolerance_us")
		}
	}
	g := nvme.NewControlFS(root, fsys).Guard()
	release := g.RestoreOnExit(cmd.Context())
	changes, ok := applyNVMeSet(g, q)
	var restored []nvme.Change
	interrupted := false
	switch {
	case !ok:
		restored = release()
	case q.hold > 0:
		select {
		case <-time.After(q.hold):
		case <-cmd.Context().Done():
			interrupted = true
		}
		restored = release()
	default:
		// Keep the settings: stop watching without restoring.
		g.Keep()
		release()
	}
	out := cmd.OutOrStdout()
	if optBool(cmd, "json", "") {
		err = writeJSON(out, nvmeSetReport{Schema: "idlewatt.states.nvme-set/v1", Root: root, Changes: changes, Restored: restored, Held: q.hold > 0})
	} else {
		err = writeChangesText(out, changes, restored, ok && q.hold == 0)
	}
	if err != nil {
		return err
	}
	switch {
	case !ok:
		return failErr("nvme-set: a write failed; every change made was restored")
	case nvme.Failed(restored):
		return failErr("nvme-set: restoring failed for some files (listed above)")
	case interrupted:
		return failErr("nvme-set: interrupted; settings restored")
	}
	return nil
}

// applyNVMeSet makes the changes q asks for through g, in order (default
// tolerance, each controller, ASPM policy), stopping at the first that
// fails; ok is false if one did.
func applyNVMeSet(g *nvme.Guard, q nvmeSetRequest) (changes []nvme.Change, ok bool) {
	apply := func(c nvme.Change, err error) bool {
		if err != nil { // refused before I/O: cannot happen after parseNVMeSet's checks
			c = nvme.Change{Error: err.Error(), Err: err}
		}
		changes = append(changes, c)
		return c.Err == nil
	}
	ok = true
	if q.def != "" {
		ok = apply(g.SetDefaultLatency(q.defUs), nil)
	}
	for _, c := range q.ctrls {
		if !ok {
			break
		}
		switch {
		case q.lat != "":
			ok = apply(g.SetLatencyTolerance(c, q.lat))
		case q.apst != "":
			ok = apply(g.SetAPST(c, q.apst == "on"))
		}
	}
	if ok && q.pol != "" {
		ok = apply(g.SetASPMPolicy(q.pol))
	}
	return changes, ok
}

func writeChangesText(w io.Writer, changes, restored []nvme.Change, kept bool) error {
	var b strings.Builder
	for _, c := range changes {
		if c.Err != nil {
			fmt.Fprintf(&b, "FAILED: %s\n", c.Error)
			continue
		}
		fmt.Fprintf(&b, "%s: %s → %s (reads %s)\n", c.File, c.Previous, c.Requested, c.ReadBack)
	}
	for _, c := range restored {
		if c.Err != nil {
			fmt.Fprintf(&b, "restore FAILED: %s\n", c.Error)
			continue
		}
		fmt.Fprintf(&b, "restored %s: %s\n", c.File, c.ReadBack)
	}
	if kept {
		b.WriteString("kept until reboot (use --hold D to restore after D)\n")
	}
	_, err := io.WriteString(w, textsafe.Lines(b.String()))
	return err
}
