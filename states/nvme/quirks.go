package nvme

import (
	"fmt"
	"strings"
)

// Quirks are the kernel's NVME_QUIRK_* bits that touch APST
// (drivers/nvme/host/nvme.h).
type Quirks uint

const (
	QuirkNoAPST      Quirks = 1 << 4 // NVME_QUIRK_NO_APST
	QuirkNoDeepestPS Quirks = 1 << 5 // NVME_QUIRK_NO_DEEPEST_PS
)

func (q Quirks) String() string {
	var s []string
	if q&QuirkNoAPST != 0 {
		s = append(s, "NO_APST")
	}
	if q&QuirkNoDeepestPS != 0 {
		s = append(s, "NO_DEEPEST_PS")
	}
	if len(s) == 0 {
		return "none"
	}
	return strings.Join(s, "|")
}

// QuirkMatch is one entry of the kernel's quirk tables that matches this
// controller, and how it was matched.
type QuirkMatch struct {
	Quirk  string `json:"quirk"`  // "NO_APST", "NO_DEEPEST_PS"
	Source string `json:"source"` // the kernel table and what matched
	bits   Quirks
}

// The kernel does not expose a controller's quirks, so idlewatt matches
// the same keys the kernel matches, from a copy of the APST-relevant
// entries of its tables (Linux 6.x):
//   - core_quirks[] in drivers/nvme/host/core.c: Identify VID + model
//     (+ firmware), matched by nvme_init_identify;
//   - nvme_id_table[] in drivers/nvme/host/pci.c: PCI vendor:device;
//   - check_vendor_combination_bug() in pci.c: PCI IDs + DMI strings.
//
// A quirk added to a newer kernel is not here; the "quirk" check also uses
// what sysfs shows (pm_qos_latency_tolerance_us hidden while APSTA is set,
// or a programmed table that stops short of a state the kernel would use).

type modelQuirk struct {
	vid      uint16
	model    string
	firmware string
	q        Quirks
	why      string
}

var coreQuirks = []modelQuirk{
	{0x1179, "THNSF5256GPUK TOSHIBA", "", QuirkNoAPST, "dies using any APST state (Launchpad #1678184)"},
	{0x1e0f, "KCD6XVUL6T40", "", QuirkNoAPST, "Kioxia CD6-V / HPE PE8030 times out under load with APST"},
	{0x144d, "Samsung Portable SSD X5", "", QuirkNoDeepestPS, "external X5 fails with the deepest state"},
}

type pciQuirk struct {
	vendor, device uint16
	name           string
	q              Quirks
}

var pciQuirks = []pciQuirk{
	{0x8086, 0xf1a5, "Intel 600P/P3100", QuirkNoDeepestPS},
	{0x1cc1, 0x8201, "ADATA SX8200PNP 512GB", QuirkNoDeepestPS},
	{0x2646, 0x2262, "KINGSTON SKC2000", QuirkNoDeepestPS},
	{0x2646, 0x2263, "KINGSTON A2000", QuirkNoDeepestPS},
}

// DMI identifies the machine (/sys/class/dmi/id).
type DMI struct {
	SysVendor   string `json:"sys_vendor,omitempty"`
	ProductName string `json:"product_name,omitempty"`
	BoardVendor string `json:"board_vendor,omitempty"`
	BoardName   string `json:"board_name,omitempty"`
}

// QuirkKeys are what the kernel's quirk tables match on. VID, Model and
// Firmware come from Identify (or, without it, the PCI vendor and sysfs
// model/firmware_rev, which hold the same strings); 0 or "" is unknown.
type QuirkKeys struct {
	VID             uint16
	Model, Firmware string
	Vendor, Device  uint16 // PCI IDs
	DMI             DMI
}

// MatchQuirks returns the APST quirks the kernel applies to a controller
// with these keys.
func MatchQuirks(k QuirkKeys) []QuirkMatch {
	var out []QuirkMatch
	vendor, device, dmi := k.Vendor, k.Device, k.DMI
	{
		for _, c := range coreQuirks {
			if k.VID == c.vid && k.Model == c.model && (c.firmware == "" || k.Firmware == c.firmware) {
				out = append(out, QuirkMatch{Quirk: c.q.String(), bits: c.q,
					Source: fmt.Sprintf("core_quirks (drivers/nvme/host/core.c): VID %04x model %q: %s", c.vid, c.model, c.why)})
			}
		}
	}
	for _, p := range pciQuirks {
		if vendor == p.vendor && device == p.device {
			out = append(out, QuirkMatch{Quirk: p.q.String(), bits: p.q,
				Source: fmt.Sprintf("nvme_id_table (drivers/nvme/host/pci.c): PCI %04x:%04x %s", p.vendor, p.device, p.name)})
		}
	}
	switch {
	case vendor == 0x144d && device == 0xa802 && dmi.SysVendor == "Dell Inc." &&
		(dmi.ProductName == "XPS 15 9550" || dmi.ProductName == "Precision 5510"):
		out = append(out, QuirkMatch{Quirk: "NO_DEEPEST_PS", bits: QuirkNoDeepestPS,
			Source: fmt.Sprintf("check_vendor_combination_bug (pci.c): PCI 144d:a802 on a Dell %s (drops off the bus in the deepest state)", dmi.ProductName)})
	case vendor == 0x144d && device == 0xa804 && dmi.BoardVendor == "ASUSTeK COMPUTER INC." &&
		(dmi.BoardName == "PRIME B350M-A" || dmi.BoardName == "PRIME Z370-A"):
		out = append(out, QuirkMatch{Quirk: "NO_APST", bits: QuirkNoAPST,
			Source: fmt.Sprintf("check_vendor_combination_bug (pci.c): PCI 144d:a804 (960 EVO) on an ASUS %s", dmi.BoardName)})
	}
	return out
}

func quirkBits(m []QuirkMatch) Quirks {
	var q Quirks
	for _, x := range m {
		q |= x.bits
	}
	return q
}
