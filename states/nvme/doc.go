// Package nvme is the model and decoding of NVMe power management:
// Autonomous Power State Transitions (APST) and the PCIe link's ASPM, the
// NVMe counterparts of ALPM and DevSlp. It reads no host: its decoders take
// bytes or an io.Reader, and its rules (the kernel's APST plan, quirks,
// eligibility) reason over decoded data. Reading a host's sysfs tree, the
// admin ioctl and the writes live in states/nvme/nvmehost.
//
// # The model
//
// System is what discovery found under one sysfs root: pcie_aspm's policy,
// the nvme_core parameters, the DMI strings and per controller
// (Controller) the sysfs strings, the latency tolerance, its PCI function
// and every PCIe link up to the root port (Link: an absent file means "not
// capable, or the kernel does not control ASPM"), Identify Controller and
// features 0Ch (APST) and 02h (power management) with where each came
// from. Assess derives the rest from them. The sysfs names discovery reads
// (ClassNVMe, FileTolerance, …) are here, for the messages that cite them.
// Laptop describes a machine for nvmehost.BuildTree (fixtures, the
// simulated host).
//
// ParseIdentify, ParseAPST and ParsePowerManagement tell apart the
// formats of a saved output: raw binary as nvme-cli -b writes, nvme-cli
// JSON, nvme-cli and smartctl text and JSON, or a hex dump (formats.go).
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
// Sources: NVMe Base Specification 2.0; Linux drivers/nvme/host/{core,pci}.c,
// drivers/pci/pcie/aspm.c, drivers/base/power/sysfs.c; nvme-cli
// src/nvme-print-json.c; docs/states.md for the fields and output.
//
// # Where it sits
//
// The states floor (rank 1), pure: it imports no golang.org/x/sys/unix and
// touches no file of the host. states/nvme/nvmehost (host discovery and
// control) builds on it; app/rig, app/apst, app/hoststates,
// states/nvme/sim, states/decode and cmd/idlewatt import it. analysis does
// not: it reads NVMe power-state levels through states/nvme/pslevel.
package nvme
