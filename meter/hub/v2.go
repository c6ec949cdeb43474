package hub

import (
	"fmt"
	"math/bits"
)

// Protocol version 2 (docs/hub-protocol.md § Version 2): a maximum frame
// size agreed by LINK, sample blocks split to fit it, a ring buffer of
// recent samples on the hub that a host reads again with RESEND, and
// 20-bit current samples. Framing and IDENTIFY/IDENTITY are those of v1;
// IDENTITY's version byte says what the hub speaks, and LINK says what the
// host chose.

// ProtocolV1 is the first protocol version; ProtocolVersion (2) the
// highest this package speaks.
const ProtocolV1 = 1

// Version 2 frame types.
const (
	TypeLink     Type = 0x09 // host→hub: protocol version and maximum frame size for this link
	TypeResend   Type = 0x0A // host→hub: send samples [first, first+count) again from the ring
	TypeSamples2 Type = 0x87 // hub→host: a v2 sample block (format, RESENT flag)
	TypeExpired  Type = 0x88 // hub→host: RESEND's samples [first, first+count) are no longer in the ring
)

// Version 2 NAK reasons.
const (
	ReasonNotNegotiated Reason = 10 // a v2 command on a link that negotiated v1
	ReasonNeverSent     Reason = 11 // RESEND of samples not taken yet (or count 0, or not streaming)
	ReasonNoRing        Reason = 12 // RESEND to a hub whose ring buffer holds nothing (depth 0)
	ReasonBadFormat     Reason = 13 // a sample format the hub does not have
)

// Sample formats (START v2, SAMPLES2): bytes per channel sample and what
// they hold.
const (
	Format16 uint8 = 1 // bus u16, current i16: 4 bytes (the v1 layout)
	Format20 uint8 = 2 // bus u16, current 20-bit signed in 3 bytes: 5 bytes
	// FormatPacked (3, packed.go): format 2's values, delta/Rice coded.
)

// Format bits of IDENTITY v2's format mask.
const (
	FormatBit16 = 1 << (Format16 - 1)
	FormatBit20 = 1 << (Format20 - 1)
)

// FormatWidth returns the bytes per channel sample of format f as a hub
// keeps it in its ring and a host holds it decoded, 0 if unknown: 4 for
// Format16, 5 for Format20 and for FormatPacked (format 2's values; on
// the wire a packed sample's size varies, PackedAssumedBytes on average).
func FormatWidth(f uint8) int {
	switch f {
	case Format16:
		return 4
	case Format20, FormatPacked:
		return 5
	}
	return 0
}

// FormatName names sample format f for people: "16-bit", "20-bit",
// "20-bit packed", else "format N".
func FormatName(f uint8) string {
	switch f {
	case Format16:
		return "16-bit"
	case Format20:
		return "20-bit"
	case FormatPacked:
		return "20-bit packed"
	}
	return fmt.Sprintf("format %d", f)
}

// FormatFullScale returns the largest current count of format f.
func FormatFullScale(f uint8) int32 {
	if f == Format20 || f == FormatPacked {
		return 1<<19 - 1
	}
	return 1<<15 - 1
}

// SAMPLES2 flags.
const (
	SamplesResent uint8 = 1 << 0 // an answer to RESEND, not live data
)

// Link frame limits: the smallest maximum a host may ask for, the v2
// default (suited to a noisy 921,600-baud UART: at 1 corrupted byte in
// 1,000 a 256-byte frame survives with probability 77 %, a 4,096-byte one
// with 1.7 %), and the v1 frame (every v1 link).
const (
	MinMaxFrame     = 64
	DefaultMaxFrame = 256
	V1MaxFrame      = MaxFrame
)

// Fixed v2 payload sizes.
const (
	linkLen      = 4  // version u8, reserved u8, max frame u16
	ackLinkLen   = 5  // cmd, version, reserved, max frame u16
	startV2Len   = 8  // rate u32, port mask, flags, format, reserved
	ackStartV2   = 13 // cmd, rate u32, chan mask u16, format, reserved, ring depth u32
	samples2Hdr  = 14 // first u64, mask u16, count u16, flags u8, format u8
	resendLen    = 12 // first u64, count u32
	expiredLen   = 12 // first u64, count u32
	identExtLen  = 8  // max frame u16, ring bytes u32, formats u8, reserved u8; then R × u32
	calEntryV2   = 16 // v1 entry + 20-bit current LSB u32 pA
	frameOverhd  = HeaderLen + TrailerLen
	samples2Over = frameOverhd + samples2Hdr
)

// Link is LINK's payload: the version the host chose (1 or 2, at most the
// hub's) and the largest frame it wants (MinMaxFrame–MaxFrame bytes,
// framing included). ACK of LINK answers with the version and the agreed
// maximum, min(asked, the hub's).
type Link struct {
	Version  uint8
	MaxFrame uint16
}

func (l *Link) Append(dst []byte) []byte {
	return le.AppendUint16(append(dst, l.Version, 0), l.MaxFrame)
}

func (l *Link) DecodeFromBytes(p []byte) error {
	if len(p) != linkLen {
		return protoErr(TypeLink, "length %d, want %d", len(p), linkLen)
	}
	l.Version, l.MaxFrame = p[0], le.Uint16(p[2:])
	return nil
}

// Resend is RESEND's payload (and EXPIRED's: the same two fields).
type Resend struct {
	First uint64
	Count uint32
}

func (r *Resend) Append(dst []byte) []byte {
	return le.AppendUint32(le.AppendUint64(dst, r.First), r.Count)
}

func (r *Resend) DecodeFromBytes(p []byte) error {
	if len(p) != resendLen {
		return protoErr(TypeResend, "length %d, want %d", len(p), resendLen)
	}
	r.First, r.Count = le.Uint64(p), le.Uint32(p[8:])
	if r.Count == 0 {
		return protoErr(TypeResend, "count 0")
	}
	return nil
}

// Expired is EXPIRED's payload: samples [First, First+Count) of a RESEND
// (the frame carries its sequence number) left the hub's ring before it
// could send them again.
type Expired = Resend

// BlockHeader2 appends a SAMPLES2 header; the caller appends the counts.
func (s *Samples) AppendHeader2(dst []byte) []byte {
	dst = s.AppendHeader(dst)
	return append(dst, s.Flags, s.Format)
}

// DecodeV2 decodes a SAMPLES2 payload in place: Data aliases p, except
// for FormatPacked, whose samples are unpacked into a buffer s owns and
// reuses (valid until s decodes again) in Format20's layout (Width 5;
// Format stays FormatPacked). A format other than these three, a 20-bit
// count outside ±2¹⁹, or a packed bit stream that does not decode
// exactly, is an error wrapping meter.ErrProtocol.
func (s *Samples) DecodeV2(p []byte) error {
	if err := s.header2(p); err != nil {
		return err
	}
	if s.Format == FormatPacked {
		return s.unpack(s.Data)
	}
	if len(s.Data) != s.Count*s.Chans*s.Width {
		return protoErr(TypeSamples2, "%d data bytes for %d samples × %d channels × %d bytes", len(s.Data), s.Count, s.Chans, s.Width)
	}
	if s.Format == Format20 {
		for k := 0; k < len(s.Data); k += 5 {
			if c := cur20(s.Data[k+2:]); c < -(1<<19) || c > 1<<19-1 {
				return protoErr(TypeSamples2, "sample %d: 20-bit current count %d out of range", k/(5*s.Chans), c)
			}
		}
	}
	return nil
}

// header2 decodes and checks a SAMPLES2 payload's header, Data aliasing
// the rest of p.
func (s *Samples) header2(p []byte) error {
	if len(p) < samples2Hdr {
		return protoErr(TypeSamples2, "length %d, shorter than the block header", len(p))
	}
	s.First, s.Mask, s.Count = le.Uint64(p), le.Uint16(p[8:]), int(le.Uint16(p[10:]))
	s.Flags, s.Format = p[12], p[13]
	s.Chans = bits.OnesCount16(s.Mask)
	s.Width = FormatWidth(s.Format)
	s.Data = p[samples2Hdr:]
	if s.Width == 0 {
		return protoErr(TypeSamples2, "sample format %d (1 = 16-bit, 2 = 20-bit, 3 = packed 20-bit)", s.Format)
	}
	if s.Chans == 0 || s.Count == 0 {
		return protoErr(TypeSamples2, "empty block (mask 0x%04X, %d samples)", s.Mask, s.Count)
	}
	return nil
}

// cur20 reads a 24-bit little-endian two's-complement count.
func cur20(q []byte) int32 { return int32(uint32(q[0])|uint32(q[1])<<8|uint32(q[2])<<16) << 8 >> 8 }

// AppendCur20 appends a current count (within ±2¹⁹) as 3 bytes.
func AppendCur20(dst []byte, c int32) []byte { return append(dst, byte(c), byte(c>>8), byte(c>>16)) }

// BlockSamples2 returns the samples per SAMPLES2 frame within maxFrame
// bytes with chans channels of width bytes.
func BlockSamples2(chans, width, maxFrame int) int {
	if chans < 1 || width < 1 {
		return 1
	}
	return max(1, min((maxFrame-samples2Over)/(chans*width), 0xFFFF))
}

// StreamBytesPerSec2 is StreamBytesPerSec for a v2 stream of format f
// with frames of at most maxFrame bytes: each 10 ms block is split into
// frames of BlockSamples2 samples. For FormatPacked it is the hub's
// admission estimate: PackedAssumedBytes per channel sample after each
// frame's per-channel headers; what a stream really costs depends on its
// noise (measured in docs/reliability.md).
func StreamBytesPerSec2(rate, chans int, f uint8, maxFrame int) float64 {
	w, over := FormatWidth(f), samples2Over
	if f == FormatPacked {
		w, over = PackedAssumedBytes, samples2Over+chans*packedChanHdr
	}
	n := max(rate/BlockPeriodDivisor, 1)
	per := BlockSamples2(chans, w, maxFrame-(over-samples2Over))
	frames := (n + per - 1) / per
	perBlock := frames*over + n*chans*w
	return float64(rate) / float64(n) * float64(perBlock)
}

// FitsLink2 is FitsLink for a v2 stream.
func FitsLink2(rate, chans int, f uint8, maxFrame, linkBytesSec int) bool {
	return StreamBytesPerSec2(rate, chans, f, maxFrame) <= LinkHeadroom*float64(linkBytesSec)
}

func v2String(t Type) string {
	switch t {
	case TypeLink:
		return "LINK"
	case TypeResend:
		return "RESEND"
	case TypeSamples2:
		return "SAMPLES2"
	case TypeExpired:
		return "EXPIRED"
	}
	return fmt.Sprintf("type(0x%02X)", byte(t))
}

func v2Reason(r Reason) string {
	switch r {
	case ReasonNotNegotiated:
		return "command of protocol v2 on a link that negotiated v1"
	case ReasonNeverSent:
		return "RESEND of samples never taken"
	case ReasonNoRing:
		return "the hub keeps no ring buffer (depth 0)"
	case ReasonBadFormat:
		return "unsupported sample format"
	}
	return fmt.Sprintf("reason %d", byte(r))
}
