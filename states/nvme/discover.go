package nvme

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path"
	"regexp"
	"sort"
	"strconv"
	"strings"

	"github.com/idlewatt/idlewatt/states/alpm"
)

// Sysfs names (Documentation/ABI/testing/sysfs-class-nvme,
// sysfs-devices-power, sysfs-bus-pci; drivers/pci/pcie/aspm.c).
const (
	classNVMe    = "class/nvme"
	fTolerance   = "power/pm_qos_latency_tolerance_us"
	aspmPolicy   = "module/pcie_aspm/parameters/policy"
	nvmeCoreDir  = "module/nvme_core/parameters"
	dmiDir       = "class/dmi/id"
	fIDCtrl      = "idlewatt_id_ctrl.json"    // optional: nvme id-ctrl -o json
	fFeature0C   = "idlewatt_feature_0c.json" // optional: nvme get-feature -f 0x0c -H -o json
	fFeature02   = "idlewatt_feature_02.json" // optional: nvme get-feature -f 0x02 -H -o json
	SchemaNVMe   = "idlewatt.states.nvme/v1"
	DefaultDev   = "/dev"
	linkDir      = "link"
	deviceLink   = "device"
	pciAddrRegex = `^[0-9a-f]{4}:[0-9a-f]{2}:[0-9a-f]{2}\.[0-7]$`
)

// The link files in the order the kernel lists them (aspm.c
// aspm_ctrl_attrs).
var linkFiles = []string{"clkpm", "l0s_aspm", "l1_aspm", "l1_1_aspm", "l1_2_aspm", "l1_1_pcipm", "l1_2_pcipm"}

var (
	rePCI  = regexp.MustCompile(pciAddrRegex)
	reCtrl = regexp.MustCompile(`^nvme[0-9]+$`)
)

// Options say where else to read controller data from.
type Options struct {
	// DevDir holds the controllers' character devices for the admin
	// ioctl ("" disables it: fixture trees have no devices behind them).
	DevDir string
	// Files are inputs given by the user, per controller name ("nvme0").
	Files map[string]Files
}

// Files are paths of saved nvme-cli output (any format ParseIdentify,
// ParseAPST, ParsePowerManagement read).
type Files struct {
	IDCtrl, APST, PowerMgmt string
}

// System is what discovery found under one sysfs root.
type System struct {
	Schema string `json:"schema"`
	Root   string `json:"sysfs_root"`
	// ASPMPolicy is pcie_aspm's policy; nil when unreadable (no PCIe
	// ASPM support in the kernel, or not in the tree).
	ASPMPolicy *ASPMPolicy  `json:"aspm_policy"`
	Module     ModuleParams `json:"nvme_core"`
	DMI        DMI          `json:"dmi"`
	Ctrls      []Controller `json:"controllers"`
	Problems   []string     `json:"problems,omitempty"`
}

// ASPMPolicy is /sys/module/pcie_aspm/parameters/policy.
type ASPMPolicy struct {
	Current   string   `json:"current"`
	Available []string `json:"available"`
}

// Controller is one /sys/class/nvme/nvmeN.
type Controller struct {
	Name      string `json:"controller"` // "nvme0"
	Path      string `json:"sysfs_path"`
	Model     string `json:"model,omitempty"`
	Serial    string `json:"serial,omitempty"`
	Firmware  string `json:"firmware_rev,omitempty"`
	Address   string `json:"address,omitempty"`
	Transport string `json:"transport,omitempty"`
	State     string `json:"state,omitempty"`
	PCI       *PCI   `json:"pci,omitempty"`
	// Tolerance is power/pm_qos_latency_tolerance_us; nil when the file
	// is absent, which the kernel does when it did not enable APST for
	// this controller (APSTA clear or NO_APST quirk).
	Tolerance *Tolerance `json:"latency_tolerance"`

	Identify       *Identify        `json:"identify,omitempty"`
	IdentifySource string           `json:"identify_source,omitempty"`
	APST           *APST            `json:"apst_feature,omitempty"`
	APSTSource     string           `json:"apst_source,omitempty"`
	PowerMgmt      *PowerManagement `json:"power_management,omitempty"`
	PowerSource    string           `json:"power_management_source,omitempty"`
	Quirks         []QuirkMatch     `json:"quirks"`
	// Kernel is the APST table the kernel programs under the current
	// settings (nil without Identify data).
	Kernel      *KernelPlan      `json:"kernel_apst,omitempty"`
	Eligibility alpm.Eligibility `json:"eligibility"`
}

// PCI is the controller's PCI function and the links above it.
type PCI struct {
	Address string     `json:"address"`
	Vendor  alpm.Hex16 `json:"vendor"`
	Device  alpm.Hex16 `json:"device"`
	// Links from the controller up towards the root complex: Links[0]
	// joins the controller to its upstream port.
	Links []Link `json:"links"`
}

// Link is one PCIe link as the kernel shows it in the link/ directory of
// its downstream device. A nil state means the file is absent: the link
// is not capable of that state (aspm.c hides the attribute), or ASPM is
// disabled in the kernel.
type Link struct {
	Downstream string `json:"downstream"` // PCI address whose link/ this is
	Upstream   string `json:"upstream"`   // the port above it
	// Present is false when the downstream device has no link/ directory.
	Present bool             `json:"present"`
	States  map[string]*bool `json:"states"`
}

// Enabled reports a state: nil when not exposed.
func (l Link) Enabled(name string) *bool { return l.States[name] }

// Tolerance is a per-device latency tolerance.
type Tolerance struct {
	Raw string `json:"raw"` // "100000", "auto", "any"
	// Us is the kernel's ps_max_latency_us: Unlimited for auto/any.
	Us uint64 `json:"tolerance_us"`
}

// Discover reads every NVMe controller under the tree. A missing class/nvme
// gives an empty list, not an error (a machine without NVMe); a file that
// exists but cannot be parsed is a Problem naming it.
func Discover(fsys alpm.FS, root string, opt Options) *System {
	d := &discoverer{fs: fsys, sys: &System{Schema: SchemaNVMe, Root: root, Ctrls: []Controller{}}, opt: opt}
	d.readGlobals()
	entries, err := fsys.ReadDir(classNVMe)
	if err != nil && !isNotExist(err) {
		d.problem(classNVMe, err)
	}
	for _, e := range entries {
		if !reCtrl.MatchString(e.Name()) {
			continue // not a controller (nothing else lives here on Linux; a hand-made tree may differ)
		}
		d.sys.Ctrls = append(d.sys.Ctrls, d.readController(e.Name()))
	}
	sort.Slice(d.sys.Ctrls, func(i, j int) bool { return natLess(d.sys.Ctrls[i].Name, d.sys.Ctrls[j].Name) })
	for i := range d.sys.Ctrls {
		c := &d.sys.Ctrls[i]
		c.Eligibility = Eligible(d.sys, c)
	}
	return d.sys
}

// Open discovers under a directory.
func Open(root string, opt Options) *System { return Discover(alpm.DirFS(root), root, opt) }

type discoverer struct {
	fs  alpm.FS
	sys *System
	opt Options
}

func isNotExist(err error) bool { return errors.Is(err, fs.ErrNotExist) }

func (d *discoverer) problem(name string, err error) {
	d.sys.Problems = append(d.sys.Problems, fmt.Sprintf("%s: %v", name, err))
}

// read returns a file's content with surrounding space trimmed; missing
// files are ok=false without a problem.
func (d *discoverer) read(name string) (string, bool) {
	b, err := d.fs.ReadFile(name)
	if err != nil {
		if !isNotExist(err) {
			d.problem(name, err)
		}
		return "", false
	}
	return strings.TrimSpace(string(b)), true
}

func (d *discoverer) readGlobals() {
	if s, ok := d.read(aspmPolicy); ok {
		p, err := ParseASPMPolicy(s)
		if err != nil {
			d.problem(aspmPolicy, err)
		} else {
			d.sys.ASPMPolicy = &p
		}
	}
	m := &d.sys.Module
	for _, u := range []struct {
		name string
		dst  **uint64
	}{
		{"default_ps_max_latency_us", &m.DefaultPSMaxLatencyUs},
		{"apst_primary_timeout_ms", &m.APSTPrimaryTimeoutMs},
		{"apst_primary_latency_tol_us", &m.APSTPrimaryLatencyTolUs},
		{"apst_secondary_timeout_ms", &m.APSTSecondaryTimeoutMs},
		{"apst_secondary_latency_tol_us", &m.APSTSecondaryLatencyTolUs},
	} {
		name := path.Join(nvmeCoreDir, u.name)
		if s, ok := d.read(name); ok {
			v, err := strconv.ParseUint(s, 10, 64)
			if err != nil {
				d.problem(name, fmt.Errorf("%q is not an unsigned integer", clip(s, 20)))
				continue
			}
			*u.dst = &v
		}
	}
	name := path.Join(nvmeCoreDir, "force_apst")
	if s, ok := d.read(name); ok {
		switch s {
		case "Y", "1":
			m.ForceAPST = new(true)
		case "N", "0":
			m.ForceAPST = new(false)
		default:
			d.problem(name, fmt.Errorf("%q, want Y or N", clip(s, 20)))
		}
	}
	for _, f := range []struct {
		name string
		dst  *string
	}{{"sys_vendor", &d.sys.DMI.SysVendor}, {"product_name", &d.sys.DMI.ProductName},
		{"board_vendor", &d.sys.DMI.BoardVendor}, {"board_name", &d.sys.DMI.BoardName}} {
		if s, ok := d.read(path.Join(dmiDir, f.name)); ok {
			*f.dst = s
		}
	}
}

// ParseASPMPolicy reads "[default] performance powersave powersupersave".
func ParseASPMPolicy(s string) (ASPMPolicy, error) {
	var p ASPMPolicy
	for _, f := range strings.Fields(s) {
		if strings.HasPrefix(f, "[") && strings.HasSuffix(f, "]") {
			if p.Current != "" {
				return p, fmt.Errorf("%q: two current policies", clip(s, 60))
			}
			f = strings.Trim(f, "[]")
			p.Current = f
		}
		p.Available = append(p.Available, f)
	}
	if p.Current == "" {
		return p, fmt.Errorf("%q: no [current] policy", clip(s, 60))
	}
	return p, nil
}

// ParseTolerance reads pm_qos_latency_tolerance_us ("auto", "any" or µs).
func ParseTolerance(s string) (Tolerance, error) {
	switch s {
	case "auto", "any":
		return Tolerance{Raw: s, Us: Unlimited}, nil
	}
	v, err := strconv.ParseInt(s, 10, 32)
	if err != nil || v < 0 {
		return Tolerance{}, fmt.Errorf("%q, want auto, any or microseconds (0 to %d)", clip(s, 20), int32(^uint32(0)>>1))
	}
	return Tolerance{Raw: s, Us: uint64(v)}, nil
}

func (d *discoverer) readController(name string) Controller {
	dir := path.Join(classNVMe, name)
	c := Controller{Name: name, Path: dir, Quirks: []QuirkMatch{}}
	if p, err := alpm.Resolve(d.fs, dir); err == nil {
		c.Path = p
	} else {
		d.problem(dir, err)
	}
	for _, f := range []struct {
		file string
		dst  *string
	}{{"model", &c.Model}, {"serial", &c.Serial}, {"firmware_rev", &c.Firmware},
		{"address", &c.Address}, {"transport", &c.Transport}, {"state", &c.State}} {
		if s, ok := d.read(path.Join(dir, f.file)); ok {
			*f.dst = s
		}
	}
	if s, ok := d.read(path.Join(dir, fTolerance)); ok {
		if t, err := ParseTolerance(s); err != nil {
			d.problem(path.Join(dir, fTolerance), err)
		} else {
			c.Tolerance = &t
		}
	}
	c.PCI = d.readPCI(dir, c.Path)
	d.readAdmin(&c, dir)

	keys := QuirkKeys{Model: c.Model, Firmware: c.Firmware, DMI: d.sys.DMI}
	if c.PCI != nil {
		keys.Vendor, keys.Device, keys.VID = uint16(c.PCI.Vendor), uint16(c.PCI.Device), uint16(c.PCI.Vendor)
	}
	if c.Identify != nil {
		keys.VID, keys.Model, keys.Firmware = uint16(c.Identify.VID), c.Identify.Model, c.Identify.Firmware
	}
	c.Quirks = append(c.Quirks, MatchQuirks(keys)...)
	if c.Identify != nil {
		p := PlanAPST(c.Identify, c.effectiveTolerance(d.sys.Module), quirkBits(c.Quirks), d.sys.Module)
		c.Kernel = &p
	}
	return c
}

// effectiveTolerance is the ps_max_latency_us the kernel uses: the
// device's file, else (file hidden) the module default it was set from.
func (c *Controller) effectiveTolerance(m ModuleParams) uint64 {
	if c.Tolerance != nil {
		return c.Tolerance.Us
	}
	def, _, _, _, _, _ := m.effective()
	return min(def, 1<<31-1)
}

// readPCI finds the PCI function (the device link, else the parent of
// nvme/nvmeN in the resolved path) and the links up to the root port.
func (d *discoverer) readPCI(dir, resolved string) *PCI {
	pdir := ""
	if p, err := alpm.Resolve(d.fs, path.Join(dir, deviceLink)); err == nil && rePCI.MatchString(path.Base(p)) {
		pdir = p
	} else if parent := path.Dir(path.Dir(resolved)); rePCI.MatchString(path.Base(parent)) {
		pdir = parent
	}
	if pdir == "" {
		return nil
	}
	p := &PCI{Address: path.Base(pdir), Links: []Link{}}
	for _, f := range []struct {
		file string
		dst  *alpm.Hex16
	}{{"vendor", &p.Vendor}, {"device", &p.Device}} {
		if s, ok := d.read(path.Join(pdir, f.file)); ok {
			v, err := strconv.ParseUint(strings.TrimPrefix(s, "0x"), 16, 16)
			if err != nil {
				d.problem(path.Join(pdir, f.file), fmt.Errorf("%q is not a 16-bit hex ID", clip(s, 20)))
				continue
			}
			*f.dst = alpm.Hex16(v)
		}
	}
	// Walk up while the parent is a PCI function: each hop is a link
	// (the endpoint's to its root or switch port, then switch links).
	for cur := pdir; ; {
		up := path.Dir(cur)
		if !rePCI.MatchString(path.Base(up)) {
			break
		}
		p.Links = append(p.Links, d.readLink(cur, path.Base(up)))
		cur = up
	}
	return p
}

func (d *discoverer) readLink(dev, upstream string) Link {
	l := Link{Downstream: path.Base(dev), Upstream: upstream, States: map[string]*bool{}}
	ld := path.Join(dev, linkDir)
	if _, err := d.fs.ReadDir(ld); err != nil {
		if !isNotExist(err) {
			d.problem(ld, err)
		}
		return l
	}
	l.Present = true
	for _, f := range linkFiles {
		name := path.Join(ld, f)
		s, ok := d.read(name)
		if !ok {
			continue
		}
		switch s {
		case "1":
			l.States[f] = new(true)
		case "0":
			l.States[f] = new(false)
		default:
			d.problem(name, fmt.Errorf("%q, want 0 or 1", clip(s, 20)))
		}
	}
	return l
}

// readAdmin gets Identify, APST and power state: a file the user gave,
// else the ioctl, else the optional files in the tree.
func (d *discoverer) readAdmin(c *Controller, dir string) {
	files := d.opt.Files[c.Name]
	var dev *Device
	if d.opt.DevDir != "" {
		var err error
		if dev, err = OpenDevice(path.Join(d.opt.DevDir, c.Name)); err != nil {
			d.sys.Problems = append(d.sys.Problems, err.Error())
			dev = nil
		} else {
			defer dev.Close()
		}
	}
	// Identify.
	switch {
	case files.IDCtrl != "":
		if b, ok := d.userFile(files.IDCtrl); ok {
			d.setIdentify(c, b, files.IDCtrl, "file "+files.IDCtrl)
		}
	case dev != nil && d.ioctlIdentify(c, dev):
	default:
		if b, ok := d.treeFile(path.Join(dir, fIDCtrl)); ok {
			d.setIdentify(c, b, path.Join(dir, fIDCtrl), "sysfs tree "+fIDCtrl)
		}
	}
	// APST.
	switch {
	case files.APST != "":
		if b, ok := d.userFile(files.APST); ok {
			d.setAPST(c, b, files.APST, "file "+files.APST)
		}
	case dev != nil && d.ioctlAPST(c, dev):
	default:
		if b, ok := d.treeFile(path.Join(dir, fFeature0C)); ok {
			d.setAPST(c, b, path.Join(dir, fFeature0C), "sysfs tree "+fFeature0C)
		}
	}
	// Power management.
	switch {
	case files.PowerMgmt != "":
		if b, ok := d.userFile(files.PowerMgmt); ok {
			d.setPower(c, b, files.PowerMgmt, "file "+files.PowerMgmt)
		}
	case dev != nil && d.ioctlPower(c, dev):
	default:
		if b, ok := d.treeFile(path.Join(dir, fFeature02)); ok {
			d.setPower(c, b, path.Join(dir, fFeature02), "sysfs tree "+fFeature02)
		}
	}
}

func (d *discoverer) userFile(p string) ([]byte, bool) {
	b, err := os.ReadFile(p)
	if err != nil {
		d.problem(p, err)
		return nil, false
	}
	return b, true
}

func (d *discoverer) treeFile(name string) ([]byte, bool) {
	b, err := d.fs.ReadFile(name)
	if err != nil {
		if !isNotExist(err) {
			d.problem(name, err)
		}
		return nil, false
	}
	return b, true
}

func (d *discoverer) setIdentify(c *Controller, b []byte, where, source string) {
	id, format, err := ParseIdentify(b)
	if err != nil {
		d.problem(where, err)
		return
	}
	c.Identify, c.IdentifySource = id, source+", "+format
}

func (d *discoverer) setAPST(c *Controller, b []byte, where, source string) {
	a, format, err := ParseAPST(b)
	if err != nil {
		d.problem(where, err)
		return
	}
	c.APST, c.APSTSource = a, source+", "+format
}

func (d *discoverer) setPower(c *Controller, b []byte, where, source string) {
	pm, format, err := ParsePowerManagement(b)
	if err != nil {
		d.problem(where, err)
		return
	}
	c.PowerMgmt, c.PowerSource = &pm, source+", "+format
}

func (d *discoverer) ioctlIdentify(c *Controller, dev *Device) bool {
	b, err := dev.Identify()
	if err != nil {
		d.sys.Problems = append(d.sys.Problems, err.Error())
		return false
	}
	id, err := DecodeIdentify(b)
	if err != nil {
		d.problem(dev.Path, err)
		return false
	}
	c.Identify, c.IdentifySource = id, "ioctl "+dev.Path
	return true
}

func (d *discoverer) ioctlAPST(c *Controller, dev *Device) bool {
	dw0, b, err := dev.GetFeature(FeatureAPST, APSTTableSize)
	if err != nil {
		d.sys.Problems = append(d.sys.Problems, err.Error())
		return false
	}
	e, err := DecodeAPSTTable(b)
	if err != nil {
		d.problem(dev.Path, err)
		return false
	}
	c.APST, c.APSTSource = &APST{Enabled: new(dw0&1 == 1), Entries: e}, "ioctl "+dev.Path
	return true
}

func (d *discoverer) ioctlPower(c *Controller, dev *Device) bool {
	dw0, _, err := dev.GetFeature(FeaturePowerManagement, 0)
	if err != nil {
		d.sys.Problems = append(d.sys.Problems, err.Error())
		return false
	}
	pm := DecodePowerManagement(dw0)
	c.PowerMgmt, c.PowerSource = &pm, "ioctl "+dev.Path
	return true
}

// natLess orders "nvme2" before "nvme10".
func natLess(a, b string) bool {
	ta, na := splitNum(a)
	tb, nb := splitNum(b)
	if ta != tb {
		return ta < tb
	}
	if na != nb {
		return na < nb
	}
	return a < b
}

func splitNum(s string) (string, int) {
	i := len(s)
	for i > 0 && s[i-1] >= '0' && s[i-1] <= '9' {
		i--
	}
	n, _ := strconv.Atoi(s[i:])
	return s[:i], n
}
