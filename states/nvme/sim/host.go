package sim

import (
	"fmt"

	"github.com/idlewatt/idlewatt/states/nvme"
	"github.com/idlewatt/idlewatt/states/nvme/nvmehost"
)

// BuildHost writes a simulated laptop's sysfs tree under dir with one NVMe
// controller per profile (nvme0, nvme1, … behind root ports 0000:00:1c.N),
// as a well-tuned laptop has it: pcie_aspm powersupersave, every link
// state on, latency tolerance 100000 µs, and the APST table the kernel
// programs (nvme.KernelFeature). Write through nvmehost.SimFS so a new
// tolerance reprograms the table.
func BuildHost(dir string, profiles []Profile) error {
	l := nvme.Laptop{DMI: nvme.DMI{SysVendor: "idlewatt", ProductName: "simulated laptop"}, ASPMPolicy: "powersupersave"}
	on := map[string]bool{"clkpm": true, "l0s_aspm": false, "l1_aspm": true, "l1_1_aspm": true, "l1_2_aspm": true, "l1_1_pcipm": true, "l1_2_pcipm": true}
	for i, p := range profiles {
		c := nvme.TreeController{Name: fmt.Sprintf("nvme%d", i), PCI: fmt.Sprintf("0000:%02x:00.0", 2+i),
			RootPort: fmt.Sprintf("0000:00:1c.%d", i), Vendor: uint16(p.Identify.VID), Device: 0x5000 + uint16(i),
			Identify: p.Identify, Tolerance: "100000", Link: on, PowerMgmt: &nvme.PowerManagement{}}
		c.APST = nvme.KernelFeature(l, c)
		l.Ctrls = append(l.Ctrls, c)
	}
	return nvmehost.BuildTree(dir, l)
}
