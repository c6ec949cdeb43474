package nvmehost

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path"
	"regexp"
	"strconv"
	"strings"

	"github.com/idlewatt/idlewatt/states/alpm"
	"github.com/idlewatt/idlewatt/states/nvme"
)

// DefaultDev is where the controllers' character devices live.
const DefaultDev = "/dev"

const pciAddrRegex = `^[0-9a-f]{4}:[0-9a-f]{2}:[0-9a-f]{2}\.[0-7]$`

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

// Discover reads every NVMe controller under the tree, then has
// nvme.Assess derive quirks, the kernel's APST plan and eligibility. A
// missing class/nvme gives an empty list, not an error (a machine without
// NVMe); a file that exists but cannot be parsed is a Problem naming it.
func Discover(fsys alpm.FS, root string, opt Options) *nvme.System {
	d := &discoverer{fs: fsys, sys: &nvme.System{Schema: nvme.SchemaNVMe, Root: root, Ctrls: []nvme.Controller{}}, opt: opt}
	d.readGlobals()
	entries, err := fsys.ReadDir(nvme.ClassNVMe)
	if err != nil && !isNotExist(err) {
		d.problem(nvme.ClassNVMe, err)
	}
	for _, e := range entries {
		if !reCtrl.MatchString(e.Name()) {
			continue // not a controller (nothing else lives here on Linux; a hand-made tree may differ)
		}
		d.sys.Ctrls = append(d.sys.Ctrls, d.readController(e.Name()))
	}
	nvme.Assess(d.sys)
	return d.sys
}

// Open discovers under a directory.
func Open(root string, opt Options) *nvme.System { return Discover(alpm.DirFS(root), root, opt) }

type discoverer struct {
	fs  alpm.FS
	sys *nvme.System
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
	if s, ok := d.read(nvme.ASPMPolicyFile); ok {
		p, err := nvme.ParseASPMPolicy(s)
		if err != nil {
			d.problem(nvme.ASPMPolicyFile, err)
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
		name := path.Join(nvme.DirNVMeCore, u.name)
		if s, ok := d.read(name); ok {
			v, err := strconv.ParseUint(s, 10, 64)
			if err != nil {
				d.problem(name, fmt.Errorf("%q is not an unsigned integer", clip(s, 20)))
				continue
			}
			*u.dst = &v
		}
	}
	name := path.Join(nvme.DirNVMeCore, "force_apst")
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
		if s, ok := d.read(path.Join(nvme.DirDMI, f.name)); ok {
			*f.dst = s
		}
	}
}

func (d *discoverer) readController(name string) nvme.Controller {
	dir := path.Join(nvme.ClassNVMe, name)
	c := nvme.Controller{Name: name, Path: dir, Quirks: []nvme.QuirkMatch{}}
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
	if s, ok := d.read(path.Join(dir, nvme.FileTolerance)); ok {
		if t, err := nvme.ParseTolerance(s); err != nil {
			d.problem(path.Join(dir, nvme.FileTolerance), err)
		} else {
			c.Tolerance = &t
		}
	}
	c.PCI = d.readPCI(dir, c.Path)
	d.readAdmin(&c, dir)

	return c
}

// readPCI finds the PCI function (the device link, else the parent of
// nvme/nvmeN in the resolved path) and the links up to the root port.
func (d *discoverer) readPCI(dir, resolved string) *nvme.PCI {
	pdir := ""
	if p, err := alpm.Resolve(d.fs, path.Join(dir, nvme.LinkDevice)); err == nil && rePCI.MatchString(path.Base(p)) {
		pdir = p
	} else if parent := path.Dir(path.Dir(resolved)); rePCI.MatchString(path.Base(parent)) {
		pdir = parent
	}
	if pdir == "" {
		return nil
	}
	p := &nvme.PCI{Address: path.Base(pdir), Links: []nvme.Link{}}
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

func (d *discoverer) readLink(dev, upstream string) nvme.Link {
	l := nvme.Link{Downstream: path.Base(dev), Upstream: upstream, States: map[string]*bool{}}
	ld := path.Join(dev, nvme.DirLink)
	if _, err := d.fs.ReadDir(ld); err != nil {
		if !isNotExist(err) {
			d.problem(ld, err)
		}
		return l
	}
	l.Present = true
	for _, f := range nvme.LinkFiles {
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
func (d *discoverer) readAdmin(c *nvme.Controller, dir string) {
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
		if b, ok := d.treeFile(path.Join(dir, nvme.FileIDCtrl)); ok {
			d.setIdentify(c, b, path.Join(dir, nvme.FileIDCtrl), "sysfs tree "+nvme.FileIDCtrl)
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
		if b, ok := d.treeFile(path.Join(dir, nvme.FileFeature0C)); ok {
			d.setAPST(c, b, path.Join(dir, nvme.FileFeature0C), "sysfs tree "+nvme.FileFeature0C)
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
		if b, ok := d.treeFile(path.Join(dir, nvme.FileFeature02)); ok {
			d.setPower(c, b, path.Join(dir, nvme.FileFeature02), "sysfs tree "+nvme.FileFeature02)
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

func (d *discoverer) setIdentify(c *nvme.Controller, b []byte, where, source string) {
	id, format, err := nvme.ParseIdentify(b)
	if err != nil {
		d.problem(where, err)
		return
	}
	c.Identify, c.IdentifySource = id, source+", "+format
}

func (d *discoverer) setAPST(c *nvme.Controller, b []byte, where, source string) {
	a, format, err := nvme.ParseAPST(b)
	if err != nil {
		d.problem(where, err)
		return
	}
	c.APST, c.APSTSource = a, source+", "+format
}

func (d *discoverer) setPower(c *nvme.Controller, b []byte, where, source string) {
	pm, format, err := nvme.ParsePowerManagement(b)
	if err != nil {
		d.problem(where, err)
		return
	}
	c.PowerMgmt, c.PowerSource = &pm, source+", "+format
}

func (d *discoverer) ioctlIdentify(c *nvme.Controller, dev *Device) bool {
	b, err := dev.Identify()
	if err != nil {
		d.sys.Problems = append(d.sys.Problems, err.Error())
		return false
	}
	id, err := nvme.DecodeIdentify(b)
	if err != nil {
		d.problem(dev.Path, err)
		return false
	}
	c.Identify, c.IdentifySource = id, "ioctl "+dev.Path
	return true
}

func (d *discoverer) ioctlAPST(c *nvme.Controller, dev *Device) bool {
	dw0, b, err := dev.GetFeature(nvme.FeatureAPST, nvme.APSTTableSize)
	if err != nil {
		d.sys.Problems = append(d.sys.Problems, err.Error())
		return false
	}
	e, err := nvme.DecodeAPSTTable(b)
	if err != nil {
		d.problem(dev.Path, err)
		return false
	}
	c.APST, c.APSTSource = &nvme.APST{Enabled: new(dw0&1 == 1), Entries: e}, "ioctl "+dev.Path
	return true
}

func (d *discoverer) ioctlPower(c *nvme.Controller, dev *Device) bool {
	dw0, _, err := dev.GetFeature(nvme.FeaturePowerManagement, 0)
	if err != nil {
		d.sys.Problems = append(d.sys.Problems, err.Error())
		return false
	}
	pm := nvme.DecodePowerManagement(dw0)
	c.PowerMgmt, c.PowerSource = &pm, "ioctl "+dev.Path
	return true
}

// clip shortens a file's content quoted in a problem.
func clip(s string, n int) string {
	if len(s) > n {
		return s[:n] + "…"
	}
	return s
}
