package hub

import (
	"encoding/binary"
	"fmt"
)

// ProtocolVersion is the highest version of docs/hub-protocol.md this
// package speaks; it speaks ProtocolV1 and 2 too. Version 3 is version 2
// with a 3.3 V rail (up to 3 rails per port, P × R ≤ 16): an M.2
// interposer on a hub port (docs/hub-protocol.md § Version 3).
const ProtocolVersion = 3

// MaxRailsV2 is the most rails per port before version 3.
const MaxRailsV2 = 2

// Framing constants; see docs/hub-protocol.md §Framing.
const (
	Start0     = 0xA5 // first start byte
	Start1     = 0x5A // second start byte
	HeaderLen  = 6    // start(2) type(1) seq(1) length(2)
	TrailerLen = 2    // CRC-16, most significant byte first
	MaxPayload = 4088 // so that a whole frame fits in 4096 bytes
	MaxFrame   = HeaderLen + MaxPayload + TrailerLen
)

// Type is a frame type. Host→hub commands are 0x01–0x7F, hub→host frames
// 0x80–0xFF.
type Type byte

// Frame types.
const (
	TypeIdentify Type = 0x01 // host→hub: who are you
	TypeStart    Type = 0x02 // host→hub: start streaming (rate, port mask)
	TypeStop     Type = 0x03 // host→hub: stop streaming
	TypeDevSlp   Type = 0x04 // host→hub: set a port's DEVSLP pin
	TypePower    Type = 0x05 // host→hub: switch a port's power
	TypeMark     Type = 0x06 // host→hub: clock mark
	TypeReadCal  Type = 0x07 // host→hub: read calibration
	TypePing     Type = 0x08 // host→hub: echo request
	TypeAck      Type = 0x80 // hub→host: command accepted
	TypeNak      Type = 0x81 // hub→host: command rejected, with a reason
	TypeIdentity Type = 0x82 // hub→host: answer to IDENTIFY
	TypeCal      Type = 0x83 // hub→host: answer to READ_CAL
	TypeSamples  Type = 0x84 // hub→host: a block of samples
	TypeMarkEcho Type = 0x85 // hub→host: answer to MARK
	TypeEvent    Type = 0x86 // hub→host: something happened
)

func (t Type) String() string {
	switch t {
	case TypeIdentify:
		return "IDENTIFY"
	case TypeStart:
		return "START"
	case TypeStop:
		return "STOP"
	case TypeDevSlp:
		return "SET_DEVSLP"
	case TypePower:
		return "PORT_POWER"
	case TypeMark:
		return "MARK"
	case TypeReadCal:
		return "READ_CAL"
	case TypePing:
		return "PING"
	case TypeAck:
		return "ACK"
	case TypeNak:
		return "NAK"
	case TypeIdentity:
		return "IDENTITY"
	case TypeCal:
		return "CALIBRATION"
	case TypeSamples:
		return "SAMPLES"
	case TypeMarkEcho:
		return "MARK_ECHO"
	case TypeEvent:
		return "EVENT"
	case TypeReadAccuracy:
		return "READ_ACCURACY"
	case TypeAccuracy:
		return "ACCURACY"
	}
	return v2String(t)
}

// Reason is why the hub rejected a command (NAK).
type Reason byte

// NAK reasons.
const (
	ReasonUnknownCommand Reason = 1 // type not known to this firmware
	ReasonBadLength      Reason = 2 // payload length wrong for the type
	ReasonBadPort        Reason = 3 // port 0, above the port count, or mask with such bits
	ReasonBadRate        Reason = 4 // rate not in the identity's rate list
	ReasonBandwidth      Reason = 5 // rate × channels does not fit the link
	ReasonStreaming      Reason = 6 // START while already streaming
	ReasonNotStreaming   Reason = 7 // MARK while not streaming
	ReasonBadValue       Reason = 8 // a level/flag byte other than 0 or 1
	ReasonUnsupported    Reason = 9 // capability absent (e.g. no power switches)
)

func (r Reason) String() string {
	switch r {
	case ReasonUnknownCommand:
		return "unknown command"
	case ReasonBadLength:
		return "bad payload length"
	case ReasonBadPort:
		return "no such port"
	case ReasonBadRate:
		return "unsupported sample rate"
	case ReasonBandwidth:
		return "rate × channels exceeds the link's bandwidth"
	case ReasonStreaming:
		return "already streaming"
	case ReasonNotStreaming:
		return "not streaming"
	case ReasonBadValue:
		return "bad value"
	case ReasonUnsupported:
		return "capability not supported"
	}
	return v2Reason(r)
}

// Event kinds on the wire; the values equal meter.EventKind's.
const (
	EvDevSlp      = 1 // Value: 1 asserted, 0 released
	EvPortPower   = 2 // Value: 1 on, 0 off
	EvOverCurrent = 3 // Value: current in µA that tripped
	EvOverrun     = 4 // Index: first lost sample; Value: samples lost
)

// Capability bits of the identity frame.
const (
	CapDevSlp    = 1 << 0
	CapPortPower = 1 << 1
	CapMarks     = 1 << 2
)

// Fixed payload sizes.
const (
	startLen           = 6  // rate u32, port mask u8, flags u8
	samplesHdr         = 12 // first index u64, channel mask u16, count u16
	markEchoLen        = 12 // id u32, index u64
	eventLen           = 16 // kind, port, reserved u16, index u64, value u32
	railDescLen        = 8  // rail, reserved, max mV u16, current LSB nA u32
	calEntryLen        = 12 // port, rail, CAL u16, shunt µΩ u32, current LSB nA u32
	identFixed         = 12
	bytesPerChanSample = 4 // bus u16 + current i16
)

// AppendFrame appends a complete frame to dst: start bytes, header, payload
// and CRC. It panics if payload exceeds MaxPayload (a programming error on
// the encoding side, never reachable from received data).
func AppendFrame(dst []byte, t Type, seq byte, payload []byte) []byte {
	if len(payload) > MaxPayload {
		panic(fmt.Sprintf("hub: %s payload of %d bytes exceeds %d", t, len(payload), MaxPayload))
	}
	at := len(dst)
	dst = append(dst, Start0, Start1, byte(t), seq, byte(len(payload)), byte(len(payload)>>8))
	dst = append(dst, payload...)
	return appendCRC(dst, at)
}

// BeginFrame appends a header with a zero length, so a payload can be
// appended in place; FinishFrame fills the length and appends the CRC.
func BeginFrame(dst []byte, t Type, seq byte) ([]byte, int) {
	return append(dst, Start0, Start1, byte(t), seq, 0, 0), len(dst)
}

// FinishFrame completes a frame started at offset at by BeginFrame.
func FinishFrame(dst []byte, at int) []byte {
	n := len(dst) - at - HeaderLen
	if n > MaxPayload {
		panic(fmt.Sprintf("hub: payload of %d bytes exceeds %d", n, MaxPayload))
	}
	binary.LittleEndian.PutUint16(dst[at+4:], uint16(n))
	return appendCRC(dst, at)
}

func appendCRC(dst []byte, at int) []byte {
	c := crcUpdate(crcInit, dst[at+2:])
	return append(dst, byte(c>>8), byte(c))
}
