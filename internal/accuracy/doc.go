// Package accuracy is the truth-recovery campaign behind `idlewatt
// accuracy`: it draws random drive profiles from the documented parameter
// space (drivesim.Draw; docs/drive-profiles.md, "Parameter space"), runs
// them four to an emulated hub through the whole chain with internal/rig
// (pty, hub driver, capture, workload, DevSlp cycles, analysis, verdicts),
// and compares every reported metric with the drive models' truth.
//
// # Replaying a drive
//
// Drive i of the campaign with seed S is DrawCase(S, i): its profile comes
// from PCG(S, i), its hub's policy and seeds from PCG(S, 2^63 + i/4). Run
// with Options.Replay reruns it alone on the same port of a hub with the
// same seeds, so the model's noise is sample for sample the same; the
// workload's timing is the host's, as in any run.
//
// # Truth
//
// The truth side (truth.go) reads the run's capture only for where the
// samples lie on the emulator clock (the mark with the shortest round trip
// places sample index 0, to within half that round trip) and when the
// meter saw each DEVSLP edge; everything else comes from truth-pN.jsonl.
//
// # Measured values
//
// Extract is the one function that reads the run's outputs (report.json,
// measure.json) by their documented keys. When those outputs change, it is
// the only code to adapt.
//
// # Goals
//
// compare.go holds the goals of issue 12 and how a drive is judged against
// them; table.go aggregates them into the table of accuracy.md and
// accuracy.json (keys in docs/analysis.md, "Truth-recovery campaign").
package accuracy
