// Package powerstate names a drive's power states: the one enum that state
// detection (states/detect), which classifies a power trace into states,
// and the simulated drive (states/drivesim), whose true states detection is
// scored against, both speak. One enum, so that a truth segment and a
// detected span compare by value, not by name.
//
// It is a pure package: no I/O, no host control, nothing of the project
// imported.
//
// # The states
//
// Detection classifies into Active, Background, Idle, Partial, Slumber,
// DevSlp and Off (Detected, in report order), and abstains with Unknown.
// The simulator's truth holds Off, Active, Idle, Partial, Slumber and
// DevSlp, and three states detection never names: SpinUp (an HDD's spindle
// starting), Wake (the exit from a low state) and Standby (spun down).
// Detection sees them as what they draw: activity, or the state they lead
// into. Background is detection's alone: the truth marks a background burst
// as a flag on the link state underneath (drivesim.Segment.GC).
package powerstate
