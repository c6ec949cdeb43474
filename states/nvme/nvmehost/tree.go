package nvmehost

import (
	"fmt"
	"path/filepath"
	"strings"

	"github.com/idlewatt/idlewatt/states/alpm"
	"github.com/idlewatt/idlewatt/states/nvme"
)

// BuildTree writes l under dir (which must exist).
func BuildTree(dir string, l nvme.Laptop) error {
	w := alpm.TreeWriter{Dir: dir}
	if l.ASPMPolicy != "" {
		var f []string
		for _, p := range nvme.ASPMPolicies {
			if p == l.ASPMPolicy {
				p = "[" + p + "]"
			}
			f = append(f, p)
		}
		w.File(nvme.ASPMPolicyFile, strings.Join(f, " ")+" \n")
	}
	m := l.Module
	u := func(p *uint64, d uint64) string { return fmt.Sprintf("%d\n", orDefault(p, d)) }
	w.File(nvme.DirNVMeCore+"/default_ps_max_latency_us", u(m.DefaultPSMaxLatencyUs, nvme.DefaultPSMaxLatencyUs))
	w.File(nvme.DirNVMeCore+"/apst_primary_timeout_ms", u(m.APSTPrimaryTimeoutMs, nvme.DefaultPrimaryTimeoutMs))
	w.File(nvme.DirNVMeCore+"/apst_primary_latency_tol_us", u(m.APSTPrimaryLatencyTolUs, nvme.DefaultPrimaryLatTolUs))
	w.File(nvme.DirNVMeCore+"/apst_secondary_timeout_ms", u(m.APSTSecondaryTimeoutMs, nvme.DefaultSecondaryTimeoutMs))
	w.File(nvme.DirNVMeCore+"/apst_secondary_latency_tol_us", u(m.APSTSecondaryLatencyTolUs, nvme.DefaultSecondaryLatTolUs))
	force := "N\n"
	if m.ForceAPST != nil && *m.ForceAPST {
		force = "Y\n"
	}
	w.File(nvme.DirNVMeCore+"/force_apst", force)
	for name, v := range map[string]string{"sys_vendor": l.DMI.SysVendor, "product_name": l.DMI.ProductName,
		"board_vendor": l.DMI.BoardVendor, "board_name": l.DMI.BoardName} {
		if v != "" {
			w.File(nvme.DirDMI+"/"+name, v+"\n")
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
			w.Mkdir(filepath.Join(fn, nvme.DirLink))
			for _, f := range nvme.LinkFiles {
				if v, ok := c.Link[f]; ok {
					w.File(filepath.Join(fn, nvme.DirLink, f), map[bool]string{true: "1\n", false: "0\n"}[v])
				}
			}
		}
		w.Link(filepath.Join("bus", "pci", "devices", c.PCI), fn)
		cd := filepath.Join(fn, "nvme", c.Name)
		if c.Identify != nil {
			w.File(filepath.Join(cd, "model"), c.Identify.Model+"\n")
			w.File(filepath.Join(cd, "serial"), c.Identify.Serial+"\n")
			w.File(filepath.Join(cd, "firmware_rev"), c.Identify.Firmware+"\n")
			w.File(filepath.Join(cd, nvme.FileIDCtrl), string(c.Identify.IdentifyJSON()))
		}
		w.File(filepath.Join(cd, "address"), c.PCI+"\n")
		w.File(filepath.Join(cd, "transport"), "pcie\n")
		w.File(filepath.Join(cd, "state"), "live\n")
		w.File(filepath.Join(cd, "power", "control"), "auto\n")
		if c.Tolerance != "" {
			w.File(filepath.Join(cd, nvme.FileTolerance), c.Tolerance+"\n")
		}
		if c.APST != nil {
			w.File(filepath.Join(cd, nvme.FileFeature0C), string(c.APST.APSTJSON()))
		}
		if c.PowerMgmt != nil {
			w.File(filepath.Join(cd, nvme.FileFeature02), string(c.PowerMgmt.PowerManagementJSON()))
		}
		w.Link(filepath.Join(cd, nvme.LinkDevice), fn)
		w.Link(filepath.Join(nvme.ClassNVMe, c.Name), cd)
	}
	return w.Err
}

// orDefault is *p, or d when the parameter is not set.
func orDefault(p *uint64, d uint64) uint64 {
	if p == nil {
		return d
	}
	return *p
}
