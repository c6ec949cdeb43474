// Package rig runs a whole measurement: it opens the set-up (the built-in
// emulated hub with simulated drives behind it, or a real meter of any
// meter/registry kind with real drives), sets the link policy, records
// everything into one capture through capture/record, and plays the phases
// — idle, workload, idle, DevSlp cycles — each marked in the capture so
// analysis can report them separately. It only orchestrates: every number —
// DevSlp verdicts and state residency included — is analysis's, from the
// capture (the DevSlp phase records its criteria, the drive's support and
// host causes there as notes).
//
// # Set-ups
//
// What differs between an emulated and a real set-up sits behind the setup
// interface (setup.go): preparing the drives, which meter to open, the
// drives' targets, what follows a policy change, and the teardown. A
// Drive holds its configuration, its known profile and a target (a
// driveTarget: what replay plays on and what the DevSlp probe reads).
//
// # Emulated set-up
//
// With meter kind "emulator" (emuSetup), each drive is a states/drivesim
// Model behind a port of an in-process meter/hub/hubemu Emulator on a
// pseudo-terminal; the workload reaches the model through a drivesim.Target
// backed by a sparse file in the output directory, so the model's wake
// latencies are felt by the replay engine as real latency; a simulated sysfs
// tree (states/alpm SimHost) takes the ALPM policy writes, and the models
// follow what is written there. The hub driver talks to the emulator over
// the pty exactly as it would to a real hub.
//
// # Real set-up
//
// With any other meter kind (realSetup), meter/registry opens the meter at
// meter.port (or the kind's default) with the kind's settings
// (Config.Meter.Settings); a recorded stream is refused. Drive targets are
// block devices (writes need allow_destructive naming the device; mounted,
// root and swap devices are refused by workload/target) or regular files;
// the policy is written under sysfs_root and restored on exit, also after
// Ctrl-C.
//
// # Runs
//
// Run is a whole measure, devslp verify or demo: open, idle, workload,
// idle, DevSlp, close, analyse, then report.json and the other report
// files, measure.json and report.html through the report layer. RunIdle is
// a whole idle run: each ALPM policy (IdlePolicies) or, in NVMe mode, each
// NVMe latency tolerance × ASPM setting (IdleNVMe, through an nvmehost.Guard
// that restores them) is set, settled and measured in its own phase; the
// capture is analysed and MeasureIdlePower picks each drive's quiet level
// per phase from the report; idle.json (report.FileIdleRun) is written
// through the report layer. The command line only reads flags into a
// Config and a Plan or IdlePlan and prints the result.
//
// # Recording
//
// capture/record does the recording: resolve, header, capture, counting
// sink, marks and Stats every record.MarkInterval. Rig.Progress is its
// snapshot; record.ReportProgress prints it once a second as the one
// progress line (with the phase) when a Plan or IdlePlan has Progress.
//
// # Where it sits
//
// The application layer (rank 5), over everything beneath it: meters
// through meter/registry or app/emuhub, capture/record, the workload
// engine, states' host control, analysis and report; app/accuracy and
// cmd/idlewatt import it.
package rig
