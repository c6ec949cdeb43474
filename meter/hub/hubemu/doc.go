// Package hubemu emulates the SATA power hub of docs/hub-protocol.md on a
// pseudo-terminal, byte for byte, the way httptest.Server stands in for a
// web server: New(Options) starts it, Path() is the tty to open with
// hub.Open, Close() stops it. The pty comes from github.com/creack/pty;
// Path is a symlink to its slave, so it stays the same across a
// re-enumerating disconnect.
//
// # Drives
//
// Each port has a meter.SimDrive (default: meter.ConstantDrive, 5 V 80 mA,
// 12 V 0 mA). The emulator renders it in real time in Tick-sized chunks on
// its own clock — host elapsed × (1 + DriftPPM/1e6) + ClockOffset, see
// EmuTime — quantises the readings to the protocol's LSBs (1.25 mV bus;
// per-channel trimmed current LSBs reported by READ_CAL; Options.CurrentLSB
// and WideLSB choose other nominal ones), and tells the drive
// about DEVSLP and power commands with SetDevSlp/SetPower before emitting
// the matching EVENT.
//
// # Faults
//
// Faults corrupts and drops bytes, truncates frames, stalls the output
// (buffering up to BufferBytes, then reporting an overrun), and takes the
// link down for a while (nothing sent, commands ignored; the sample index
// keeps counting so the host sees an exact gap). With Reenumerate, or on
// Unplug(d), the link really goes: the pty closes (the host's reads fail),
// Path vanishes, and a new pty appears at Path when it returns.
//
// # Protocol version 2
//
// By default the emulator is a version 2 hub (Options.Protocol): LINK,
// SAMPLES2 split to the agreed frame size, 20-bit samples (an INA228-class
// model: 8 µA on 5 V, 10 µA on 12 V, trimmed per channel like the 16-bit
// LSBs), packed into format 3 when the host asks (Options.Formats lists
// the formats; without FormatBitPacked it is a v2 hub from before
// format 3), and a ring of the last RingBytes of samples — sent or not,
// kept unpacked — that RESEND reads from, answered with RESENT frames
// (packed afresh) and EXPIRED. Options.Pace sends no faster than Link
// bytes per second, as a UART would (Link = hub.LinkUART921600). The faults
// apply to every frame, re-sent ones included. After a re-enumeration it
// sends nothing until the host speaks. Protocol 1 makes it a v1 hub.
//
// # Back-pressure
//
// A writer goroutine blocks on the pty while the host is not reading, as a
// UART or USB endpoint holds off a real hub. The hub's queue (BufferBytes,
// default 1 MiB) absorbs it; past that, whole sample blocks are dropped
// and reported by an OVERRUN EVENT. Nothing is cut mid-frame, so a slow host
// sees exact gaps, never CRC errors.
//
// # Unpaced output
//
// WriteFast writes what the emulator would send over a duration, as fast as
// possible, starting with IDENTITY, (v2) the ACK of LINK, CALIBRATION and
// the ACK of START so the file decodes on its own (hub.DecodeStream,
// `idlewatt record --port FILE`). With no host there is no RESEND.
//
// # Where it sits
//
// The meter floor (rank 1), beside its driver (it speaks meter/hub's
// protocol); app/emuhub puts simulated drives behind it for `hub emulate`,
// the rig, apst and the accuracy campaign.
package hubemu
