// Package meter defines what every power meter idlewatt talks to looks like:
// the Meter interface, the sample Block, gaps, mark echoes and meter events,
// and small capability interfaces for what only some meters can do.
//
// # Data model
//
// A meter measures one or more channels. A channel is one rail of one drive
// port (the SATA hub has a 5 V and a 12 V channel per port; a PPK2 has one).
// Samples are numbered by a 64-bit sample index on the meter's own clock:
// sample n was taken at n / rate seconds after the meter's stream started.
// Samples travel in Blocks: consecutive samples of one channel, with the
// index of the first. A Gap says exactly which indices are missing; nothing is
// ever interpolated.
//
// The host clock (internal/hostclock, CLOCK_MONOTONIC) and the meter clock are
// tied together by marks: the host sends a mark, the meter echoes the sample
// index at which it arrived, and the host records when it sent and received
// it. Analysis fits offset and drift from those triples. Meters without a
// mark command synthesize echoes from their receive times (see Marker).
//
// # Drivers
//
// One driver per sub-package: meter/hub (the inline SATA power hub, protocol
// in docs/hub-protocol.md). Later: ppk2, scpi, battery, linemeter.
//
// # Capabilities
//
// DevSlpPin, PortPower and Marker are implemented by meters that can drive a
// port's DEVSLP pin, switch a port's power, or echo clock marks. Callers
// discover them with a type assertion.
package meter
