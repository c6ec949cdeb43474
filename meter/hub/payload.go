package hub

import (
	"encoding/binary"
	"fmt"
	"math/bits"

	"github.com/idlewatt/idlewatt/meter"
)

// Every payload type has Append (encode, appending to dst) and
// DecodeFromBytes (decode in place, resetting every field). Decoders never
// keep p except where a field's comment says it aliases it.

var (
	le = binary.LittleEndian
	be = binary.BigEndian
)

func protoErr(t Type, format string, a ...any) error {
	return fmt.Errorf("%w: %s payload: %s", meter.ErrProtocol, t, fmt.Sprintf(format, a...))
}

// StartResume in Start.Flags asks a hub already streaming at this rate and
// port mask to keep streaming and counting instead of refusing
// (NAK STREAMING): a host that lost the link resumes with it, and the first
// block's index tells exactly how many samples the outage cost. A hub not
// streaming starts afresh at index 0 as for a plain START.
const StartResume uint8 = 0x01

// Start is the START command's payload.
type Start struct {
	Rate     uint32 // samples per second per channel
	PortMask uint8  // bit p-1 selects port p
	Flags    uint8  // StartResume, or 0
	// Format is the sample format (Format16, Format20) on a v2 link, whose
	// START is 8 bytes; 0 on a v1 link (6 bytes).
	Format uint8
}

func (s *Start) Append(dst []byte) []byte {
	dst = le.AppendUint32(dst, s.Rate)
	dst = append(dst, s.PortMask, s.Flags)
	if s.Format != 0 {
		dst = append(dst, s.Format, 0)
	}
	return dst
}

func (s *Start) DecodeFromBytes(p []byte) error {
	*s = Start{}
	if len(p) != startLen && len(p) != startV2Len {
		return protoErr(TypeStart, "length %d, want %d (v1) or %d (v2)", len(p), startLen, startV2Len)
	}
	s.Rate, s.PortMask, s.Flags = le.Uint32(p), p[4], p[5]
	if len(p) == startV2Len {
		s.Format = p[6]
		if s.Format == 0 {
			return protoErr(TypeStart, "v2 START with sample format 0")
		}
	}
	return nil
}

// Ack is the ACK payload. Rate and ChanMask are set only when Cmd is START
// (and on a v2 link Format and RingSamples, the ring's depth in samples of
// this stream); Version and MaxFrame only when Cmd is LINK; Echo only when
// Cmd is PING (it aliases the decoded payload).
type Ack struct {
	Cmd         Type
	Rate        uint32
	ChanMask    uint16
	Format      uint8
	RingSamples uint32
	Version     uint8
	MaxFrame    uint16
	Echo        []byte
}

func (a *Ack) Append(dst []byte) []byte {
	dst = append(dst, byte(a.Cmd))
	switch a.Cmd {
	case TypeStart:
		dst = le.AppendUint32(dst, a.Rate)
		dst = le.AppendUint16(dst, a.ChanMask)
		if a.Format != 0 {
			dst = le.AppendUint32(append(dst, a.Format, 0), a.RingSamples)
		}
	case TypeLink:
		dst = le.AppendUint16(append(dst, a.Version, 0), a.MaxFrame)
	case TypePing:
		dst = append(dst, a.Echo...)
	}
	return dst
}

func (a *Ack) DecodeFromBytes(p []byte) error {
	*a = Ack{}
	if len(p) < 1 {
		return protoErr(TypeAck, "empty")
	}
	a.Cmd = Type(p[0])
	switch a.Cmd {
	case TypeStart:
		if len(p) != 7 && len(p) != ackStartV2 {
			return protoErr(TypeAck, "ACK of START has length %d, want 7 (v1) or %d (v2)", len(p), ackStartV2)
		}
		a.Rate, a.ChanMask = le.Uint32(p[1:]), le.Uint16(p[5:])
		if len(p) == ackStartV2 {
			a.Format, a.RingSamples = p[7], le.Uint32(p[9:])
			if FormatWidth(a.Format) == 0 {
				return protoErr(TypeAck, "ACK of START with sample format %d", a.Format)
			}
		}
	case TypeLink:
		if len(p) != ackLinkLen {
			return protoErr(TypeAck, "ACK of LINK has length %d, want %d", len(p), ackLinkLen)
		}
		a.Version, a.MaxFrame = p[1], le.Uint16(p[3:])
	case TypePing:
		a.Echo = p[1:]
	default:
		if len(p) != 1 {
			return protoErr(TypeAck, "ACK of %s has length %d, want 1", a.Cmd, len(p))
		}
	}
	return nil
}

// Nak is the NAK payload.
type Nak struct {
	Cmd    Type
	Reason Reason
}

func (n *Nak) Append(dst []byte) []byte { return append(dst, byte(n.Cmd), byte(n.Reason)) }

func (n *Nak) DecodeFromBytes(p []byte) error {
	if len(p) != 2 {
		return protoErr(TypeNak, "length %d, want 2", len(p))
	}
	n.Cmd, n.Reason = Type(p[0]), Reason(p[1])
	return nil
}

// RailDesc describes one rail as every port has it.
type RailDesc struct {
	Rail         meter.Rail
	MaxMilliVolt uint16 // full-scale bus voltage
	CurrentLSBnA uint32 // nominal current LSB; READ_CAL has each channel's exact one
}

// Identity is the IDENTITY payload.
type Identity struct {
	Version      uint8
	Ports        uint8
	Caps         uint8 // Cap* bits
	BusLSBuV     uint16
	LinkBytesSec uint32 // what the hub's link carries, for bandwidth checks
	Rails        []RailDesc
	Rates        []uint32
	Model        string
	Firmware     string
	Serial       string
	// Version 2 only (an extension after the strings):
	MaxFrame  uint16   // the largest frame the hub sends or takes, framing included
	RingBytes uint32   // the ring buffer RESEND reads from; 0 = none
	Formats   uint8    // FormatBit16 | FormatBit20
	WideLSBpA []uint32 // per rail (the rail table's order): nominal 20-bit current LSB, pA; 0 without Format20
}

// Channels returns ports × rails, the width of a channel mask.
func (id *Identity) Channels() int { return int(id.Ports) * len(id.Rails) }

func (id *Identity) Append(dst []byte) []byte {
	dst = append(dst, id.Version, id.Ports, byte(len(id.Rails)), byte(len(id.Rates)), id.Caps, 0)
	dst = le.AppendUint16(dst, id.BusLSBuV)
	dst = le.AppendUint32(dst, id.LinkBytesSec)
	for _, r := range id.Rails {
		dst = append(dst, byte(r.Rail), 0)
		dst = le.AppendUint16(dst, r.MaxMilliVolt)
		dst = le.AppendUint32(dst, r.CurrentLSBnA)
	}
	for _, r := range id.Rates {
		dst = le.AppendUint32(dst, r)
	}
	for _, s := range [...]string{id.Model, id.Firmware, id.Serial} {
		if len(s) > 32 {
			s = s[:32]
		}
		dst = append(dst, byte(len(s)))
		dst = append(dst, s...)
	}
	if id.Version >= 2 {
		dst = le.AppendUint16(dst, id.MaxFrame)
		dst = le.AppendUint32(dst, id.RingBytes)
		dst = append(dst, id.Formats, 0)
		for i := range id.Rails {
			var w uint32
			if i < len(id.WideLSBpA) {
				w = id.WideLSBpA[i]
			}
			dst = le.AppendUint32(dst, w)
		}
	}
	return dst
}

// ErrVersion is wrapped (with meter.ErrProtocol) when a hub speaks another
// protocol version.
var ErrVersion = fmt.Errorf("unknown hub protocol version")

// DecodeFromBytes decodes an identity. A version other than 1 to 3 is an
// error wrapping ErrVersion and meter.ErrProtocol; Version is still set.
func (id *Identity) DecodeFromBytes(p []byte) error {
	*id = Identity{}
	if len(p) < 1 {
		return protoErr(TypeIdentity, "empty")
	}
	id.Version = p[0]
	if id.Version < ProtocolV1 || id.Version > ProtocolVersion {
		return fmt.Errorf("%w %d (this driver speaks versions %d to %d): %w", ErrVersion, id.Version, ProtocolV1, ProtocolVersion, meter.ErrProtocol)
	}
	if len(p) < identFixed {
		return protoErr(TypeIdentity, "length %d, shorter than the fixed part (%d)", len(p), identFixed)
	}
	id.Ports, id.Caps = p[1], p[4]
	nr, nq := int(p[2]), int(p[3])
	id.BusLSBuV, id.LinkBytesSec = le.Uint16(p[6:]), le.Uint32(p[8:])
	switch {
	case id.Ports < 1 || id.Ports > 8:
		return protoErr(TypeIdentity, "%d ports (1–8 allowed)", id.Ports)
	case nr < 1 || nr > MaxRailsV2 && id.Version < 3 || nr > 3:
		return protoErr(TypeIdentity, "%d rails per port (1–2 allowed before version 3, 1–3 from it; this hub says version %d)", nr, id.Version)
	case int(id.Ports)*nr > 16:
		return protoErr(TypeIdentity, "%d ports × %d rails = %d channels (at most 16)", id.Ports, nr, int(id.Ports)*nr)
	case nq < 1 || nq > 16:
		return protoErr(TypeIdentity, "%d rates (1–16 allowed)", nq)
	}
	q := p[identFixed:]
	if len(q) < nr*railDescLen+nq*4 {
		return protoErr(TypeIdentity, "truncated rail/rate tables")
	}
	id.Rails = make([]RailDesc, nr)
	for i := range id.Rails {
		id.Rails[i] = RailDesc{Rail: meter.Rail(q[0]), MaxMilliVolt: le.Uint16(q[2:]), CurrentLSBnA: le.Uint32(q[4:])}
		q = q[railDescLen:]
	}
	id.Rates = make([]uint32, nq)
	for i := range id.Rates {
		id.Rates[i] = le.Uint32(q)
		if id.Rates[i] == 0 {
			return protoErr(TypeIdentity, "rate %d is 0 Hz", i)
		}
		q = q[4:]
	}
	for _, s := range [...]*string{&id.Model, &id.Firmware, &id.Serial} {
		if len(q) < 1 || len(q) < 1+int(q[0]) {
			return protoErr(TypeIdentity, "truncated model/firmware/serial strings")
		}
		*s = string(q[1 : 1+q[0]])
		q = q[1+q[0]:]
	}
	if id.Version >= 2 {
		if len(q) != identExtLen+4*nr {
			return protoErr(TypeIdentity, "v2 extension of %d bytes, want %d", len(q), identExtLen+4*nr)
		}
		id.MaxFrame, id.RingBytes, id.Formats = le.Uint16(q), le.Uint32(q[2:]), q[6]
		id.WideLSBpA = make([]uint32, nr)
		for i := range id.WideLSBpA {
			id.WideLSBpA[i] = le.Uint32(q[identExtLen+4*i:])
		}
		q = q[len(q):]
	}
	if len(q) != 0 {
		return protoErr(TypeIdentity, "%d trailing bytes", len(q))
	}
	return nil
}

// CalEntry is one channel's calibration.
type CalEntry struct {
	Port          uint8
	Rail          meter.Rail
	CalReg        uint16 // the INA226 CALIBRATION register the firmware wrote
	ShuntMicroOhm uint32
	CurrentLSBnA  uint32 // amps per current count × 1e9
	// WideLSBpA is the 20-bit format's current LSB (amps per count × 1e12),
	// in a v2 hub's 16-byte entries; 0 in v1's 12-byte ones.
	WideLSBpA uint32
}

// Calibration is the CALIBRATION payload. Wide selects the v2 entries of
// 16 bytes (with WideLSBpA); the decoder sets it from the length.
type Calibration struct {
	Entries []CalEntry
	Wide    bool
}

func (c *Calibration) Append(dst []byte) []byte {
	dst = append(dst, byte(len(c.Entries)))
	for _, e := range c.Entries {
		dst = append(dst, e.Port, byte(e.Rail))
		dst = le.AppendUint16(dst, e.CalReg)
		dst = le.AppendUint32(dst, e.ShuntMicroOhm)
		dst = le.AppendUint32(dst, e.CurrentLSBnA)
		if c.Wide {
			dst = le.AppendUint32(dst, e.WideLSBpA)
		}
	}
	return dst
}

func (c *Calibration) DecodeFromBytes(p []byte) error {
	c.Entries = c.Entries[:0]
	size := calEntryLen
	if len(p) > 1 && p[0] > 0 && len(p) == 1+int(p[0])*calEntryV2 {
		size = calEntryV2
	}
	c.Wide = size == calEntryV2
	if len(p) < 1 || len(p) != 1+int(p[0])*size {
		return protoErr(TypeCal, "length %d does not match its entry count", len(p))
	}
	for q := p[1:]; len(q) > 0; q = q[size:] {
		e := CalEntry{Port: q[0], Rail: meter.Rail(q[1]), CalReg: le.Uint16(q[2:]),
			ShuntMicroOhm: le.Uint32(q[4:]), CurrentLSBnA: le.Uint32(q[8:])}
		if c.Wide {
			e.WideLSBpA = le.Uint32(q[12:])
		}
		c.Entries = append(c.Entries, e)
	}
	return nil
}

// Samples is the SAMPLES payload, decoded in place: Data aliases the frame
// and holds Count sample sets, each Chans × (bus u16, current i16) in
// ascending channel order.
type Samples struct {
	First uint64 // sample index of the first set
	Mask  uint16 // bit c: channel c = (port-1)×rails + rail position
	Count int
	Chans int
	Data  []byte
	// SAMPLES2 only: Flags (SamplesResent), Format; Width is the bytes per
	// channel sample (4 for SAMPLES).
	Flags  uint8
	Format uint8
	Width  int
	// unpacked holds a FormatPacked block's samples in Format20's layout
	// (Data points into it), then unpack's copy of its bit stream.
	// Reused by the next DecodeV2.
	unpacked []byte
}

// Bus returns the bus-voltage count of sample k, channel position j.
func (s *Samples) Bus(k, j int) uint16 { return le.Uint16(s.Data[(k*s.Chans+j)*4:]) }

// Current returns the current count of sample k, channel position j.
func (s *Samples) Current(k, j int) int16 { return int16(le.Uint16(s.Data[(k*s.Chans+j)*4+2:])) }

// AppendHeader appends the block header; the caller appends the counts.
func (s *Samples) AppendHeader(dst []byte) []byte {
	dst = le.AppendUint64(dst, s.First)
	dst = le.AppendUint16(dst, s.Mask)
	return le.AppendUint16(dst, uint16(s.Count))
}

func (s *Samples) Append(dst []byte) []byte { return append(s.AppendHeader(dst), s.Data...) }

func (s *Samples) DecodeFromBytes(p []byte) error {
	if len(p) < samplesHdr {
		return protoErr(TypeSamples, "length %d, shorter than the block header", len(p))
	}
	s.First, s.Mask, s.Count = le.Uint64(p), le.Uint16(p[8:]), int(le.Uint16(p[10:]))
	s.Chans = bits.OnesCount16(s.Mask)
	s.Data = p[samplesHdr:]
	s.Flags, s.Format, s.Width = 0, Format16, bytesPerChanSample
	if s.Chans == 0 || s.Count == 0 {
		return protoErr(TypeSamples, "empty block (mask 0x%04X, %d samples)", s.Mask, s.Count)
	}
	if len(s.Data) != s.Count*s.Chans*bytesPerChanSample {
		return protoErr(TypeSamples, "%d data bytes for %d samples × %d channels", len(s.Data), s.Count, s.Chans)
	}
	return nil
}

// MarkEcho is the MARK_ECHO payload.
type MarkEcho struct {
	ID    uint32
	Index uint64 // index of the next sample to be taken when the mark arrived
}

func (m *MarkEcho) Append(dst []byte) []byte {
	return le.AppendUint64(le.AppendUint32(dst, m.ID), m.Index)
}

func (m *MarkEcho) DecodeFromBytes(p []byte) error {
	if len(p) != markEchoLen {
		return protoErr(TypeMarkEcho, "length %d, want %d", len(p), markEchoLen)
	}
	m.ID, m.Index = le.Uint32(p), le.Uint64(p[4:])
	return nil
}

// Event is the EVENT payload.
type Event struct {
	Kind  uint8  // Ev*
	Port  uint8  // 1-based; 0 = not port-specific
	Index uint64 // sample index at which it happened
	Value uint32
}

func (e *Event) Append(dst []byte) []byte {
	dst = append(dst, e.Kind, e.Port, 0, 0)
	return le.AppendUint32(le.AppendUint64(dst, e.Index), e.Value)
}

func (e *Event) DecodeFromBytes(p []byte) error {
	if len(p) != eventLen {
		return protoErr(TypeEvent, "length %d, want %d", len(p), eventLen)
	}
	e.Kind, e.Port, e.Index, e.Value = p[0], p[1], le.Uint64(p[4:]), le.Uint32(p[12:])
	return nil
}
