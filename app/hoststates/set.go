package hoststates

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/idlewatt/idlewatt/internal/outfile"
	"github.com/idlewatt/idlewatt/internal/settings"
	"github.com/idlewatt/idlewatt/internal/textsafe"
	"github.com/idlewatt/idlewatt/states/alpm"
	"github.com/idlewatt/idlewatt/states/nvme"
	"github.com/idlewatt/idlewatt/states/nvme/nvmehost"
	nvmesim "github.com/idlewatt/idlewatt/states/nvme/sim"
)

// PolicyFlags are `states set-policy`'s own settings.
var PolicyFlags = []settings.Flag{
	{Name: "host", Kind: settings.Strings, Help: "scsi_host to write (hostN; repeat or comma-separate)"},
}

// policyReport is the JSON form of set-policy.
type policyReport struct {
	Schema  string            `json:"schema"`
	Root    string            `json:"sysfs_root"`
	Policy  alpm.Policy       `json:"policy"`
	Results []alpm.HostResult `json:"results"`
}

// SetPolicy writes the ALPM policy name to every SATA host of the tree (or
// --host's), and what each host did to w. A host's failed write is a
// failure, after every host's result is written.
func SetPolicy(g settings.Getter, name string, w io.Writer) error {
	p, err := alpm.ParseWritablePolicy(name)
	if err != nil {
		return settings.Input(err)
	}
	hosts := g.List("host")
	root := root(g)
	if st, err := os.Stat(root); err == nil && st.Mode().IsRegular() {
		return settings.Input(fmt.Errorf("%s is a file (a tree archive?): set-policy writes a live tree; extract the archive to a directory first", rootName(g, root)))
	}
	res, err := alpm.Open(root).SetPolicy(hosts, p)
	if err != nil {
		if errors.Is(err, alpm.ErrNoSysfs) {
			return settings.Input(fmt.Errorf("--sysfs-root: %w", err))
		}
		return fmt.Errorf("set-policy: %v", err)
	}
	if g.Bool("json") {
		err = WriteJSON(w, policyReport{Schema: "idlewatt.states.set-policy/v1", Root: root, Policy: p, Results: res})
	} else {
		err = alpm.WriteResultsText(w, res)
	}
	if err != nil {
		return err
	}
	if len(res) == 0 {
		return fmt.Errorf("set-policy: no host under %s has a link_power_management_policy", root)
	}
	if alpm.Failed(res) {
		n := 0
		for _, r := range res {
			if r.Err != nil {
				n++
			}
		}
		return fmt.Errorf("set-policy %s: %d of %d hosts failed", p, n, len(res))
	}
	return nil
}

// SimulateFlags are `states simulate`'s own settings.
var SimulateFlags = []settings.Flag{
	{Name: "drives", Kind: settings.Int, Default: 2, Help: "number of simulated SATA drives (0 with --nvme: none)"},
	{Name: "nvme", Kind: settings.Strings, Help: "simulated NVMe drives to add (980pro-1tb, 660p-1tb)"},
	outfile.Flag("the files of a tree already in DIR", ""),
}

// Simulate builds a simulated host's tree in dir (a new or empty
// directory, or one with --overwrite: dir could otherwise be any
// directory, /sys included) and returns its root.
func Simulate(g settings.Getter, dir string, oo outfile.Options) (string, error) {
	n, err := g.Int("drives")
	if err != nil {
		return "", err
	}
	var profiles []nvmesim.Profile
	for _, name := range g.List("nvme") {
		p, ok := nvmesim.ProfileByName(name)
		if !ok {
			var all []string
			for _, q := range nvmesim.Profiles() {
				all = append(all, q.Name)
			}
			return "", settings.Usagef("--nvme %q: no such simulated NVMe drive (one of %s)", name, strings.Join(all, ", "))
		}
		profiles = append(profiles, p)
	}
	if min := map[bool]int{true: 0, false: 1}[len(profiles) > 0]; n < min || n > 26 {
		return "", settings.Usagef("--drives %d: want %d to 26", n, min)
	}
	if err := outfile.RunDir(dir, oo); err != nil {
		return "", settings.Input(fmt.Errorf("states simulate: %w", err))
	}
	drives := make([]alpm.DriveSpec, n)
	for i := range drives {
		drives[i] = alpm.DriveSpec{Model: fmt.Sprintf("idlewatt SIM SSD %d", i), Serial: fmt.Sprintf("SIM%04d", i),
			Firmware: "SIM1", Sectors: 500118192, HIPM: true, DIPM: true, DIPMEnabled: true, DevSlp: true,
			Log: true, LogValid: true, MDATms: 10, DETOms: 20}
	}
	root := dir
	if n > 0 {
		h, err := alpm.NewSimHost(dir, drives)
		if err != nil {
			return "", fmt.Errorf("simulate: %v", err)
		}
		root = h.Root
	}
	if len(profiles) > 0 {
		if err := nvmesim.BuildHost(root, profiles); err != nil {
			return "", fmt.Errorf("simulate: %v", err)
		}
	}
	return root, nil
}

// NVMeSetFlags are `states nvme-set`'s own settings.
var NVMeSetFlags = []settings.Flag{
	{Name: "controller", Kind: settings.Strings, Help: "NVMe controller to write (nvmeN; repeat or comma-separate)"},
	{Name: "latency-us", Kind: settings.String, Help: "per-controller latency tolerance: microseconds, auto or any"},
	{Name: "apst", Kind: settings.String, Help: "on or off (off writes tolerance 0)"},
	{Name: "default-latency-us", Kind: settings.String, Help: "nvme_core.default_ps_max_latency_us (new controllers only)"},
	{Name: "aspm-policy", Kind: settings.String, Help: "pcie_aspm policy"},
	{Name: "hold", Kind: settings.GoDuration, Help: "keep the settings this long, then restore them (0: keep until reboot)"},
}

// nvmeSetReport is the JSON form of nvme-set.
type nvmeSetReport struct {
	Schema   string            `json:"schema"`
	Root     string            `json:"sysfs_root"`
	Changes  []nvmehost.Change `json:"changes"`
	Restored []nvmehost.Change `json:"restored"`
	Held     bool              `json:"held"`
}

// nvmeSetRequest is what nvme-set was asked to change, every value checked.
type nvmeSetRequest struct {
	lat, apst, def, pol string // "" = leave alone
	defUs               uint64 // def, parsed
	hold                time.Duration
	ctrls               []string
}

// readNVMeSet reads and checks nvme-set's settings: every value is checked
// before any write.
func readNVMeSet(g settings.Getter) (nvmeSetRequest, error) {
	var q nvmeSetRequest
	q.lat, q.apst, q.def, q.pol = g.String("latency-us"), g.String("apst"), g.String("default-latency-us"), g.String("aspm-policy")
	q.hold, _ = g.Duration("hold")
	q.ctrls = g.List("controller")
	if q.lat == "" && q.apst == "" && q.def == "" && q.pol == "" {
		return q, settings.Usagef("nvme-set: nothing to set (give --latency-us, --apst, --default-latency-us or --aspm-policy)")
	}
	if q.lat != "" && q.apst != "" {
		return q, settings.Usagef("nvme-set: --latency-us and --apst both set the tolerance; give one")
	}
	if q.lat != "" {
		if _, err := nvme.ParseTolerance(q.lat); err != nil {
			return q, settings.Usagef("--latency-us: %v", err)
		}
	}
	if q.apst != "" && q.apst != "on" && q.apst != "off" {
		return q, settings.Usagef("--apst %q: want on or off", q.apst)
	}
	if q.def != "" {
		v, err := strconv.ParseUint(q.def, 10, 64)
		if err != nil {
			return q, settings.Usagef("--default-latency-us %q: want microseconds", q.def)
		}
		q.defUs = v
	}
	if q.pol != "" {
		if _, err := nvme.ParseASPMPolicyName(q.pol); err != nil {
			return q, settings.Usagef("--aspm-policy: %v", err)
		}
	}
	for _, c := range q.ctrls {
		if !reNVMeName.MatchString(c) {
			return q, settings.Usagef("--controller %q: not a controller name (like nvme0)", c)
		}
	}
	if q.hold < 0 {
		return q, settings.Usagef("--hold %v: want a duration ≥ 0", q.hold)
	}
	return q, nil
}

// NVMeSet makes the changes nvme-set's settings ask, all or nothing (a
// failed write puts back the ones made), holds them for --hold or until
// ctx is done, restores them, and writes what it did to w.
func NVMeSet(ctx context.Context, g settings.Getter, w io.Writer) error {
	root := root(g)
	q, err := readNVMeSet(g)
	if err != nil {
		return err
	}
	st, err := os.Stat(root)
	if err != nil {
		return settings.Input(fmt.Errorf("%s: %w", rootName(g, root), err))
	}
	if !st.IsDir() {
		return settings.Input(fmt.Errorf("%s is not a directory (a tree archive?): nvme-set writes a live tree", rootName(g, root)))
	}
	fsys := alpm.DirFS(root)
	if filepath.Clean(root) != alpm.DefaultRoot {
		fsys = nvmehost.SimFS(fsys)
	}
	if (q.lat != "" || q.apst != "") && len(q.ctrls) == 0 {
		for _, c := range nvmehost.Discover(fsys, root, nvmehost.Options{}).Ctrls {
			if c.Tolerance != nil {
				q.ctrls = append(q.ctrls, c.Name)
			}
		}
		if len(q.ctrls) == 0 {
			return fmt.Errorf("nvme-set: no controller under %s has %s (the kernel shows it only when it enabled APST)", root, "power/pm_qos_latency_tolerance_us")
		}
	}
	g2 := nvmehost.NewControlFS(root, fsys).Guard()
	release := g2.RestoreOnExit(ctx)
	changes, ok := applyNVMeSet(g2, q)
	var restored []nvmehost.Change
	interrupted := false
	switch {
	case !ok:
		restored = release()
	case q.hold > 0:
		select {
		case <-time.After(q.hold):
		case <-ctx.Done():
			interrupted = true
		}
		restored = release()
	default:
		// Keep the settings: stop watching without restoring.
		g2.Keep()
		release()
	}
	if g.Bool("json") {
		err = WriteJSON(w, nvmeSetReport{Schema: "idlewatt.states.nvme-set/v1", Root: root, Changes: changes, Restored: restored, Held: q.hold > 0})
	} else {
		err = writeChangesText(w, changes, restored, ok && q.hold == 0)
	}
	if err != nil {
		return err
	}
	switch {
	case !ok:
		return errors.New("nvme-set: a write failed; every change made was restored")
	case nvmehost.Failed(restored):
		return errors.New("nvme-set: restoring failed for some files (listed above)")
	case interrupted:
		return errors.New("nvme-set: interrupted; settings restored")
	}
	return nil
}

// applyNVMeSet makes the changes q asks for through g, in order (default
// tolerance, each controller, ASPM policy), stopping at the first that
// fails; ok is false if one did.
func applyNVMeSet(g *nvmehost.Guard, q nvmeSetRequest) (changes []nvmehost.Change, ok bool) {
	apply := func(c nvmehost.Change, err error) bool {
		if err != nil { // refused before I/O: cannot happen after readNVMeSet's checks
			c = nvmehost.Change{Error: err.Error(), Err: err}
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

func writeChangesText(w io.Writer, changes, restored []nvmehost.Change, kept bool) error {
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
