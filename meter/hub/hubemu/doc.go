// Package hubemu emulates the SATA power hub of docs/hub-protocol.md on a
// pseudo-terminal, byte for byte, the way httptest.Server stands in for a
// web server: New(Options) starts it, Path() is the tty to open with
// hub.Open, Close() stops it.
//
// # Drives
//
// Each port has a meter.SimDrive (default: meter.ConstantDrive, 5 V 80 mA,
// 12 V 0 mA). The emulator renders it in real time in Tick-sized chunks on
// its own clock — host elapsed × (1 + DriftPPM/1e6) + ClockOffset, see
// EmuTime — quantises the readings to the protocol's LSBs (1.25 mV bus;
// per-channel trimmed current LSBs reported by READ_CAL), and tells the drive
// about DEVSLP and power commands with SetDevSlp/SetPower before emitting
// the matching EVENT.
//
// # Faults
//
// Faults corrupts and drops bytes, truncates frames, stalls the output
// (buffering up to BufferBytes, then reporting an overrun), and takes the
// link down for a while (nothing sent, commands ignored; the sample index
// keeps counting so the host sees an exact gap).
//
// # Unpaced output
//
// WriteFast writes what the emulator would send over a duration, as fast as
// possible, starting with IDENTITY, CALIBRATION and the ACK of START so the
// file decodes on its own (hub.DecodeStream, `idlewatt record --port FILE`).
package hubemu
