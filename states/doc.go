// Package states is the home of everything about storage link power
// states (SATA interface states; NVMe power states and PCIe ASPM): what
// the host asks for, what the drive supports, what the power trace shows,
// and whether Device Sleep works. This package holds no code;
// the work is in the sub-packages below. Facts and their sources: the Linux
// kernel's drivers/ata (libata-sata.c for link_power_management_policy,
// libahci.c and ahci.h for CAP/CAP2/PxCMD/PxDEVSLP), hdparm's identify.c,
// the Serial ATA AHCI 1.3.1 specification, ACS-3 (IDENTIFY DEVICE words
// 76–79, Identify Device Data log 30h page 08h) and the NVM Express Base
// Specification (power states, APST); the user's view: docs/states.md.
//
// # The states
//
// A SATA link is Active (commands in flight or PHY ready), Partial (exit
// under 10 µs), Slumber (under 10 ms) or in DevSlp (Device Sleep: the host
// asserts the DEVSLP pin; exit bounded by the drive's DETO; a few mW). The
// host initiates Partial/Slumber (HIPM), the drive does (DIPM), or the HBA
// does by itself after an idle time (aggressive LPM); only the host enters
// DevSlp. On Linux the policy in
// /sys/class/scsi_host/hostN/link_power_management_policy picks which are
// allowed; reading it back gives the target, not what the link does.
//
// # Sub-packages
//
//   - alpm: the Linux host side. Discovers SATA hosts, links, drives and
//     block devices under a configurable sysfs root; reads and writes the
//     ALPM policy (per-host errors, read-back reported as "target set");
//     decodes ahci_host_caps, ahci_host_cap2, ahci_port_cmd, IDENTIFY words
//     76/78/79 and log 30h page 08h; checks DevSlp eligibility naming every
//     failed precondition; a Guard restores policies after a measurement,
//     Ctrl-C included; SimHost builds a writable tree for the emulator.
//   - nvme: the NVMe counterpart of alpm. Discovers NVMe controllers and
//     their PCIe links under the same sysfs root; decodes Identify
//     Controller, the APST feature and the power state (ioctl, nvme-cli
//     output or raw dumps); reproduces the kernel's APST table and quirks;
//     names every failed APST/ASPM precondition; sets the latency
//     tolerance and the ASPM policy with a Guard that restores them;
//     nvme/sim simulates an NVMe drive's power states, APST timers and link.
//   - drivesim: simulated drives for the meter emulators: power per rail as
//     a drive moves through its states, driven by I/O, the ALPM policy
//     (read from a SimHost), the DEVSLP pin and port power.
//   - detect: state detection from power: classifies each interval of a
//     capture as active / idle / partial / slumber / devslp, with residency,
//     per-state power and entry/exit latencies.
//   - powerstate: the one power-state enum detect classifies into and
//     drivesim's truth is written in (no I/O, nothing of the project).
//   - devslp: DevSlp verification cycles (assert, floor, hold ≥ MDAT,
//     deassert, answer within DETO) and their verdict.
//
// # How they meet
//
// A measurement saves and sets the policy through alpm (or the hub's
// DEVSLP pin), records power through meter, and detect turns the samples
// and I/O events into states; alpm's eligibility explains why a state the
// meter never saw was never allowed.
//
// # Where it sits
//
// The states floor (rank 1), beside the meter (docs/architecture.md); this
// package holds no code and nothing imports it.
package states
