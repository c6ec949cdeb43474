package hub

import (
	"fmt"

	"github.com/idlewatt/idlewatt/meter"
	"github.com/idlewatt/idlewatt/units"
)

// READ_ACCURACY and ACCURACY (docs/hub-protocol.md, "READ_ACCURACY →
// ACCURACY"): the hub states the accuracy its calibration holds each
// channel to — bounds on the gain error of the voltage and the current
// readings and on the current's offset, over its operating range and
// calibration interval — so that every interval the host computes holds
// them. A frame type added within version 1: a hub that does not know it
// answers NAK unknown command, and its channels state no accuracy.
const (
	TypeReadAccuracy Type = 0x0B // host→hub: read the stated accuracy
	TypeAccuracy     Type = 0x89 // hub→host: answer to READ_ACCURACY
)

// accEntryLen is one ACCURACY entry's size.
const accEntryLen = 12

// Accuracy bounds (bounds.go): a gain error of at most 5 % (50 000 ppm)
// and an offset of at most 1 A — beyond them a hub states no accuracy
// worth the name, and a corrupt frame with a good CRC is what is likely.
const (
	maxGainPPM  = 50_000
	maxOffsetNA = 1_000_000_000
)

// AccEntry is one channel's stated accuracy.
type AccEntry struct {
	Port uint8
	Rail meter.Rail
	// VoltGainPPM and CurrentGainPPM bound the gain error of the bus
	// voltage and the current readings (parts per million: 1 000 = ±0.1 %);
	// CurrentOffsetNA bounds the current's offset (nA). 0 = not stated.
	VoltGainPPM, CurrentGainPPM uint16
	CurrentOffsetNA             uint32
}

// Accuracy is the ACCURACY payload.
type Accuracy struct {
	Entries []AccEntry
}

// Append encodes the payload: u8 entry count, then per entry port u8,
// rail u8, voltage gain u16 ppm, current gain u16 ppm, reserved u16 (0),
// current offset u32 nA.
func (a *Accuracy) Append(dst []byte) []byte {
	dst = append(dst, byte(len(a.Entries)))
	for _, e := range a.Entries {
		dst = append(dst, e.Port, byte(e.Rail))
		dst = le.AppendUint16(dst, e.VoltGainPPM)
		dst = le.AppendUint16(dst, e.CurrentGainPPM)
		dst = le.AppendUint16(dst, 0)
		dst = le.AppendUint32(dst, e.CurrentOffsetNA)
	}
	return dst
}

// DecodeFromBytes decodes an ACCURACY payload.
func (a *Accuracy) DecodeFromBytes(p []byte) error {
	a.Entries = a.Entries[:0]
	if len(p) < 1 || len(p) != 1+int(p[0])*accEntryLen {
		return protoErr(TypeAccuracy, "length %d does not match its entry count (1 + %d × %d)", len(p), max(len(p), 1)-1, accEntryLen)
	}
	for q := p[1:]; len(q) > 0; q = q[accEntryLen:] {
		a.Entries = append(a.Entries, AccEntry{Port: q[0], Rail: meter.Rail(q[1]),
			VoltGainPPM: le.Uint16(q[2:]), CurrentGainPPM: le.Uint16(q[4:]), CurrentOffsetNA: le.Uint32(q[8:])})
	}
	return nil
}

// Check validates the entries against the hub's identity: a port and a
// rail it has, each channel once, gains of at most 5 %, offsets of at most
// 1 A.
func (a *Accuracy) Check(id *Identity) error {
	seen := map[[2]uint8]bool{}
	for k, e := range a.Entries {
		where := fmt.Sprintf("ACCURACY entry %d (port %d, rail %s)", k, e.Port, e.Rail)
		if e.Port < 1 || e.Port > id.Ports {
			return boundsErr("%s: port %d (the hub has ports 1–%d)", where, e.Port, id.Ports)
		}
		has := false
		for _, r := range id.Rails {
			has = has || r.Rail == e.Rail
		}
		if !has {
			return boundsErr("%s: the hub has no such rail", where)
		}
		key := [2]uint8{e.Port, uint8(e.Rail)}
		if seen[key] {
			return boundsErr("%s: the channel is stated twice", where)
		}
		seen[key] = true
		if e.VoltGainPPM > maxGainPPM || e.CurrentGainPPM > maxGainPPM {
			return boundsErr("%s: gain error %d / %d ppm beyond %d ppm", where, e.VoltGainPPM, e.CurrentGainPPM, maxGainPPM)
		}
		if e.CurrentOffsetNA > maxOffsetNA {
			return boundsErr("%s: current offset %d nA beyond 1 A", where, e.CurrentOffsetNA)
		}
	}
	return nil
}

// apply puts the stated accuracy on the channels it names.
func (a *Accuracy) apply(info *meter.Info) {
	if a == nil {
		return
	}
	for _, e := range a.Entries {
		for i := range info.Channels {
			ch := &info.Channels[i]
			if ch.Port != int(e.Port) || ch.Rail != e.Rail {
				continue
			}
			ch.VoltGainErr = float64(e.VoltGainPPM) * 1e-6
			ch.CurrentGainErr = float64(e.CurrentGainPPM) * 1e-6
			ch.CurrentOffset = units.Amps(float64(e.CurrentOffsetNA) * 1e-9)
		}
	}
}
