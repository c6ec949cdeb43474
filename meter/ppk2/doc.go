// Package ppk2 drives a Nordic Power Profiler Kit II over its USB CDC-ACM
// serial port, and decodes raw dumps of its stream, behind meter.Meter.
//
// Protocol facts come from Nordic's open-source host, the nRF Connect Power
// Profiler (https://github.com/NordicSemiconductor/pc-nrfconnect-ppk,
// src/device), and IRNAS's ppk2-api-python
// (https://github.com/IRNAS/ppk2-api-python); both are GPL, so the driver
// is reimplemented from the facts, not copied.
//
// # Start-up
//
// Open sends AverageStop and drains the line (a device left streaming by an
// earlier host would otherwise interleave samples with the metadata), then
// GetMetadata, and reads text until END (Options.Timeout, default 3 s;
// nothing → meter.ErrNoDevice, text without END → meter.ErrProtocol). It
// then sets the regulator (Options.Supply, else the metadata's VDD), resets
// the five user gains to 1.0 if any is outside [0.9, 1.1], sets the power
// mode and switches DUT power on (in both modes unless Options.KeepDUTOff:
// a drive must be powered to be measured).
//
// # Metadata behaviours
//
// NordicApp (default) lowercases keys, treats -nan and every 0 as missing
// (GS0: 0.0000 → 1). ZeroROnly replaces only R values of 0. In both, NaN and
// infinities are missing (a NaN calibration would turn every sample into
// NaN) and each replaced value is listed in Metadata.Warnings. A value that
// is not a number is an error naming its line.
//
// # Conversion
//
//	adc = ADC·4, r0 = (adc − O[r])·(1.8/163840 / R[r])
//	I   = UG[r]·(r0·(GS[r]·r0 + GI[r]) + (S[r]·VDD/1000 + I[r]))
//
// Converter folds the per-range terms once and evaluates in the same order,
// so results equal the formula bit for bit. SpikeFilter is the reference
// hosts' range-switch filter: the sample at a range change and the two
// after it are replaced by an exponential average (0.18, or 0.06 into
// range 4). Options.NoSpikeFilter turns it off.
//
// # Gaps
//
// The 6-bit counter tells how many samples were lost modulo 64; losses of
// 64 or more raw samples (0.64 ms) in one piece are under-counted by a
// multiple of 64 (the synthetic marks still tie the clock to the host).
// Up to four out-of-sequence words are tolerated (kept as samples) if the
// old sequence resumes; three words in sequence from a new counter confirm
// a gap, reported exactly through Sink.Gap with Reason "counter". Lost bytes
// (not whole words) break the alignment: the decoder hunts byte by byte for
// four words in sequence and reports the smallest gap consistent with the
// counter and the bytes skipped. Stats counts resyncs and discarded bytes.
//
// # Rates, modes, logic
//
// The device samples at 100 kS/s. StreamConfig.Rate = 100 kS/s ÷ N averages
// N raw samples per output sample (10 kS/s = 10); an output window holding
// any missing raw sample is a gap, never a mean of fewer samples. In source
// mode V is the regulator set-point; in ampere mode the PPK2 cannot measure
// the voltage, so Options.Supply is required and used as V. The eight
// digital inputs become meter.EventLogic events (Value = D7..D0), one at
// the start and one per change, so a GPIO wired to the host can mark
// activity. SetPortPower switches DUT power (port 1) and records an
// EventPortPower. Without a mark command, Stream synthesises a MarkEcho
// about once a second from the receive time of a read and the index of its
// last sample (Synthetic = true).
//
// # Dumps
//
// Open on a regular file reads a raw device→host dump: the metadata text
// through "END" (and its "\n" or "\r\n", if present), then sample words.
// Stream decodes it as fast as it can, with marks on the nominal rate, and
// returns nil at the end of the file.
//
// # Serial port
//
// The tty is opened by internal/serialport (go.bug.st/serial, raw 8N1; the
// PPK2 ignores the baud rate) without modem-status ioctls, so a pty works as
// well as the device. The port has *os.File's deadline semantics (a
// timed-out Read is os.ErrDeadlineExceeded, never (0, nil)), which New and
// Stream use; a deadline set from another goroutine takes effect within
// 50 ms.
//
// # Where it sits
//
// The meter floor (rank 1): a driver, opened by kind through
// meter/registry, its emulator meter/ppk2/ppk2emu beside it.
package ppk2
