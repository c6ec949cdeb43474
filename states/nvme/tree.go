package nvme

// Laptop describes a machine's NVMe power settings and controllers, what
// nvmehost.BuildTree lays out as the sysfs Linux creates. Fixtures and the
// simulated host are built from it; KernelFeature reasons over it alone.
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
	return PlanAPST(c.Identify, tol, q, l.Module).Feature()
}
