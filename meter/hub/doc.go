// Package hub drives idlewatt's inline SATA power hub: a box measuring each
// drive port's 5 V and 12 V rails with INA226-class sensors and driving each
// port's DEVSLP pin. The wire protocol is docs/hub-protocol.md (versions 1
// and 2).
//
// # Opening
//
// Open(path, Options{}) opens a serial port with go.bug.st/serial (921600
// 8N1, never a modem-status ioctl, so a pty works) and identifies the hub;
// New(rw, opts) does the same over any io.ReadWriter. A reader goroutine
// drains the port into a bounded host buffer (Options.HostBuffer) so a slow
// sink never backs up into the link; while a stream runs and no command
// waits for its answer, the decoder is woken every 20 ms of arrivals (or
// 32 KiB) rather than at every read, so samples reach the Sink up to about
// 20 ms later — arrival times (mark echoes) are still taken at each read.
// Nothing answering wraps meter.ErrNoDevice,
// garbage wraps meter.ErrProtocol, another protocol version wraps ErrVersion.
// A *Hub is a meter.Meter, meter.DevSlpPin, meter.PortPower and
// meter.Marker; commands work from any goroutine while Stream runs. A NAK
// is a *RejectError (meter.ErrRejected, and meter.ErrUnsupported when the
// hub cannot do it).
//
// # Reconnecting
//
// A hub opened by path that vanishes mid-stream (read error, hang-up, the
// device node gone) or falls silent is reported as meter.EventDisconnect;
// Stream reopens the path with backoff, checks the same hub answers,
// resumes its stream (START with StartResume: the hub kept counting) and
// reports meter.EventReconnect with the first frame. The samples lost are
// one exact meter.Gap with Reason "disconnect". Only a hub gone for
// Options.GiveUp (default 30 s) ends Stream, with meter.ErrDisconnected.
// docs/hub-protocol.md § Host behaviour has the details.
//
// # Protocol version 2
//
// With a hub whose IDENTITY says version 2, the handshake sends LINK
// (Options.Protocol, Options.MaxFrame: 256-byte frames by default) and
// asks for 20-bit samples when the hub has them (Options.Format), packed
// (format 3, packed.go: per-frame delta/Rice coding, about a third of
// format 2's bytes) when it lists that too, so Info's current LSBs are the
// 20-bit ones. Sample blocks come split into SAMPLES2 frames; packed ones
// are unpacked into the decoder's reused buffer before the merge. A gap in the live stream becomes a hole asked for again
// with RESEND while the blocks behind it wait (merge.go); RESENT blocks
// fill it, EXPIRED or a timeout closes it as an exact gap with the reason
// it was lost, and the sink sees every index once, in order. After STOP
// the host waits for the holes still open. LinkStats has the account;
// meter.Stats.Recovered and Refused the totals.
//
// # Refused frames
//
// Once a stream runs, a frame with a good CRC that the host cannot use —
// a payload that does not decode, an EVENT of an undefined kind or port, a
// block of channels START did not acknowledge, a frame of the other
// protocol version, an unknown type — is dropped and counted by kind
// (refuse.go: LinkStats.Refused, Hub.RefusedBy), never the end of the
// stream; the samples it carried are an exact gap with reason "refused" (a
// hole RESEND may fill, on v2). An index beyond what the hub can have
// counted since START (a counter near 2⁶⁴, a jump) is a restart, mapped
// onto the timeline modulo 2⁶⁴ so a wrap carries on; no index on the
// timeline exceeds 2⁶². docs/hub-protocol.md § Frames the host refuses.
//
// # Recorded streams
//
// OpenReplay / NewReplay / DecodeStream decode a raw device→host byte stream
// (hubemu.WriteFast output, or a dump) as fast as the CPU allows; OpenMeter
// picks Open or OpenReplay by what path is (meter/registry does the same for
// every kind).
//
// # Decoding
//
// Scanner splits bytes into CRC-checked frames, resynchronising on the start
// bytes and counting CRC errors, resyncs and discarded bytes; a Frame's
// payload aliases the Scanner's buffer until the next Next. Payload types
// decode in place (DecodeFromBytes, gopacket style) and encode with Append.
// Steady-state decoding allocates nothing per frame. Gaps are computed from
// each block's first-sample index and from overrun events, exactly, and
// delivered as meter.Gap; nothing is interpolated. An index that goes back
// is a duplicate (a repeat of the block just delivered: dropped, counted,
// an EventDuplicate) or a restart (further back: the hub counts again; a
// new epoch continues the timeline after an estimated "restart" gap and an
// EventRestart).
//
// # Bounds
//
// Identity.Check and Calibration.Check (bounds.go) refuse, at Open and in
// NewReplay, LSBs, ranges and calibrations that would make readings wrong
// numbers (a bus LSB of 0, a current LSB of 0xFFFFFFFF nA), with an error
// naming the field and wrapping meter.ErrCalibration.
//
// # Port
//
// Open goes through internal/serialport, which locks the port against a
// second opener (serialport.ErrInUse, "port … in use by PID N").
//
// # Files
//
// hub.go opens and closes a Hub; handshake.go identifies it and agrees the
// link; command.go sends commands and matches their answers; reader.go is
// the reader goroutine, handing frames to commands and to the stream;
// stream.go runs Stream; reconnect.go loses and regains the link. The
// decoding side: scanner.go and crc.go (frames), payload.go, v2.go and
// packed.go (payloads; packed_float.go decodes a packed block straight to
// volts and amps for the stream decoder, a noisy one a channel sample a
// step through packed_prefix.go's tables), decoder.go, merge.go and
// refuse.go (the timeline), replay.go (recorded streams).
//
// # CRC
//
// CRC-16/CCITT-FALSE (github.com/sigurn/crc16's CRC16_CCITT_FALSE, check
// 0x29B1), computed here slicing-by-16 so the CRC is not the bottleneck.
//
// # Where it sits
//
// The meter floor (rank 1): a driver, opened by kind through
// meter/registry, its emulator meter/hub/hubemu beside it; the application
// layer and cmd/idlewatt also use its own calls (DEVSLP pins, port power,
// accuracy).
package hub
