package nvme

import (
	"fmt"
	"path/filepath"
	"strings"

	"github.com/idlewatt/idlewatt/states/alpm"
)

// Laptop describes a machine's sysfs for BuildTree: the layout Linux
// creates for NVMe controllers behind PCIe root ports, with class/nvme and
// bus/pci/devices as relative links into devices/, so discovery sees what
// it sees on a real host. Fixtures and the simulated host are built from
// it.
type Laptop struct {
	DMI DMI
	// ASPMPolicy is the current pcie_aspm policy ("" leaves the file out).
	ASPMPolicy string
	// Module holds nvme_core parameters; nil ones get the kernel defaults.
	Module ModuleParams
	Ctrls  []TreeController
}

// TreeController is one NVMe controller and its PCIe function.
type TreeController struct {
	Name           string // "nvme0"
	PCI, RootPort  string // "0000:02:00.0" behind "0000:00:1d.0"
	Vendor, Device uint16
	Identify       *Identify
	// Tolerance is pm_qos_latency_tolerance_us; "" leaves it out, as the
	// kernel does when it did not enable APST.
	Tolerance string
	// Link holds the endpoint's link/ files (absent keys: not capable);
	// nil leaves out the directory.
	Link map[string]bool
	// APST and PowerMgmt, when set, are written as the optional nvme-cli
	// JSON files (what the drive would answer).
	APST      *APST
	PowerMgmt *PowerManagement
}

var policies = []string{"default", "performance", "powersave", "powersupersave"}

// BuildTree writes l under dir (which must exist).
func BuildTree(dir string, l Laptop) error {
	w := alpm.TreeWriter{Dir: dir}
	if l.ASPMPolicy != "" {
		var f []string
		for _, p := range policies {
			if p == l.ASPMPolicy {
				p = "[" + p + "]"
			}
			f = append(f, p)
		}
		w.File(aspmPolicy, strings.Join(f, " ")+" \n")
	}
	m := l.Module
	u := func(p *uint64, d uint64) string { return fmt.Sprintf("%d\n", or(p, d)) }
	w.File(nvmeCoreDir+"/default_ps_max_latency_us", u(m.DefaultPSMaxLatencyUs, DefaultPSMaxLatencyUs))
	w.File(nvmeCoreDir+"/apst_primary_timeout_ms", u(m.APSTPrimaryTimeoutMs, DefaultPrimaryTimeoutMs))
	w.File(nvmeCoreDir+"/apst_primary_latency_tol_us", u(m.APSTPrimaryLatencyTolUs, DefaultPrimaryLatTolUs))
	w.File(nvmeCoreDir+"/apst_secondary_timeout_ms", u(m.APSTSecondaryTimeoutMs, DefaultSecondaryTimeoutMs))
	w.File(nvmeCoreDir+"/apst_secondary_latency_tol_us", u(m.APSTSecondaryLatencyTolUs, DefaultSecondaryLatTolUs))
	force := "N\n"
	if m.ForceAPST != nil && *m.ForceAPST {
		force = "Y\n"
	}
	w.File(nvmeCoreDir+"/force_apst", force)
	for name, v := range map[string]string{"sys_vendor": l.DMI.SysVendor, "product_name": l.DMI.ProductName,
		"board_vendor": l.DMI.BoardVendor, "board_name": l.DMI.BoardName} {
		if v != "" {
			w.File(dmiDir+"/"+name, v+"\n")
		}
	}
	for _, c := range l.Ctrls {
		root := filepath.Join("devices", "pci0000:00", c.RootPort)
		w.File(filepath.Join(root, "vendor"), "0x8086\n")
		w.File(filepath.Join(root, "device"), "0xa330\n")
		w.File(filepath.Join(root, "class"), "0x060400\n")
		fn := filepath.Join(root, c.PCI)
		w.File(filepath.Join(fn, "vendor"), fmt.Sprintf("0x%04x\n", c.Vendor))
		w.File(filepath.Join(fn, "device"), fmt.Sprintf("0x%04x\n", c.Device))
		w.File(filepath.Join(fn, "class"), "0x010802\n")
		if c.Link != nil {
			w.Mkdir(filepath.Join(fn, linkDir))
			for _, f := range linkFiles {
				if v, ok := c.Link[f]; ok {
					w.File(filepath.Join(fn, linkDir, f), map[bool]string{true: "1\n", false: "0\n"}[v])
				}
			}
		}
		w.Link(filepath.Join("bus", "pci", "devices", c.PCI), fn)
		cd := filepath.Join(fn, "nvme", c.Name)
		if c.Identify != nil {
			w.File(filepath.Join(cd, "model"), c.Identify.Model+"\n")
			w.File(filepath.Join(cd, "serial"), c.Identify.Serial+"\n")
			w.File(filepath.Join(cd, "firmware_rev"), c.Identify.Firmware+"\n")
			w.File(filepath.Join(cd, fIDCtrl), string(c.Identify.IdentifyJSON()))
		}
		w.File(filepath.Join(cd, "address"), c.PCI+"\n")
		w.File(filepath.Join(cd, "transport"), "pcie\n")
		w.File(filepath.Join(cd, "state"), "live\n")
		w.File(filepath.Join(cd, "power", "control"), "auto\n")
		if c.Tolerance != "" {
			w.File(filepath.Join(cd, fTolerance), c.Tolerance+"\n")
		}
		if c.APST != nil {
			w.File(filepath.Join(cd, fFeature0C), string(c.APST.APSTJSON()))
		}
		if c.PowerMgmt != nil {
			w.File(filepath.Join(cd, fFeature02), string(c.PowerMgmt.PowerManagementJSON()))
		}
		w.Link(filepath.Join(cd, deviceLink), fn)
		w.Link(filepath.Join(classNVMe, c.Name), cd)
	}
	return w.Err
}

// KernelFeature returns the feature 0Ch a drive reports after the kernel
// programmed it under l's settings: what a fixture's APST file holds.
func KernelFeature(l Laptop, c TreeController) *APST {
	tol := uint64(DefaultPSMaxLatencyUs)
	if c.Tolerance == "" {
		tol = 0
	} else if t, err := ParseTolerance(c.Tolerance); err == nil {
		tol = t.Us
	}
	q := quirkBits(MatchQuirks(QuirkKeys{VID: uint16(c.Identify.VID), Model: c.Identify.Model, Firmware: c.Identify.Firmware,
		Vendor: c.Vendor, Device: c.Device, DMI: l.DMI}))
	p := PlanAPST(c.Identify, tol, q, l.Module)
	e := make([]APSTEntry, apstEntries)
	copy(e, p.Entries)
	return &APST{Enabled: new(p.Enabled), Entries: e}
}
