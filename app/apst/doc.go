// Package apst verifies NVMe APST and measures idle power per latency
// tolerance and ASPM policy on a simulated NVMe drive (states/nvme/sim)
// (issue 18): the host's part. A Setup is one drive under one host
// configuration — the APST table the kernel would program
// (nvme.PlanAPST) for a tolerance and quirks, the link states an ASPM
// policy allows, the drive's actual/declared latency scales. Verify plays
// the cycles (a read, idle, a probe read, a warm read) and judges them with
// analysis/judge.JudgeAPSTCycle; IdleSim and IdleHub measure a window's
// idle power against the model's truth.
//
// Two meter paths: the simulated meter (nvmesim.Session, a virtual
// clock) and, with Hub, the drive on port 1's 3.3 V rail of an emulated
// protocol-3 hub read by the hub driver over its pty in real time. The
// host's reads go to the model directly and complete when it says, so
// I/O latencies are the drive's, without a kernel's or a scheduler's
// share. cmd/idlewatt's `apst verify` and `apst idle` are its CLI;
// docs/states.md has the checks and the figures.
//
// Where it sits: the application layer (rank 5): it joins the simulated
// NVMe drive (states/nvme/sim), the emulated hub (app/emuhub) and
// analysis/judge; only cmd/idlewatt imports it.
package apst
