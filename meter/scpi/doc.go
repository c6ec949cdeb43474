// Package scpi polls SCPI bench instruments (DC power analyzers, SMUs,
// DMMs) over a serial line as a meter: Keysight N6705, Keithley 2450 and
// 2280S, Rigol DP800, Siglent SDM.
//
// # Families
//
// *IDN? picks the family (Detect) unless Options.Family names one; every
// command string can be overridden (Options.Override). Defaults come from
// the manuals (shared/reference/meters.md).
//
// # Polling and errors
//
// Stream polls current (and voltage, where the family measures it) back to
// back, so the rate is what the instrument sustains (tens to hundreds of
// Hz: good for idle power, not for peaks). Each reply must arrive within
// Options.Timeout. A command the instrument rejects gets no reply; the
// driver then drains SYST:ERR? and reports the first entry (ErrInstrument,
// meter.ErrRejected). A failed poll is a one-sample gap with the reason;
// three in a row end the stream. Over-range readings (9.9E37) and error
// strings are never taken as numbers. Buffered/array modes (N6705
// MEAS:ARR, 2280S trace:data?) are not used yet.
//
// # Emulator
//
// scpiemu answers like an N6705 on a pty, including -113 "Undefined
// header" for unknown commands.
//
// # Serial port
//
// Open uses internal/serialport (go.bug.st/serial, raw 8N1, Options.Baud,
// default 115200) without modem-status ioctls, so a pty works too. The port
// has *os.File's deadline semantics (a timed-out read is
// os.ErrDeadlineExceeded), which Query's per-reply timeout relies on.
package scpi
