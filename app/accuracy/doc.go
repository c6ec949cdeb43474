// Package accuracy is the truth-recovery campaign behind `idlewatt
// accuracy`: it draws random drive profiles from the documented parameter
// space (drivesim.Draw; docs/drive-profiles.md, "Parameter space"), each
// with a meter noise family (drivesim.DrawNoise) and its hub's current
// sensors, runs them four to an emulated hub through the whole chain with
// app/rig (pty, hub driver, capture, workload, DevSlp cycles,
// analysis, verdicts), and compares every reported metric with the drive
// models' truth, overall and per noise family.
//
// # Blind
//
// The model reaches the emulator only (rig.DriveConfig.Sim): the rig's
// configuration, the capture header and the analysis see the drive as
// "drive N" with the profile name HiddenProfile, which no profile has, so
// the analysis must learn every level from the capture. The profile goes
// to the truth side (truth.go) and nowhere else.
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
// compare.go holds the goals of issues 12 and 25 and how a drive is judged
// against them; table.go aggregates them into the table of accuracy.md and
// accuracy.json, overall and per noise family (keys in docs/analysis.md,
// "Truth-recovery campaign"), and says plainly when a campaign is too
// small to be held to them (shortNote).
//
// # Where it sits
//
// The top of the application layer (rank 6): it runs app/rig once per hub
// and reads back what the report layer wrote; only cmd/idlewatt imports it.
package accuracy
