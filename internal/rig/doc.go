// Package rig runs a whole measurement: it sets up the meter (a real hub, or
// the built-in emulated hub with simulated drives behind it), the drives'
// targets and link policy, records everything into one capture, and plays
// the phases — idle, workload, idle, DevSlp cycles — each marked in the
// capture so analysis can report them separately. It only orchestrates:
// every number — DevSlp verdicts and state residency included — is
// analysis's, from the capture (the DevSlp phase records its criteria,
// the drive's support and host causes there as notes).
//
// # Emulated set-up
//
// With meter kind "emulator", each drive is a states/drivesim Model behind a
// port of an in-process meter/hub/hubemu Emulator on a pseudo-terminal; the
// workload reaches the model through a drivesim.Target backed by a sparse
// file in the output directory, so the model's wake latencies are felt by the
// replay engine as real latency; a simulated sysfs tree (states/alpm SimHost)
// takes the ALPM policy writes, and the models follow what is written there.
// The hub driver talks to the emulator over the pty exactly as it would to a
// real hub.
//
// # Real set-up
//
// With meter kind "hub", the driver opens the serial port; drive targets are
// block devices (writes need allow_destructive naming the device; mounted,
// root and swap devices are refused by workload/target) or regular files;
// the policy is written under sysfs_root and restored on exit, also after
// Ctrl-C.
package rig
