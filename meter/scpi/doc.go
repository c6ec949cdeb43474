// Package scpi polls SCPI bench instruments (DC power analyzers, SMUs,
// DMMs) over a serial line as a meter: Keysight N6705, Keithley 2450 and
// 2280S, Rigol DP800, Siglent SDM.
//
// # Families
//
// *IDN? picks the family (Detect) unless Options.Family names one; every
// command string can be overridden (Options.Override). Defaults come from
// the vendors' programming manuals: Keysight N6700 Series Programmer's
// Reference (N6705), Keithley 2450 Reference Manual, Keithley 2280S
// Reference Manual, Rigol DP800 Programming Guide, Siglent SDM Series
// Programming Guide.
//
// # Polling and errors
//
// Stream polls current (and voltage, where the family measures it) once per
// period of the stream's rate: StreamConfig.Rate, default the family's Rate
// (n6705 50/s, k2450 100/s, k2280s 100/s, dp800 20/s, sdm 150/s), at most
// its MaxRate (100, 250, 200, 50, 150/s; family.go says why) — good for idle
// power, not for peaks. Polls are paced by a ticker on the host clock:
// sample k belongs to the k-th period, a poll that starts late is still one
// sample, and periods no poll started in (the previous one overran) are a
// "late" gap of exactly their count. A synthetic mark about once a second
// carries the host times bracketing a sample's current query. Each reply
// must arrive within Options.Timeout. A command the instrument rejects gets no reply; the
// driver then drains SYST:ERR? and reports the first entry (ErrInstrument,
// meter.ErrRejected). A failed poll is a one-sample gap with the reason;
// three in a row end the stream. Over-range readings (9.9E37) and error
// strings are never taken as numbers.
//
// # Array mode
//
// With Options.Array the instrument acquires in its own buffer (the
// family's ArrayMode: N6705 MEAS:ARR:CURR? after SENS:SWE:TINT/POIN; 2280S
// :INIT, *WAI, :TRAC:DATA? "READ") and each fetch is one Block of Points
// consecutive samples at the interval the instrument reads back (it rounds
// the request to its timebase; that interval is the stream's rate). While
// the host fetches, the instrument is not acquiring: the next array's
// first index is the host time since the first array's start over the
// interval, rounded, so the dead time is one "fetch" gap of exactly the
// periods between the arrays, never filled. Replies are ASCII or, with
// Options.ArrayBinary (N6705 FORM REAL), an IEEE 488.2 definite-length
// block of float32 big-endian (ParseArray reads both). An over-range
// reading is a one-sample gap; a failed fetch is a whole array's gap. The
// voltage is Options.Voltage or one reading at open (the rail is
// regulated, and a voltage query per array would lengthen every dead
// time). A fetch in flight when ctx ends is completed (the instrument would
// send it anyway) and delivered.
//
// # Emulator
//
// scpiemu answers like any of the families on a pty (`idlewatt scpi
// emulate`), including -113 "Undefined header" for unknown commands, with an
// optional reply delay to act out a slow instrument.
//
// # Serial port
//
// Open uses internal/serialport (go.bug.st/serial, raw 8N1, Options.Baud,
// default 115200) without modem-status ioctls, so a pty works too. The port
// has *os.File's deadline semantics (a timed-out read is
// os.ErrDeadlineExceeded), which Query's per-reply timeout relies on.
//
// # Where it sits
//
// The meter floor (rank 1): a driver, opened by kind through
// meter/registry, its emulator meter/scpi/scpiemu beside it; cmd/idlewatt
// imports it for the families.
package scpi
