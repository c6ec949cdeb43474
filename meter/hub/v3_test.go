package hub

import (
	"errors"
	"math"
	"strings"
	"testing"

	"github.com/idlewatt/idlewatt/meter"
)

// sampleIdentityV3 is sampleIdentityV2 as a version 3 hub whose ports each
// have a 3.3 V rail after the 5 V and 12 V ones (50 µA, 20-bit 4 µA).
func sampleIdentityV3() Identity {
	id := sampleIdentityV2()
	id.Version, id.Firmware = 3, "3.0.0"
	id.Rails = append(id.Rails, RailDesc{meter.Rail3V3, 4000, 50000})
	id.WideLSBpA = append(id.WideLSBpA, 4_000_000)
	return id
}

// sampleBlock3: samples 1000 and 1001 of ports 1–2, 20-bit, 6 channels;
// port 1 is a SATA drive drawing 80 mA at 5 V (10 000 counts of 8 µA) and
// nothing at 12 V or 3.3 V; port 2 an NVMe drive on an M.2 interposer in
// PS4: 5 mW at 3.3 V (1.515 mA = 379 counts of 4 µA), nothing at 5 V or
// 12 V.
func sampleBlock3() []byte {
	s := Samples{First: 1000, Mask: 0x003F, Count: 2, Format: Format20}
	b := s.AppendHeader2(nil)
	for range 2 {
		for _, c := range [][2]int32{{4000, 10000}, {9600, 0}, {2640, 0}, {4000, 0}, {9600, 0}, {2640, 379}} {
			b = le.AppendUint16(b, uint16(c[0]))
			b = AppendCur20(b, c[1])
		}
	}
	return b
}

// fixturesV3 are the frames protocol version 3 changes: an IDENTITY with
// three rails per port, the LINK that chooses version 3, and a stream of
// six channels.
func fixturesV3() []fixture {
	id := sampleIdentityV3()
	return []fixture{
		{"identity_v3", "IDENTITY v3 (hub→host), answering seq 1: as identity_v2.hex, firmware 3.0.0, 3 rails per port (5 V, 12 V, 3.3 V), the 3.3 V rail's 20-bit LSB 4 µA",
			TypeIdentity, AppendFrame(nil, TypeIdentity, 1, id.Append(nil))},
		{"link_v3", "LINK (host→hub), seq 2: version 3, frames of at most 256 bytes", TypeLink, AppendFrame(nil, TypeLink, 2, (&Link{Version: 3, MaxFrame: 256}).Append(nil))},
		{"ack_start_v3", "ACK of START v2 (hub→host) on a v3 link, seq 5: 10000 Hz, channel mask 0x003F (2 ports × 3 rails), 20-bit, ring depth 8 738 samples (256 KiB ÷ 6 channels × 5 bytes)",
			TypeAck, AppendFrame(nil, TypeAck, 5, (&Ack{Cmd: TypeStart, Rate: 10000, ChanMask: 0x3F, Format: Format20, RingSamples: 8738}).Append(nil))},
		{"samples2_v3", "SAMPLES2 (hub→host), unsolicited seq 0: samples 1000–1001, 6 channels, 20-bit: a SATA drive on port 1, an NVMe drive in PS4 on port 2's 3.3 V rail",
			TypeSamples2, AppendFrame(nil, TypeSamples2, 0, sampleBlock3())},
	}
}

func TestIdentityV3(t *testing.T) {
	id := sampleIdentityV3()
	var got Identity
	if err := got.DecodeFromBytes(id.Append(nil)); err != nil {
		t.Fatal(err)
	}
	if err := got.Check(); err != nil {
		t.Fatal(err)
	}
	info := got.InfoFormat(nil, Format20)
	if len(info.Channels) != 6 || info.Channels[2].Name() != "p1.3v3" || info.Channels[5].Name() != "p2.3v3" ||
		math.Abs(float64(info.Channels[5].CurrentLSB)-4e-6) > 1e-15 {
		t.Fatalf("channels %+v", info.Channels)
	}
	// Three rails need version 3; 16 channels at most.
	v2 := sampleIdentityV3()
	v2.Version = 2
	if err := got.DecodeFromBytes(v2.Append(nil)); err == nil || !errors.Is(err, meter.ErrProtocol) || !strings.Contains(err.Error(), "before version 3") {
		t.Errorf("v2 with 3 rails: %v", err)
	}
	six := sampleIdentityV3()
	six.Ports = 6
	if err := got.DecodeFromBytes(six.Append(nil)); err == nil || !strings.Contains(err.Error(), "18 channels") {
		t.Errorf("6 ports × 3 rails: %v", err)
	}
	four := sampleIdentityV3()
	four.Rails = append(four.Rails, RailDesc{meter.Rail5V, 6000, 50000})
	four.WideLSBpA = append(four.WideLSBpA, 8_000_000)
	if err := got.DecodeFromBytes(four.Append(nil)); err == nil || !strings.Contains(err.Error(), "4 rails per port") {
		t.Errorf("4 rails: %v", err)
	}
}

// TestSamplesV3 decodes the six-channel block: port 2's 3.3 V power is the
// NVMe drive's 5 mW.
func TestSamplesV3(t *testing.T) {
	var s Samples
	if err := s.DecodeV2(sampleBlock3()); err != nil {
		t.Fatal(err)
	}
	if s.Count != 2 || s.Mask != 0x3F {
		t.Fatalf("%+v", s)
	}
	at := (1*s.Chans + 5) * s.Width // sample 1, channel position 5 (p2.3v3)
	w := float64(le.Uint16(s.Data[at:])) * 1250e-6 * float64(cur20(s.Data[at+2:])) * 4e-6
	if math.Abs(w-0.005) > 0.02e-3 {
		t.Errorf("p2.3v3: %.4f mW, want 5 mW", w*1e3)
	}
}
