// Package emuhub is the one place the emulated hub is assembled with the
// simulated drives behind its ports (issue 28): `hub emulate`
// (cmd/idlewatt), the rig's emulated set-up (app/rig), the simulated
// NVMe host's hub path (app/apst) and the accuracy campaign's start check
// (app/accuracy) all call Options or New.
//
// A port holds a meter.SimDrive: a simulated SATA drive (drivesim.Model)
// on its 5 V and 12 V rails, a simulated NVMe drive (NVMeDrive, a
// states/nvme/sim.HubDrive) on the 3.3 V rail, or nothing (nil: Empty).
// The hub gets its 3.3 V rail, and so protocol 3 unless the options name
// another, when a port holds a drive that loads it (meter.SimDrive3V3).
// Everything else — rate, seed, faults, clock, formats — is the caller's
// hubemu.Options, passed through.
//
// Flags and PPK2Flags declare `hub emulate`'s and `ppk2 emulate`'s
// settings (config keys under emulate. and ppk2emu.); Read and ReadPPK2
// check them where the options live (ports, protocol, ring, frame size,
// clock, faults, the simulated drives and their truth files).
//
// It sits in the application layer because it joins two floors that do
// not import each other: the hub emulator (meter/hub/hubemu) and the
// simulated drives (states/drivesim, states/nvme/sim), which render meter
// samples.
package emuhub
