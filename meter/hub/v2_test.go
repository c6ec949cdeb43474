package hub

import (
	"bytes"
	"errors"
	"fmt"
	"math"
	"os"
	"strings"
	"testing"

	"github.com/idlewatt/idlewatt/meter"
)

// headerV2 is a recorded v2 session's header: IDENTITY v2, ACK of LINK,
// CALIBRATION v2, ACK of START v2 with a ring of ring samples.
func headerV2(ring uint32) []byte {
	id, cal := sampleIdentityV2(), sampleCalV2()
	return stream(AppendFrame(nil, TypeIdentity, 0, id.Append(nil)),
		AppendFrame(nil, TypeAck, 1, (&Ack{Cmd: TypeLink, Version: 2, MaxFrame: 256}).Append(nil)),
		AppendFrame(nil, TypeCal, 2, cal.Append(nil)),
		AppendFrame(nil, TypeAck, 3, (&Ack{Cmd: TypeStart, Rate: 1000, ChanMask: 0x0F, Format: Format20, RingSamples: ring}).Append(nil)))
}

// samples2Frame: count samples from first, 4 channels, 20-bit, each
// current count = its index (so a sample's value says where it belongs).
func samples2Frame(first uint64, count int, flags uint8) []byte {
	s := Samples{First: first, Mask: 0x000F, Count: count, Flags: flags, Format: Format20}
	b := s.AppendHeader2(nil)
	for k := range count {
		for range 4 {
			b = le.AppendUint16(b, 4000)
			b = AppendCur20(b, int32(first)+int32(k))
		}
	}
	return AppendFrame(nil, TypeSamples2, 0, b)
}

// orderSink checks order and values: every block continues where the last
// block or gap ended, and channel 0's current count equals the index.
type orderSink struct {
	t       *testing.T
	lsb     float64
	next    uint64
	samples uint64
	gaps    []meter.Gap
}

func (s *orderSink) Samples(b *meter.Block) error {
	if b.Channel != 0 {
		return nil
	}
	if b.Start != s.next {
		s.t.Errorf("block at %d, want %d", b.Start, s.next)
	}
	for k, i := range b.I {
		if got := math.Round(float64(i) / s.lsb); got != float64(b.Start)+float64(k) {
			s.t.Fatalf("sample %d carries count %g", b.Start+uint64(k), got)
		}
	}
	s.next = b.Start + uint64(b.Len())
	s.samples += uint64(b.Len())
	return nil
}
func (s *orderSink) Gap(g meter.Gap) error {
	if g.Start != s.next {
		s.t.Errorf("gap at %d, want %d", g.Start, s.next)
	}
	s.next = g.Start + g.Count
	s.gaps = append(s.gaps, g)
	return nil
}
func (s *orderSink) Mark(meter.MarkEcho) error { return nil }
func (s *orderSink) Event(meter.Event) error   { return nil }

func TestSamples2Fixture(t *testing.T) {
	var s Samples
	if err := s.DecodeV2(sampleBlock2(1000, 0)); err != nil {
		t.Fatal(err)
	}
	id, cal := sampleIdentityV2(), sampleCalV2()
	info := id.InfoFormat(&cal, Format20)
	lsb := func(c int) float64 { return float64(info.Channels[c].CurrentLSB) }
	// Port 1 5 V: 30 counts × 8 µA = 240 µA = 1.2 mW; port 2 5 V: 3 A.
	if got := float64(cur20(s.Data[2:])) * lsb(0); math.Abs(got-240e-6) > 1e-12 {
		t.Errorf("port 1 5 V: %g A, want 240 µA", got)
	}
	if got := float64(cur20(s.Data[12:])) * lsb(2); math.Abs(got-3) > 1e-5 {
		t.Errorf("port 2 5 V: %g A, want 3 A", got)
	}
	if info.MaxCurrent < 3 || lsb(0)*5 > 50e-6 {
		t.Errorf("20-bit range %v, 5 V resolution %g W: want ≥ 3 A and ≤ 50 µW", info.MaxCurrent, lsb(0)*5)
	}
}

// A recorded v2 session: the hole [10, 20) is filled by the RESENT block
// that came later, [40, 50) never is (a gap once the stream moved a ring's
// depth on), and the replay delivers everything in order.
func TestReplayMergesResentBlocks(t *testing.T) {
	data := stream(headerV2(30), samples2Frame(0, 10, 0), samples2Frame(20, 10, 0), samples2Frame(30, 10, 0),
		samples2Frame(10, 10, SamplesResent), samples2Frame(50, 10, 0), samples2Frame(60, 10, 0), samples2Frame(70, 10, 0),
		samples2Frame(80, 10, 0), samples2Frame(90, 10, 0))
	rp, err := NewReplay(bytes.NewReader(data), "v2")
	if err != nil {
		t.Fatal(err)
	}
	s := &orderSink{t: t, lsb: float64(rp.Info().Channels[0].CurrentLSB)}
	if err := rp.Stream(t.Context(), meter.StreamConfig{}, s); err != nil {
		t.Fatal(err)
	}
	if s.samples != 90 || len(s.gaps) != 1 || s.gaps[0].Start != 40 || s.gaps[0].Count != 10 {
		t.Errorf("%d samples, gaps %+v; want 90 and one gap [40, 50)", s.samples, s.gaps)
	}
	if ls := rp.LinkStats(); ls.Recovered != 10 || ls.GaveUp != 10 || rp.Stats().Recovered != 10 {
		t.Errorf("link stats %+v", ls)
	}
}

// Bad input on the host: a v2 frame on a link that negotiated v1, a
// 20-bit count out of range, a block in another format, an EXPIRED that
// does not decode — each refused and counted, never a sample, never a
// crash; the samples it carried are an exact gap.
func TestHostRefusesBadV2Frames(t *testing.T) {
	outOfRange := func() []byte {
		s := Samples{First: 10, Mask: 0x000F, Count: 1, Format: Format20}
		b := s.AppendHeader2(nil)
		for range 4 {
			b = AppendCur20(le.AppendUint16(b, 4000), 1<<19) // one past the 20-bit range
		}
		return AppendFrame(nil, TypeSamples2, 0, b)
	}
	sixteen := func() []byte {
		s := Samples{First: 10, Mask: 0x000F, Count: 1, Format: Format16}
		return AppendFrame(nil, TypeSamples2, 0, append(s.AppendHeader2(nil), bytes.Repeat([]byte{0xA0, 0x0F, 1, 0}, 4)...))
	}
	for _, c := range []struct {
		name  string
		head  []byte
		bad   []byte
		field func(*LinkStats) uint64
	}{
		{"SAMPLES2 on a v1 link", header(), samples2Frame(10, 1, 0), func(l *LinkStats) uint64 { return l.Refused[RefusedLink] }},
		{"20-bit count 2^19", headerV2(0), outOfRange(), func(l *LinkStats) uint64 { return l.Refused[RefusedSamples2] }},
		{"16-bit block in a 20-bit stream", headerV2(0), sixteen(), func(l *LinkStats) uint64 { return l.Refused[RefusedFormat] }},
		{"EXPIRED of count 0", headerV2(0), AppendFrame(nil, TypeExpired, 0, (&Resend{First: 3}).Append(nil)), func(l *LinkStats) uint64 { return l.Refused[RefusedExpired] }},
	} {
		t.Run(c.name, func(t *testing.T) {
			first, next := samples2Frame(0, 10, 0), samples2Frame(11, 5, 0)
			if c.head[0] == header()[0] && bytes.Equal(c.head, header()) {
				first, next = samplesFrame(0, 10), samplesFrame(11, 5) // a v1 stream
			}
			data := stream(c.head, first, c.bad, next)
			rp, err := NewReplay(bytes.NewReader(data), c.name)
			if err != nil {
				t.Fatal(err)
			}
			var s gapSink
			if err := rp.Stream(t.Context(), meter.StreamConfig{}, &s); err != nil {
				t.Fatalf("%v (a refused frame must not end the stream)", err)
			}
			ls := rp.LinkStats()
			if c.field(&ls) != 1 || rp.Stats().Refused != 1 {
				t.Errorf("link stats %+v, stats %+v: want it refused once", ls, rp.Stats())
			}
			if len(s.gaps) != 1 || s.gaps[0].Start != 10 || s.gaps[0].Count != 1 {
				t.Errorf("gaps %+v, want exactly [10, 11)", s.gaps)
			}
		})
	}
}

func TestV2PayloadErrors(t *testing.T) {
	for _, c := range []struct {
		name string
		err  error
	}{
		{"resend count 0", (&Resend{}).DecodeFromBytes((&Resend{First: 1}).Append(nil))},
		{"link short", (&Link{}).DecodeFromBytes([]byte{2})},
		{"START format 0", (&Start{}).DecodeFromBytes([]byte{1, 0, 0, 0, 1, 0, 0, 0})},
		{"ACK START format 9", (&Ack{}).DecodeFromBytes((&Ack{Cmd: TypeStart, Format: 9}).Append(nil))},
		{"SAMPLES2 format 3", (&Samples{}).DecodeV2(append((&Samples{First: 1, Mask: 1, Count: 1, Format: 3}).AppendHeader2(nil), 0, 0, 0, 0, 0))},
		{"SAMPLES2 short data", (&Samples{}).DecodeV2(append((&Samples{First: 1, Mask: 1, Count: 2, Format: Format20}).AppendHeader2(nil), 0, 0, 0, 0, 0))},
	} {
		if !errors.Is(c.err, meter.ErrProtocol) {
			t.Errorf("%s: %v, want ErrProtocol", c.name, c.err)
		}
	}
	id := sampleIdentityV2()
	id.MaxFrame = 10
	if err := id.Check(); !errors.Is(err, meter.ErrCalibration) {
		t.Errorf("max frame 10: %v", err)
	}
	id = sampleIdentityV2()
	id.WideLSBpA[0] = 50_000_000 // 50 µA × 524287 = 26 A
	if err := id.Check(); !errors.Is(err, meter.ErrCalibration) {
		t.Errorf("20-bit LSB 50 µA: %v", err)
	}
	var got Identity
	full := sampleIdentityV2()
	if err := got.DecodeFromBytes(full.Append(nil)[:80]); !errors.Is(err, meter.ErrProtocol) {
		t.Errorf("truncated v2 extension: %v", err)
	}
}

// Bandwidth: the v2 table's figures (docs/hub-protocol.md).
func TestBandwidthV2(t *testing.T) {
	for _, c := range []struct {
		rate, chans int
		f           uint8
		frame       int
		want        float64
	}{
		{10000, 8, Format20, 256, 444000}, // 100 samples per 10 ms in 20 frames of 5: 20 × 22 + 100 × 40
		{10000, 2, Format16, 256, 88800},
		{1000, 8, Format20, 256, 44400},
		{10000, 8, Format16, 1024, 328800}, // 31 samples per frame: 4 frames
		// Packed, as admitted: 3 B per channel sample after 6 B per
		// channel per frame; (256 − 22 − 12) ÷ 6 = 37 sets per frame, 3
		// frames per 10 ms block: 3 × 34 + 100 × 6.
		{10000, 2, FormatPacked, 256, 70200},
		{2000, 8, FormatPacked, 256, 69000}, // (256 − 70) ÷ 24 = 7 per frame: 3 frames × 70 + 20 × 24
	} {
		if got := StreamBytesPerSec2(c.rate, c.chans, c.f, c.frame); math.Abs(got-c.want) > 0.5 {
			t.Errorf("%d Hz × %d channels, format %d, frames ≤ %d: %.0f B/s, want %.0f", c.rate, c.chans, c.f, c.frame, got, c.want)
		}
	}
}

// bandwidthTableV2 renders docs/hub-protocol.md's v2 bandwidth table.
func bandwidthTableV2() string {
	var b strings.Builder
	b.WriteString("| ports × rails | rate (Hz) | v1 B/s | v2 16-bit, 256 B frames | v2 20-bit, 256 B frames | v2 20-bit, 1024 B frames | v2 packed, 256 B frames (admitted as) | UART 921,600: 20-bit, 256 B | UART 921,600: packed, 256 B | USB CDC: 20-bit, 256 B |\n")
	b.WriteString("|---|---|---|---|---|---|---|---|---|---|\n")
	for _, ports := range []int{1, 2, 4, 8} {
		for _, rate := range []int{1000, 2000, 5000, 10000} {
			ch := 2 * ports
			v20, pk := StreamBytesPerSec2(rate, ch, Format20, 256), StreamBytesPerSec2(rate, ch, FormatPacked, 256)
			fit := func(need float64, link int) string {
				if need <= LinkHeadroom*float64(link) {
					return fmt.Sprintf("yes (%.0f %%)", 100*need/float64(link))
				}
				return fmt.Sprintf("no (%.0f %%)", 100*need/float64(link))
			}
			fmt.Fprintf(&b, "| %d × 2 | %d | %.0f | %.0f | %.0f | %.0f | %.0f | %s | %s | %s |\n", ports, rate, StreamBytesPerSec(rate, ch),
				StreamBytesPerSec2(rate, ch, Format16, 256), v20, StreamBytesPerSec2(rate, ch, Format20, 1024), pk,
				fit(v20, LinkUART921600), fit(pk, LinkUART921600), fit(v20, LinkUSBCDC))
		}
	}
	return b.String()
}

func TestBandwidthTableV2InDoc(t *testing.T) {
	doc, err := os.ReadFile("../../docs/hub-protocol.md")
	if err != nil {
		t.Fatal(err)
	}
	if want := bandwidthTableV2(); !strings.Contains(string(doc), want) {
		t.Errorf("docs/hub-protocol.md lacks the v2 bandwidth table as computed:\n%s", want)
	}
}

// Steady-state v2 decoding with retransmission on and nothing missing
// allocates nothing per frame, as v1's does.
func TestDecodeV2AllocatesNothingPerFrame(t *testing.T) {
	var frames [][]byte
	for i := range 50 {
		frames = append(frames, samples2Frame(uint64(i*40), 40, 0))
	}
	sc := NewScanner(&cycle{data: stream(frames...)})
	id, cal := sampleIdentityV2(), sampleCalV2()
	var st meter.Stats
	d := newDecoder(id.InfoFormat(&cal, Format20), meter.StreamConfig{Ports: []int{1, 2}}, &st)
	d.format, d.retx, d.ring = Format20, true, 1000
	var sink meter.Sink = nopSink{}
	next := func() {
		f, err := sc.Next()
		if err != nil {
			t.Fatal(err)
		}
		if err := d.samples2(f.Payload, 0, sink); err != nil {
			t.Fatal(err)
		}
	}
	for range 100 {
		next()
	}
	if a := testing.AllocsPerRun(1000, next); a != 0 {
		t.Fatalf("%v allocations per frame, want 0", a)
	}
	if l := d.link; l.Refused != [NumRefusals]uint64{} || d.waiting() {
		t.Fatalf("refused or holes in a clean stream: %+v", *d.link)
	}
}
