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
// The host clock (hostclock, CLOCK_MONOTONIC) and the meter clock are
// tied together by marks: the host sends a mark, the meter echoes the sample
// index at which it arrived, and the host records when it sent and received
// it. Analysis fits offset and drift from those triples. Meters without a
// mark command synthesize echoes from their receive times (see Marker).
//
// # Drivers
//
// One driver per sub-package, each registered for `idlewatt record --meter
// KIND` in cmd/idlewatt/meters.go (docs/meters.md has wiring and options):
//
//   - meter/hub (hub): the inline SATA power hub, protocol in
//     docs/hub-protocol.md; emulator meter/hub/hubemu.
//   - meter/ppk2 (ppk2): Nordic Power Profiler Kit II over CDC-ACM, and raw
//     dumps of its stream; emulator meter/ppk2/ppk2emu.
//   - meter/battery (battery): the laptop's battery gauge in sysfs, plus the
//     RAPL CPU package channel; fixtures in fixtures/battery.
//   - meter/linemeter (line): meters printing one reading per line (INA2xx
//     sketches, CurrentRanger), or their logs; fixtures in fixtures/linemeter.
//   - meter/scpi (scpi): SCPI bench instruments polled over serial; emulator
//     meter/scpi/scpiemu.
//
// Serial drivers open ports with go.bug.st/serial and never use
// modem-status ioctls, so the emulators' pseudo-terminals (github.com/creack/pty)
// stand in for devices. Each driver has a ResolveConfig that fills a
// StreamConfig's defaults the way its Stream will.
//
// # Capabilities
//
// DevSlpPin, PortPower and Marker are implemented by meters that can drive a
// port's DEVSLP pin, switch a port's power, or echo clock marks. Callers
// discover them with a type assertion.
package meter
