package hub

import (
	"bufio"
	"bytes"
	"encoding/hex"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/idlewatt/idlewatt/internal/testutil"
	"github.com/idlewatt/idlewatt/meter"
)

var update = testutil.Update // -update: rewrite fixtures/hub/*.hex from the encoders

const fixtureDir = "../../fixtures/hub"

type fixture struct {
	name, title string
	typ         Type
	frame       []byte
}

func sampleIdentity() Identity {
	return Identity{Version: 1, Ports: 2, Caps: CapDevSlp | CapPortPower | CapMarks, BusLSBuV: 1250, LinkBytesSec: LinkUSBCDC,
		Rails: []RailDesc{{meter.Rail5V, 6000, 50000}, {meter.Rail12V, 15000, 100000}},
		Rates: []uint32{100, 1000, 2000, 5000, 10000}, Model: "HUB-2", Firmware: "1.0.0", Serial: "A1B2C3"}
}

func sampleCal() Calibration {
	return Calibration{Entries: []CalEntry{
		{1, meter.Rail5V, 5120, 20000, 50000, 0}, {1, meter.Rail12V, 5120, 10000, 100000, 0},
		{2, meter.Rail5V, 5107, 20000, 50125, 0}, {2, meter.Rail12V, 5120, 10000, 100000, 0}}}
}

// sampleAccuracy: the 2-port hub states ±0.1 % on every reading, the
// current's offset ±10 µA on 5 V and ±20 µA on 12 V.
func sampleAccuracy() Accuracy {
	return Accuracy{Entries: []AccEntry{
		{1, meter.Rail5V, 1000, 1000, 10_000}, {1, meter.Rail12V, 1000, 1000, 20_000},
		{2, meter.Rail5V, 1000, 1000, 10_000}, {2, meter.Rail12V, 1000, 1000, 20_000}}}
}

// sampleIdentityV2 is sampleIdentity as a v2 hub: 4 KiB frames, a 256 KiB
// ring, 16- and 20-bit samples with 8 µA / 10 µA 20-bit LSBs.
func sampleIdentityV2() Identity {
	id := sampleIdentity()
	id.Version, id.MaxFrame, id.RingBytes, id.Formats = 2, 4096, 256<<10, FormatBit16|FormatBit20
	id.WideLSBpA = []uint32{8_000_000, 10_000_000}
	id.Firmware = "2.0.0"
	return id
}

func sampleCalV2() Calibration {
	c := sampleCal()
	c.Wide = true
	for i, w := range []uint32{8_000_000, 10_000_000, 7_980_000, 10_000_000} {
		c.Entries[i].WideLSBpA = w
	}
	return c
}

// sampleBlock2: samples 1000 and 1001 of ports 1–2 in 20-bit samples;
// port 1 draws 1.2 mW at 5 V (240 µA = 30 counts of 8 µA: a DevSlp
// floor) and nothing at 12 V; port 2 draws 3 A at 5 V (375 940 counts of
// 7.98 µA) and 1 A at 12 V (100 000 counts of 10 µA).
func sampleBlock2(first uint64, flags uint8) []byte {
	s := Samples{First: first, Mask: 0x000F, Count: 2, Flags: flags, Format: Format20}
	b := s.AppendHeader2(nil)
	for range 2 {
		for _, c := range [][2]int32{{4000, 30}, {9600, 0}, {4000, 375940}, {9600, 100000}} {
			b = le.AppendUint16(b, uint16(c[0]))
			b = AppendCur20(b, c[1])
		}
	}
	return b
}

// sampleBlock: samples 1000 and 1001 of ports 1–2; port 1 draws 80 mA at
// 5 V and nothing at 12 V, port 2 draws 400 mA at 5 V and 1 A at 12 V.
func sampleBlock() []byte {
	s := Samples{First: 1000, Mask: 0x000F, Count: 2}
	b := s.AppendHeader(nil)
	for range 2 {
		for _, c := range [][2]int{{4000, 1600}, {9600, 0}, {4000, 7980}, {9600, 10000}} {
			b = le.AppendUint16(b, uint16(c[0]))
			b = le.AppendUint16(b, uint16(int16(c[1])))
		}
	}
	return b
}

// packedSets: samples 1000–1003 of port 1 (channels 0 and 1) in format
// 2's layout: a 1.2 mW DevSlp floor on 5 V (bus 4000, 4001, 3999, 4000;
// current 30, 32, 29, 31 counts of 8 µA) and an idle 12 V rail (9600, 0).
func packedSets() []byte {
	var b []byte
	for _, c := range [][2]int32{{4000, 30}, {4001, 32}, {3999, 29}, {4000, 31}} {
		b = AppendCur20(le.AppendUint16(b, uint16(c[0])), c[1])
		b = AppendCur20(le.AppendUint16(b, 9600), 0)
	}
	return b
}

// sampleBlockPacked is packedSets as one format-3 SAMPLES2 payload.
func sampleBlockPacked() []byte {
	var pk Packer
	b, n := pk.Append(nil, Samples{First: 1000, Mask: 0x0003}, packedSets(), 4, MaxPayload)
	if n != 4 {
		panic(fmt.Sprintf("packed %d of 4 sets", n))
	}
	return b
}

func fixtures() []fixture {
	id, cal, acc := sampleIdentity(), sampleCal(), sampleAccuracy()
	ev := func(k, port uint8, idx uint64, v uint32) []byte {
		e := Event{Kind: k, Port: port, Index: idx, Value: v}
		return e.Append(nil)
	}
	start := Start{Rate: 1000, PortMask: 0x03}
	fs := []fixture{
		{"identify", "IDENTIFY (host→hub), seq 1", TypeIdentify, AppendFrame(nil, TypeIdentify, 1, nil)},
		{"identity", "IDENTITY (hub→host), answering seq 1: 2 ports × (5 V, 12 V), 5 rates, USB CDC", TypeIdentity, AppendFrame(nil, TypeIdentity, 1, id.Append(nil))},
		{"read_cal", "READ_CAL (host→hub), seq 2", TypeReadCal, AppendFrame(nil, TypeReadCal, 2, nil)},
		{"calibration", "CALIBRATION (hub→host), answering seq 2: 4 channels", TypeCal, AppendFrame(nil, TypeCal, 2, cal.Append(nil))},
		{"read_accuracy", "READ_ACCURACY (host→hub), seq 9", TypeReadAccuracy, AppendFrame(nil, TypeReadAccuracy, 9, nil)},
		{"accuracy", "ACCURACY (hub→host), answering seq 9: 4 channels, ±0.1 % gain, ±10 µA offset on 5 V, ±20 µA on 12 V", TypeAccuracy, AppendFrame(nil, TypeAccuracy, 9, (&acc).Append(nil))},
		{"start", "START (host→hub), seq 3: 1000 Hz, ports 1 and 2", TypeStart, AppendFrame(nil, TypeStart, 3, start.Append(nil))},
		{"ack_start", "ACK of START (hub→host), seq 3: 1000 Hz, channel mask 0x000F", TypeAck, AppendFrame(nil, TypeAck, 3, (&Ack{Cmd: TypeStart, Rate: 1000, ChanMask: 0x0F}).Append(nil))},
		{"nak_start", "NAK of START (hub→host), seq 3: reason 4, unsupported rate", TypeNak, AppendFrame(nil, TypeNak, 3, (&Nak{TypeStart, ReasonBadRate}).Append(nil))},
		{"samples", "SAMPLES (hub→host), unsolicited seq 0: samples 1000–1001, 4 channels", TypeSamples, AppendFrame(nil, TypeSamples, 0, sampleBlock())},
		{"set_devslp", "SET_DEVSLP (host→hub), seq 4: port 2 asserted", TypeDevSlp, AppendFrame(nil, TypeDevSlp, 4, []byte{2, 1})},
		{"ack_devslp", "ACK of SET_DEVSLP (hub→host), seq 4", TypeAck, AppendFrame(nil, TypeAck, 4, (&Ack{Cmd: TypeDevSlp}).Append(nil))},
		{"event_devslp", "EVENT (hub→host), unsolicited seq 1: port 2 DEVSLP asserted at sample 1500", TypeEvent, AppendFrame(nil, TypeEvent, 1, ev(EvDevSlp, 2, 1500, 1))},
		{"port_power", "PORT_POWER (host→hub), seq 5: port 1 off", TypePower, AppendFrame(nil, TypePower, 5, []byte{1, 0})},
		{"event_power", "EVENT (hub→host), unsolicited seq 2: port 1 power off at sample 1800", TypeEvent, AppendFrame(nil, TypeEvent, 2, ev(EvPortPower, 1, 1800, 0))},
		{"mark", "MARK (host→hub), seq 6: id 0x12345678", TypeMark, AppendFrame(nil, TypeMark, 6, le.AppendUint32(nil, 0x12345678))},
		{"mark_echo", "MARK_ECHO (hub→host), answering seq 6: id 0x12345678 arrived nearest sample 2047", TypeMarkEcho, AppendFrame(nil, TypeMarkEcho, 6, (&MarkEcho{0x12345678, 2047}).Append(nil))},
		{"ping", "PING (host→hub), seq 7: \"idle\"", TypePing, AppendFrame(nil, TypePing, 7, []byte("idle"))},
		{"ack_ping", "ACK of PING (hub→host), seq 7, echoing \"idle\"", TypeAck, AppendFrame(nil, TypeAck, 7, (&Ack{Cmd: TypePing, Echo: []byte("idle")}).Append(nil))},
		{"event_overcurrent", "EVENT (hub→host), unsolicited seq 3: port 2 over-current, 1.7 A, at sample 2100", TypeEvent, AppendFrame(nil, TypeEvent, 3, ev(EvOverCurrent, 2, 2100, 1700000))},
		{"event_overrun", "EVENT (hub→host), unsolicited seq 4: overrun, samples 2200–2449 lost", TypeEvent, AppendFrame(nil, TypeEvent, 4, ev(EvOverrun, 0, 2200, 250))},
		{"stop", "STOP (host→hub), seq 8", TypeStop, AppendFrame(nil, TypeStop, 8, nil)},
		{"ack_stop", "ACK of STOP (hub→host), seq 8", TypeAck, AppendFrame(nil, TypeAck, 8, (&Ack{Cmd: TypeStop}).Append(nil))},
	}
	return append(append(fs, fixturesV2()...), fixturesV3()...)
}

// fixturesV2 are the frames protocol version 2 adds or changes.
func fixturesV2() []fixture {
	id, cal := sampleIdentityV2(), sampleCalV2()
	start := Start{Rate: 10000, PortMask: 0x03, Format: Format20}
	resend := Resend{First: 1000, Count: 2}
	expired := Expired{First: 400, Count: 600}
	return []fixture{
		{"identity_v2", "IDENTITY v2 (hub→host), answering seq 1: as identity.hex, firmware 2.0.0, then max frame 4096, ring 256 KiB, formats 16- and 20-bit, 20-bit LSBs 8 µA (5 V) and 10 µA (12 V)",
			TypeIdentity, AppendFrame(nil, TypeIdentity, 1, id.Append(nil))},
		{"link", "LINK (host→hub), seq 2: version 2, frames of at most 256 bytes", TypeLink, AppendFrame(nil, TypeLink, 2, (&Link{Version: 2, MaxFrame: 256}).Append(nil))},
		{"ack_link", "ACK of LINK (hub→host), seq 2: version 2, 256 bytes agreed", TypeAck, AppendFrame(nil, TypeAck, 2, (&Ack{Cmd: TypeLink, Version: 2, MaxFrame: 256}).Append(nil))},
		{"calibration_v2", "CALIBRATION v2 (hub→host), answering seq 4: 4 channels of 16 bytes, each with its 20-bit current LSB in pA",
			TypeCal, AppendFrame(nil, TypeCal, 4, cal.Append(nil))},
		{"start_v2", "START v2 (host→hub), seq 5: 10000 Hz, ports 1 and 2, 20-bit samples", TypeStart, AppendFrame(nil, TypeStart, 5, start.Append(nil))},
		{"ack_start_v2", "ACK of START v2 (hub→host), seq 5: 10000 Hz, channel mask 0x000F, 20-bit, ring depth 13 107 samples (256 KiB ÷ 4 channels × 5 bytes)",
			TypeAck, AppendFrame(nil, TypeAck, 5, (&Ack{Cmd: TypeStart, Rate: 10000, ChanMask: 0x0F, Format: Format20, RingSamples: 13107}).Append(nil))},
		{"samples2", "SAMPLES2 (hub→host), unsolicited seq 0: samples 1000–1001, 4 channels, 20-bit, live",
			TypeSamples2, AppendFrame(nil, TypeSamples2, 0, sampleBlock2(1000, 0))},
		{"start_packed", "START v2 (host→hub), seq 5: 10000 Hz, port 1, packed 20-bit samples (format 3)", TypeStart,
			AppendFrame(nil, TypeStart, 5, (&Start{Rate: 10000, PortMask: 0x01, Format: FormatPacked}).Append(nil))},
		{"samples2_packed", "SAMPLES2 (hub→host), unsolicited seq 0: samples 1000–1003 of port 1, packed 20-bit (format 3), live",
			TypeSamples2, AppendFrame(nil, TypeSamples2, 0, sampleBlockPacked())},
		{"resend", "RESEND (host→hub), seq 6: samples 1000–1001 again", TypeResend, AppendFrame(nil, TypeResend, 6, resend.Append(nil))},
		{"samples2_resent", "SAMPLES2 (hub→host), answering RESEND seq 6: samples 1000–1001 from the ring, flag RESENT",
			TypeSamples2, AppendFrame(nil, TypeSamples2, 6, sampleBlock2(1000, SamplesResent))},
		{"expired", "EXPIRED (hub→host), answering RESEND seq 7: samples 400–999 have left the ring", TypeExpired, AppendFrame(nil, TypeExpired, 7, expired.Append(nil))},
		{"nak_resend", "NAK of RESEND (hub→host), seq 8: reason 11, samples never taken", TypeNak, AppendFrame(nil, TypeNak, 8, (&Nak{TypeResend, ReasonNeverSent}).Append(nil))},
	}
}

// FormatHex renders a fixture: a "# fixtures/hub/NAME.hex — title" line,
// then offset + 16 bytes per line.
func formatHex(f fixture) string {
	var b strings.Builder
	fmt.Fprintf(&b, "# fixtures/hub/%s.hex — %s\n", f.name, f.title)
	for off := 0; off < len(f.frame); off += 16 {
		fmt.Fprintf(&b, "%04x ", off)
		for _, c := range f.frame[off:min(off+16, len(f.frame))] {
			fmt.Fprintf(&b, " %02x", c)
		}
		b.WriteByte('\n')
	}
	return b.String()
}

// parseHex reads the hexdump format: '#' lines are comments, each other
// line is a 4-digit offset followed by hex bytes.
func parseHex(text string) ([]byte, error) {
	var out []byte
	sc := bufio.NewScanner(strings.NewReader(text))
	for n := 1; sc.Scan(); n++ {
		line := strings.TrimSpace(sc.Text())
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		fields := strings.Fields(line)
		if len(fields[0]) != 4 {
			return nil, fmt.Errorf("line %d: want a 4-digit offset, got %q", n, fields[0])
		}
		var off int
		if _, err := fmt.Sscanf(fields[0], "%04x", &off); err != nil || off != len(out) {
			return nil, fmt.Errorf("line %d: offset %s, want %04x", n, fields[0], len(out))
		}
		for _, h := range fields[1:] {
			v, err := hex.DecodeString(h)
			if err != nil || len(v) != 1 {
				return nil, fmt.Errorf("line %d: bad byte %q", n, h)
			}
			out = append(out, v[0])
		}
	}
	return out, nil
}

func TestFixtures(t *testing.T) {
	for _, f := range fixtures() {
		path := filepath.Join(fixtureDir, f.name+".hex")
		if *update {
			if err := os.WriteFile(path, []byte(formatHex(f)), 0o644); err != nil {
				t.Fatal(err)
			}
		}
		text, err := os.ReadFile(path)
		if err != nil {
			t.Fatalf("%v (run go test -run TestFixtures -update to create)", err)
		}
		got, err := parseHex(string(text))
		if err != nil {
			t.Fatalf("%s: %v", path, err)
		}
		if !bytes.Equal(got, f.frame) {
			t.Errorf("%s differs from the encoder:\nfile    % x\nencoder % x", path, got, f.frame)
		}
		sc := NewScanner(bytes.NewReader(got))
		fr, err := sc.Next()
		if err != nil || fr.Type != f.typ {
			t.Fatalf("%s: decoded %v, %v; want one %s frame", path, fr, err, f.typ)
		}
		if err := decodeAny(fr); err != nil {
			t.Errorf("%s: %v", path, err)
		}
		if _, err := sc.Next(); err == nil {
			t.Errorf("%s: more than one frame", path)
		}
	}
}

// TestDocHexdumps checks every hexdump in docs/hub-protocol.md against the
// fixture file it names, so the document cannot drift from the code.
func TestDocHexdumps(t *testing.T) {
	doc, err := os.ReadFile("../../docs/hub-protocol.md")
	if err != nil {
		t.Fatal(err)
	}
	seen := map[string]bool{}
	blocks := strings.Split(string(doc), "```")
	for i := 1; i < len(blocks); i += 2 {
		body := strings.TrimPrefix(blocks[i], "text\n")
		first, _, _ := strings.Cut(body, "\n")
		name, ok := strings.CutPrefix(first, "# fixtures/hub/")
		if !ok {
			continue
		}
		name, _, _ = strings.Cut(name, " ")
		want, err := os.ReadFile(filepath.Join(fixtureDir, name))
		if err != nil {
			t.Fatal(err)
		}
		gotB, err1 := parseHex(body)
		wantB, err2 := parseHex(string(want))
		if err1 != nil || err2 != nil || !bytes.Equal(gotB, wantB) {
			t.Errorf("docs/hub-protocol.md hexdump of %s differs from the fixture (%v, %v)", name, err1, err2)
		}
		seen[strings.TrimSuffix(name, ".hex")] = true
	}
	for _, f := range fixtures() {
		if !seen[f.name] {
			t.Errorf("docs/hub-protocol.md has no hexdump of fixtures/hub/%s.hex", f.name)
		}
	}
}

// decodeAny decodes a frame's payload by type.
func decodeAny(f *Frame) error {
	switch f.Type {
	case TypeStart:
		var s Start
		return s.DecodeFromBytes(f.Payload)
	case TypeAck:
		var a Ack
		return a.DecodeFromBytes(f.Payload)
	case TypeNak:
		var n Nak
		return n.DecodeFromBytes(f.Payload)
	case TypeIdentity:
		var id Identity
		if err := id.DecodeFromBytes(f.Payload); err != nil {
			return err
		}
		return id.Check()
	case TypeCal:
		var c Calibration
		if err := c.DecodeFromBytes(f.Payload); err != nil {
			return err
		}
		id := sampleIdentity()
		if c.Wide {
			id = sampleIdentityV2()
		}
		return c.Check(&id)
	case TypeAccuracy:
		var a Accuracy
		if err := a.DecodeFromBytes(f.Payload); err != nil {
			return err
		}
		id := sampleIdentity()
		return a.Check(&id)
	case TypeSamples2:
		var s Samples
		return s.DecodeV2(f.Payload)
	case TypeLink:
		var l Link
		return l.DecodeFromBytes(f.Payload)
	case TypeResend, TypeExpired:
		var r Resend
		return r.DecodeFromBytes(f.Payload)
	case TypeSamples:
		var s Samples
		return s.DecodeFromBytes(f.Payload)
	case TypeMarkEcho:
		var m MarkEcho
		return m.DecodeFromBytes(f.Payload)
	case TypeEvent:
		var e Event
		return e.DecodeFromBytes(f.Payload)
	}
	return nil
}
