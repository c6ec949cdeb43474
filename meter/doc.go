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
// The host clock (hostclock.Time, CLOCK_MONOTONIC ns) and the meter clock are
// tied together by marks: the host sends a mark, the meter echoes the sample
// index at which it arrived, and the host records when it sent and received
// it. Analysis fits offset and drift from those triples. Meters without a
// mark command synthesize echoes from their receive times (see Marker).
//
// # Drivers
//
// One driver per sub-package, each registered by kind in meter/registry
// (one file per driver there: its opener, replayer, default port and the
// checks of its options), which `idlewatt record --meter KIND`, `idlewatt
// meters` and the measurement rig open meters through (docs/meters.md has
// wiring and options):
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
// Serial drivers open ports through internal/serialport (go.bug.st/serial,
// locked against a second opener) and never use modem-status ioctls, so
// the emulators' pseudo-terminals (github.com/creack/pty) stand in for
// devices. Each driver has a ResolveConfig that fills a StreamConfig's
// defaults the way its Stream will; its meter offers it as the Resolver
// capability.
//
// # Capabilities
//
// DevSlpPin, PortPower and Marker are implemented by meters that can drive a
// port's DEVSLP pin, switch a port's power, or echo clock marks; Resolver by
// meters that fill a stream's defaults (Resolve uses it), Reconnector by
// meters that reopen a vanished link (the hub). Callers discover them with
// a type assertion, never by kind.
//
// # Power
//
// Block.Power(k) is one sample's V·I, Block.PowerSum() the block's sum:
// every consumer that needs a block's power (progress, live metrics,
// analysis, the HTML viewer) computes it there.
//
// # Where it sits
//
// The bottom floor of the data path above the leaves (rank 1), over units
// and hostclock only; every driver beneath it implements it, and capture,
// analysis, report and the application layer import its types.
package meter
