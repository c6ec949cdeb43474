// Package hoststates is the session behind `idlewatt states`: the host's
// link power read from a sysfs tree (a directory, the live /sys, or a tree
// archive) with the saved outputs a user names in place of its files;
// ALPM policies written to SATA hosts; NVMe latency tolerance, APST and
// the PCIe ASPM policy set all or nothing and restored; a simulated host's
// tree built; saved nvme-cli, smartctl and hdparm outputs decoded. It
// checks what it is asked before any write, and says what it did as text
// or JSON.
//
// # Where it sits
//
// In the application layer (app/), beside the rig: it orchestrates the
// link-power packages (states/alpm, states/nvme, states/nvme/nvmehost,
// states/nvme/sim, states/decode) and imports nothing above them;
// cmd/idlewatt reads the flags it declares (Flags, PolicyFlags,
// NVMeSetFlags, SimulateFlags) and prints what it returns.
package hoststates
