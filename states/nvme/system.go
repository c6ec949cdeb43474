package nvme

import (
	"fmt"
	"sort"
	"strconv"
	"strings"

	"github.com/idlewatt/idlewatt/states/alpm"
)

// Sysfs names (Documentation/ABI/testing/sysfs-class-nvme,
// sysfs-devices-power, sysfs-bus-pci; drivers/pci/pcie/aspm.c), relative
// to the sysfs root: the layout discovery (states/nvme/nvmehost) reads and
// the messages here name.
const (
	// ClassNVMe holds one directory (a link) per controller.
	ClassNVMe = "class/nvme"
	// FileTolerance is a controller's latency tolerance, relative to its
	// directory.
	FileTolerance = "power/pm_qos_latency_tolerance_us"
	// ASPMPolicyFile is pcie_aspm's policy.
	ASPMPolicyFile = "module/pcie_aspm/parameters/policy"
	// DirNVMeCore holds nvme_core's parameters.
	DirNVMeCore = "module/nvme_core/parameters"
	// DirDMI holds the DMI strings.
	DirDMI = "class/dmi/id"
	// The optional nvme-cli JSON files in a controller's directory, which
	// mainline sysfs does not have.
	FileIDCtrl    = "idlewatt_id_ctrl.json"    // nvme id-ctrl -o json
	FileFeature0C = "idlewatt_feature_0c.json" // nvme get-feature -f 0x0c -H -o json
	FileFeature02 = "idlewatt_feature_02.json" // nvme get-feature -f 0x02 -H -o json
	// DirLink is a PCI function's link/ directory of ASPM states.
	DirLink = "link"
	// LinkDevice is a controller's link to its PCI function.
	LinkDevice = "device"
	SchemaNVMe = "idlewatt.states.nvme/v1"
)

// LinkFiles are the link files in the order the kernel lists them (aspm.c
// aspm_ctrl_attrs).
var LinkFiles = []string{"clkpm", "l0s_aspm", "l1_aspm", "l1_1_aspm", "l1_2_aspm", "l1_1_pcipm", "l1_2_pcipm"}

// ASPMPolicies are the names pcie_aspm accepts (drivers/pci/pcie/aspm.c
// policy_str).
var ASPMPolicies = []string{"default", "performance", "powersave", "powersupersave"}

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

// Assess derives what follows from the data discovery read, as the kernel
// would: each controller's quirk matches (Identify over the sysfs strings
// when both exist) and the APST table the kernel programs under the
// current settings; then it orders the controllers (nvme2 before nvme10)
// and judges each one's eligibility. It reads nothing.
func Assess(sys *System) {
	for i := range sys.Ctrls {
		c := &sys.Ctrls[i]
		keys := QuirkKeys{Model: c.Model, Firmware: c.Firmware, DMI: sys.DMI}
		if c.PCI != nil {
			keys.Vendor, keys.Device, keys.VID = uint16(c.PCI.Vendor), uint16(c.PCI.Device), uint16(c.PCI.Vendor)
		}
		if c.Identify != nil {
			keys.VID, keys.Model, keys.Firmware = uint16(c.Identify.VID), c.Identify.Model, c.Identify.Firmware
		}
		c.Quirks = append(c.Quirks, MatchQuirks(keys)...)
		if c.Identify != nil {
			p := PlanAPST(c.Identify, c.effectiveTolerance(sys.Module), quirkBits(c.Quirks), sys.Module)
			c.Kernel = &p
		}
	}
	sort.Slice(sys.Ctrls, func(i, j int) bool { return natLess(sys.Ctrls[i].Name, sys.Ctrls[j].Name) })
	for i := range sys.Ctrls {
		c := &sys.Ctrls[i]
		c.Eligibility = Eligible(sys, c)
	}
}

// ParseASPMPolicy reads "[default] performance powersave powersupersave".
func ParseASPMPolicy(s string) (ASPMPolicy, error) {
	var p ASPMPolicy
	for _, f := range strings.Fields(s) {
		if strings.HasPrefix(f, "[") && strings.HasSuffix(f, "]") {
			if p.Current != "" {
				return p, fmt.Errorf("%q: two current ASPMPolicies", clip(s, 60))
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

// effectiveTolerance is the ps_max_latency_us the kernel uses: the
// device's file, else (file hidden) the module default it was set from.
func (c *Controller) effectiveTolerance(m ModuleParams) uint64 {
	if c.Tolerance != nil {
		return c.Tolerance.Us
	}
	def, _, _, _, _, _ := m.effective()
	return min(def, 1<<31-1)
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

// ParseASPMPolicyName checks a policy name, suggesting the nearest.
func ParseASPMPolicyName(s string) (string, error) {
	for _, p := range ASPMPolicies {
		if s == p {
			return p, nil
		}
	}
	best := ""
	for _, p := range ASPMPolicies {
		if strings.HasPrefix(p, s) && s != "" {
			if best != "" {
				best = ""
				break
			}
			best = p
		}
	}
	if best != "" {
		return "", fmt.Errorf("unknown ASPM policy %q; did you mean %s? (one of %s)", s, best, strings.Join(ASPMPolicies, ", "))
	}
	return "", fmt.Errorf("unknown ASPM policy %q (one of %s)", s, strings.Join(ASPMPolicies, ", "))
}
