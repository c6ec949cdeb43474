// Package nvme is the Linux host side of NVMe power management: Autonomous
// Power State Transitions (APST) and the PCIe link's ASPM, the NVMe
// counterparts of ALPM and DevSlp. Like states/alpm it reads (and writes)
// through a configurable sysfs root, so tests run on fixture trees
// (fixtures/sysfs/nvme-*) and the user's own saved outputs.
//
// # Reading
//
// Open(root, opt) (or Discover over any alpm.FS) walks class/nvme: per
// controller the sysfs model, serial, firmware_rev, address, transport,
// state and power/pm_qos_latency_tolerance_us; its PCI function (vendor,
// device) and every PCIe link from it up to the root port
// (link/{clkpm,l0s_aspm,l1_aspm,l1_1_aspm,l1_2_aspm,l1_1_pcipm,l1_2_pcipm};
// an absent file means "not capable, or the kernel does not control
// ASPM"); and globally pcie_aspm's policy, the nvme_core parameters and
// the DMI strings. A malformed file is a Problem naming it; discovery
// never stops at one and never panics.
//
// Identify Controller and features 0Ch (APST) and 02h (power management)
// come from, in order: a file the user gave (Options.Files: raw binary as
// nvme-cli -b writes, nvme-cli JSON, or a hex dump — ParseIdentify,
// ParseAPST, ParsePowerManagement tell them apart); the admin ioctl on
// /dev/nvmeN (Options.DevDir; NVME_IOCTL_ADMIN_CMD, errno explained by
// ErrnoMeaning); optional files in the tree (idlewatt_id_ctrl.json,
// idlewatt_feature_0c.json, idlewatt_feature_02.json, in nvme-cli JSON).
//
// # Decoding
//
// DecodeIdentify takes exactly 4096 bytes: NPSS at byte 263, APSTA at
// byte 265 bit 0, power-state descriptors from byte 2048, 32 bytes each
// (NVMe Base Specification 2.0 §5.17.2.1, figures 275–276; struct
// nvme_id_ctrl in libnvme). DecodeAPSTTable takes the 256-byte table (32
// little-endian u64 entries, ITPS bits 7:3, ITPT ms bits 31:8). The JSON
// decoders read nvme-cli 2.x's keys (src/nvme-print-json.c) and refuse a
// missing key by name.
//
// # The kernel's rules
//
// PlanAPST reproduces nvme_configure_apst (drivers/nvme/host/core.c): a
// non-operational state is a target only if its exit latency is within the
// device's latency tolerance (ps_max_latency_us, from
// pm_qos_latency_tolerance_us; 0 turns APST off) and, with the
// primary/secondary parameters set, its entry+exit latency within
// apst_primary_latency_tol_us (ITPT apst_primary_timeout_ms) or
// apst_secondary_latency_tol_us (apst_secondary_timeout_ms), one state per
// slot, deepest first; with them 0 the older rule ITPT = (entry+exit)/20 ms
// applies. MatchQuirks matches the kernel's NO_APST / NO_DEEPEST_PS tables
// (core_quirks, nvme_id_table, check_vendor_combination_bug) on Identify
// VID/model, PCI IDs and DMI.
//
// # Eligibility
//
// Eligible names each failed precondition for reaching the deepest state
// with the link in L1.2: APSTA, quirk, APST enabled, latency tolerance
// (saying which value would admit the deepest state), the APST table read
// back, ASPM L1 and L1.2 on every link, and the pcie_aspm policy.
//
// # Levels
//
// TableLevels gives state detection a drive's idle level per power state
// (non-operational states at their declared power); LearnLevels names the
// stable levels of a capture (detect.LevelHistogram.Peaks) from them;
// ClassifyLevel and LevelCeiling place thresholds at the geometric means
// of neighbours, as states/detect does. analysis/judge' APST verdict
// (apst verify) judges with them.
//
// Sources: NVMe Base Specification 2.0; Linux drivers/nvme/host/{core,pci,
// ioctl}.c, drivers/pci/pcie/aspm.c, drivers/base/power/sysfs.c;
// nvme-cli src/nvme-print-json.c; docs/states.md for the fields and output.
//
// # Where it sits
//
// The states floor (rank 1), the host side; app/rig, app/apst,
// states/nvme/sim, states/decode and cmd/idlewatt import it. analysis does
// not: it reads NVMe power-state levels through states/nvme/pslevel.
package nvme
