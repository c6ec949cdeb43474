// Package nvmehost is the Linux host side of NVMe power management: it
// reads a host's NVMe controllers and writes the settings that decide their
// idle power, over the model and decoders of states/nvme. Like states/alpm
// it works through a configurable sysfs root, so tests run on fixture trees
// (fixtures/sysfs/nvme-*) and the user's own saved outputs.
//
// # Discovery
//
// Open(root, opt) (or Discover over any alpm.FS) walks class/nvme: per
// controller the sysfs model, serial, firmware_rev, address, transport,
// state and power/pm_qos_latency_tolerance_us; its PCI function (vendor,
// device) and every PCIe link from it up to the root port
// (link/{clkpm,l0s_aspm,l1_aspm,l1_1_aspm,l1_2_aspm,l1_1_pcipm,l1_2_pcipm});
// and globally pcie_aspm's policy, the nvme_core parameters and the DMI
// strings; then nvme.Assess derives quirks, the kernel's APST plan and
// eligibility. A malformed file is a Problem naming it; discovery never
// stops at one and never panics.
//
// Identify Controller and features 0Ch (APST) and 02h (power management)
// come from, in order: a file the user gave (Options.Files, any format
// nvme.ParseIdentify, ParseAPST, ParsePowerManagement read); the admin
// ioctl on /dev/nvmeN (Options.DevDir; NVME_IOCTL_ADMIN_CMD through
// golang.org/x/sys/unix, errno explained by ErrnoMeaning); optional files
// in the tree (idlewatt_id_ctrl.json, idlewatt_feature_0c.json,
// idlewatt_feature_02.json, in nvme-cli JSON).
//
// # Control
//
// Control writes a controller's latency tolerance, nvme_core's
// default_ps_max_latency_us and pcie_aspm's policy, each through a Guard
// that remembers the value it replaced and puts it back (Restore,
// RestoreOnExit). SimFS makes a tree of plain files answer those writes as
// the kernel does (the simulated host); BuildTree writes an nvme.Laptop as
// the sysfs Linux creates.
//
// Sources: Linux drivers/nvme/host/{core,ioctl}.c, include/uapi/linux/
// nvme_ioctl.h, drivers/pci/pcie/aspm.c, drivers/base/power/sysfs.c;
// docs/states.md for the fields, the errnos and the write order.
//
// # Where it sits
//
// The states floor (rank 1), the host side of states/nvme, which it
// imports; app/rig, app/hoststates and states/nvme/sim (the simulated
// host's tree) import it. analysis and states/nvme do not.
package nvmehost
