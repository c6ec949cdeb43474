// Package drivesim simulates SATA drives for the meter emulators, the demo
// and the end-to-end tests: power per rail over time as a drive moves
// through its interface power states, driven by I/O, the host's ALPM policy,
// the DEVSLP pin and port power. Facts behind the model: the SATA
// specification (revision 3.2: Partial, Slumber, DevSlp on power-connector
// pin P3), the Serial ATA AHCI 1.3.1 specification (PxDEVSLP: DETO, MDAT,
// DITO), ACS-3 IDENTIFY DEVICE words 76–79 and the Linux kernel's
// drivers/ata/libata-sata.c and libahci.c; every profile parameter, its unit
// and the built-in values: docs/drive-profiles.md.
//
// # Model
//
// A Model (New) is a meter.SimDrive. States: active (transferring),
// idle (active idle), partial, slumber, devslp, off, and for 5v+12v drives
// spinup and standby; wake is the exit latency from a low state (the
// enum is states/powerstate's, which detection classifies into). The
// machine is event driven: nothing happens per sample. Inputs, each at a
// time on the emulator clock:
//
//	IO(at, op, size) wait   a request was issued; wait = how long it must wait for the drive to wake
//	IODone(at, op, size)    it completed (every IO needs one: idle timers run only when nothing is outstanding)
//	SetDevSlp(at, asserted) the DEVSLP pin (meter.SimDrive)
//	SetPower(at, on)        the port's supply (meter.SimDrive)
//	SetPolicy(at, policy)   the host's ALPM policy (link_power_management_policy values)
//
// The drive moves data at the profile's max rate: a request of n bytes keeps
// it active for n / max_*_mbps, at active_idle_w + *_w_per_mbps × max rate
// (capped at peak_write_w), one transfer at a time. So a sample shows the
// peak when the drive is saturated, and mean power rises linearly with
// throughput.
//
// # Idle timers and the ALPM policy
//
// Once nothing is outstanding the idle timers start (times from the profile):
//
//	max_performance         no link power management
//	medium_power            Partial after hipm_partial_after_ms (HIPM)
//	med_power_with_dipm     Partial after min(hipm, dipm_partial_after_ms), Slumber after dipm_slumber_after_ms
//	min_power_with_partial  as med_power_with_dipm, and the HBA asks for DevSlp after dito_ms
//	min_power               Partial after dipm_partial_after_ms, Slumber after min(hipm, dipm_slumber), DevSlp after dito_ms
//
// The default is max_performance: after power-up a link has no LPM until
// the host enables it. Changing the policy wakes a link in Partial or
// Slumber (libata resets the link). HDDs also enter standby after
// standby_after_s whatever the policy.
//
// # DevSlp
//
// A drive with devslp_supported (and not devslp_broken) enters DevSlp while
// the pin is asserted (or the HBA asks, under min_power*) and nothing is
// outstanding: from Slumber only when the profile sets deso, else from idle,
// Partial or Slumber. Once in DevSlp it stays at least mdat_ms; on release it
// takes devslp_exit_ms (with the wake spike) to return to the state it came
// from. An I/O that arrives in DevSlp wakes the drive as if the HBA had
// deasserted the pin (the request waits devslp_exit_ms); with the pin still
// asserted the drive goes back to DevSlp once idle. A broken drive ignores
// the pin: its floor stays at slumber_w.
//
// # Timing and rendering
//
// Render fills samples for an interval; each sample is the mean true power
// over its interval (an averaging ADC), divided by the rail voltage, plus
// Gaussian noise of noise_ma per rail (counter-based: sample n's noise
// depends only on the seed and n). A profile's noise model (Noise, the
// profile's noise: map) adds a real meter's noise on top: AR(1) and 1/f
// noise, mains hum with harmonics, switching ripple aliased by the sample
// rate, a first-order sensor bandwidth, a gain and offset error with slow
// drift, and level steps; each is a deterministic function of the seed and
// the sample index too (noisegen.go says how the recursions manage it),
// and none reaches the truth. Quantisation is the emulator's job (its LSB
// is stated in the capture header).
// Render advances the machine to the end of the chunk. An event whose time
// lies before the time the machine has reached (already rendered, or
// overtaken by another event) is applied at that time; an event ahead of
// the render cursor advances the machine and is rendered at its own time,
// because the model keeps the segments between the cursor and the machine's
// time. A Render costs a hash, two table loads and four stores per sample.
//
// Same seed and same sequence of calls give the same samples, whatever the
// Render chunking. (Concurrent goroutines calling IO make the sequence
// itself nondeterministic; that is the workload's timing, not the model's.)
//
// # Ground truth
//
// Options.KeepTruth keeps the true timeline in memory: Truth() []Segment,
// StateAt(t), MeanPower(from, to) (noise-free, per rail). Options.TruthOut
// streams it as JSON lines (TruthWriter, ReadTruth; format in
// docs/drive-profiles.md); call Finish(at) at the end of a run.
//
// # Simulated block target
//
// Target (OpenTarget) is a backing regular file plus a Model, so the
// workload runner drives a simulated drive through the same code path as a
// real one:
//
//	t, err := drivesim.OpenTarget(path, model, drivesim.TargetOptions{Size: 1 << 30, Clock: hub.EmuTime})
//	n, err := t.ReadAt(buf, off)   // tells the model, sleeps the service time (wake + transfer), preads, tells the model
//	n, err = t.WriteAt(buf, off)
//	err = t.Sync()                 // a flush: wakes the drive, fsyncs the file
//
// An engine that does its own I/O (io_uring, batching) calls the hooks
// around each request instead and uses t.File():
//
//	svc, err := t.Before(op, off, size) // does not sleep: the request's service time (wake + transfer)
//	... wait svc inside the request's I/O interval, do the I/O ...
//	t.AfterAt(op, off, size, done)       // at completion, always, with the engine's completion stamp (or After)
//
// Times come from hostclock mapped through TargetOptions.Clock to
// the emulator clock. A powered-off drive fails I/O with ErrPoweredOff.
//
// # Profiles
//
// Builtins() lists the built-in profiles; Lookup(name, user) finds one
// (user profiles win) and suggests the nearest name for a typo;
// ParseProfiles decodes the config's profiles: map (with base: inheritance)
// into validated profiles, naming profiles.NAME.KEY in errors;
// Profile.Validate names the profile and key.
//
// # Where it sits
//
// Rank 1.5, above meter and workload (it renders meter samples and answers
// workload operations). Only the emulator side imports it — app/rig,
// app/accuracy, cmd/idlewatt — never analysis: what it knows reaches
// analysis only through the emulated meter's bytes.
package drivesim
