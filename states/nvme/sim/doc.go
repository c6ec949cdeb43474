// Package sim simulates an NVMe drive's power states for tests and, later,
// the emulators: PS0–PS4 with the entry and exit latencies the drive
// declares, the APST idle timers from the table the host programmed, and
// the PCIe link's ASPM (L0, L1, L1.2) with its exit latency, all on a
// virtual clock. It is event driven like states/drivesim: nothing happens
// per sample.
//
// # Model
//
// After the last I/O completes the drive sits in PS0 (operational idle).
// With APSTE set, entry i of the table moves it from PSi to ITPS after
// ITPT ms of idle; entering takes the target's entry latency, at the
// source state's power. An I/O that arrives waits for the entry in
// progress to finish, then the state's exit latency (and the link's),
// at PS0's idle power, then is served at the active power. The link
// enters L1 after L1Idle with nothing outstanding and L1.2 at once if
// enabled; a non-operational state's declared power is taken as its draw
// with the link in L1.2, and L0/L1 add LinkL0/LinkL1.
//
// # Profiles
//
// Profiles returns two built-in drives whose power-state tables are the
// ones the drives report, as published by AnandTech; the operational
// idle and active powers, the link's powers and exit latencies are
// assumed (each Profile lists which in Assumed). docs/states.md has the
// table and sources.
//
// # Sessions
//
// Session drives one Drive on the virtual clock with a simulated meter on
// its 3.3 V rail (MeterOptions: period, Gaussian noise, LSB): Idle and
// Read advance the clock and take the samples that fall in between, so
// each reads the state the drive was in; RunAPSTCycles plays apst
// verify's cycles. SetLatencyScale makes the actual entry/exit latencies a
// multiple of the declared ones (a drive within spec, or one breaking its
// descriptor).
//
// # Behind the emulated hub
//
// HubDrive is a meter.SimDrive3V3: the model on the 3.3 V rail of a hub
// port (protocol 3, an M.2 interposer), what `hub emulate --nvme` serves
// beside SATA drives.
//
// # Where it sits
//
// Rank 1.5 with the other simulated drives, above meter; app/emuhub,
// app/rig, app/apst and cmd/idlewatt import it, never analysis.
package sim
