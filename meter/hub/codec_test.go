package hub

import (
	"bytes"
	"errors"
	"io"
	"math"
	"math/rand"
	"reflect"
	"testing"

	"github.com/idlewatt/idlewatt/meter"
)

func TestCRCCheckValue(t *testing.T) {
	if got := CRC16([]byte("123456789")); got != 0x29B1 {
		t.Fatalf("CRC16(123456789) = %#04x, want 0x29B1 (CRC-16/CCITT-FALSE)", got)
	}
}

// bitwise is the textbook definition the doc gives to firmware authors.
func bitwise(b []byte) uint16 {
	c := uint16(0xFFFF)
	for _, v := range b {
		c ^= uint16(v) << 8
		for range 8 {
			if c&0x8000 != 0 {
				c = c<<1 ^ 0x1021
			} else {
				c <<= 1
			}
		}
	}
	return c
}

func TestCRCSlicingMatchesBitwise(t *testing.T) {
	r := rand.New(rand.NewSource(1))
	for n := range 100 {
		b := make([]byte, n)
		r.Read(b)
		if got, want := CRC16(b), bitwise(b); got != want {
			t.Fatalf("len %d: slicing %#04x, bitwise %#04x", n, got, want)
		}
	}
}

func TestFrameResidueIsZero(t *testing.T) {
	f := AppendFrame(nil, TypePing, 9, []byte("residue"))
	if c := crcUpdate(crcInit, f[2:]); c != 0 {
		t.Fatalf("CRC over type…CRC = %#04x, want 0", c)
	}
}

func TestPayloadRoundTrip(t *testing.T) {
	id := sampleIdentity()
	var id2 Identity
	if err := id2.DecodeFromBytes(id.Append(nil)); err != nil || !reflect.DeepEqual(id, id2) {
		t.Errorf("identity: %v\n got %+v\nwant %+v", err, id2, id)
	}
	cal := sampleCal()
	var cal2 Calibration
	if err := cal2.DecodeFromBytes(cal.Append(nil)); err != nil || !reflect.DeepEqual(cal, cal2) {
		t.Errorf("calibration: %v %+v", err, cal2)
	}
	ev := Event{EvOverrun, 0, 1 << 40, 99}
	var ev2 Event
	if err := ev2.DecodeFromBytes(ev.Append(nil)); err != nil || ev != ev2 {
		t.Errorf("event: %v %+v", err, ev2)
	}
	var s Samples
	if err := s.DecodeFromBytes(sampleBlock()); err != nil || s.First != 1000 || s.Count != 2 || s.Chans != 4 ||
		s.Bus(1, 2) != 4000 || s.Current(1, 3) != 10000 {
		t.Errorf("samples: %v %+v", err, s)
	}
	for _, a := range []Ack{{Cmd: TypeStart, Rate: 5000, ChanMask: 3}, {Cmd: TypeStop}, {Cmd: TypePing, Echo: []byte("x")}} {
		var a2 Ack
		if err := a2.DecodeFromBytes(a.Append(nil)); err != nil || !reflect.DeepEqual(a, a2) {
			t.Errorf("ack: %v %+v want %+v", err, a2, a)
		}
	}
}

func TestIdentityVersionAndInfo(t *testing.T) {
	id := sampleIdentity()
	id.Version = 4
	var got Identity
	err := got.DecodeFromBytes(id.Append(nil))
	if !errors.Is(err, ErrVersion) || !errors.Is(err, meter.ErrProtocol) {
		t.Fatalf("version 4: %v, want ErrVersion and ErrProtocol", err)
	}
	id.Version = 1
	cal := sampleCal()
	info := id.Info(&cal)
	if len(info.Channels) != 4 || info.Channels[2].Name() != "p2.5v" || math.Abs(float64(info.Channels[2].CurrentLSB)-50125e-9) > 1e-15 {
		t.Fatalf("info channels = %+v", info.Channels)
	}
}

// stream concatenates frames.
func stream(frames ...[]byte) []byte { return bytes.Join(frames, nil) }

func samplesFrame(first uint64, count int) []byte {
	s := Samples{First: first, Mask: 0x000F, Count: count}
	b := s.AppendHeader(nil)
	for range count * 4 {
		b = append(b, 0xA0, 0x0F, 0x40, 0x06) // 5 V, 1600 counts
	}
	return AppendFrame(nil, TypeSamples, 0, b)
}

func scanAll(t *testing.T, data []byte) ([]Frame, meter.Stats) {
	t.Helper()
	sc := NewScanner(bytes.NewReader(data))
	var out []Frame
	for {
		f, err := sc.Next()
		if err == io.EOF {
			return out, sc.Stats()
		}
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, *f)
	}
}

func TestScannerResyncsAfterGarbage(t *testing.T) {
	a, b := samplesFrame(0, 3), samplesFrame(3, 3)
	garbage := []byte{0x00, 0xA5, 0x11, 0xA5, 0x5A, 0xFF, 0xFF, 0x42}
	frames, st := scanAll(t, stream(garbage, a, garbage, b, garbage[:3]))
	if len(frames) != 2 || frames[0].Offset != int64(len(garbage)) {
		t.Fatalf("got %d frames (%+v), want 2", len(frames), frames)
	}
	if st.BytesDiscarded != uint64(2*len(garbage)+3) || st.Resyncs != 3 || st.Frames != 2 {
		t.Fatalf("stats = %+v", st)
	}
}

func TestScannerDropsBadCRC(t *testing.T) {
	a, b, c := samplesFrame(0, 3), samplesFrame(3, 3), samplesFrame(6, 3)
	b = bytes.Clone(b)
	b[20] ^= 0x10
	frames, st := scanAll(t, stream(a, b, c))
	if len(frames) != 2 || st.CRCErrors != 1 || st.BytesDiscarded != uint64(len(b)) {
		t.Fatalf("frames %d, stats %+v; want 2 frames, 1 CRC error, %d bytes discarded", len(frames), st, len(b))
	}
}

func TestScannerRecoversFromTruncatedFrame(t *testing.T) {
	a, b, c := samplesFrame(0, 3), samplesFrame(3, 3), samplesFrame(6, 3)
	frames, st := scanAll(t, stream(a, b[:17], c))
	if len(frames) != 2 || frames[1].Offset != int64(len(a)+17) {
		t.Fatalf("frames = %+v, stats %+v", frames, st)
	}
}

// gapSink collects gaps and block starts.
type gapSink struct {
	gaps   []meter.Gap
	starts []uint64
	events int
}

func (s *gapSink) Samples(b *meter.Block) error {
	if b.Channel == 0 {
		s.starts = append(s.starts, b.Start)
	}
	return nil
}
func (s *gapSink) Gap(g meter.Gap) error     { s.gaps = append(s.gaps, g); return nil }
func (s *gapSink) Mark(meter.MarkEcho) error { return nil }
func (s *gapSink) Event(e meter.Event) error { s.events++; return nil }

func header() []byte {
	id, cal := sampleIdentity(), sampleCal()
	return stream(AppendFrame(nil, TypeIdentity, 0, id.Append(nil)), AppendFrame(nil, TypeCal, 1, cal.Append(nil)),
		AppendFrame(nil, TypeAck, 2, (&Ack{Cmd: TypeStart, Rate: 1000, ChanMask: 0x0F}).Append(nil)))
}

func TestGapIsExactWhenAFrameIsLost(t *testing.T) {
	// Blocks 0–9, 10–19 (lost to a bad CRC), 20–29, then an overrun of
	// 30–54 and a block 55–64: gaps must be exactly [10,20) and [30,55).
	lost := bytes.Clone(samplesFrame(10, 10))
	lost[30] ^= 1
	ov := Event{Kind: EvOverrun, Index: 30, Value: 25}
	data := stream(header(), samplesFrame(0, 10), lost, samplesFrame(20, 10),
		AppendFrame(nil, TypeEvent, 0, ov.Append(nil)), samplesFrame(55, 10), samplesFrame(55, 10))
	var s gapSink
	info, st, err := DecodeStream(bytes.NewReader(data), &s)
	if err != nil {
		t.Fatal(err)
	}
	want := []meter.Gap{{Channel: -1, Start: 10, Count: 10, Reason: "crc"}, {Channel: -1, Start: 30, Count: 25, Reason: "overrun"}}
	if !reflect.DeepEqual(s.gaps, want) {
		t.Fatalf("gaps = %+v\nwant %+v", s.gaps, want)
	}
	if !reflect.DeepEqual(s.starts, []uint64{0, 20, 55}) {
		t.Fatalf("block starts = %v (the duplicate 55 must be dropped)", s.starts)
	}
	// Events: the overrun, and the duplicate 55–64 (counted, not lost).
	if st.SamplesLost != 35 || st.CRCErrors != 1 || info.Ports != 2 || s.events != 2 || st.Duplicates != 10 || st.Restarts != 0 {
		t.Fatalf("stats %+v, info %+v, events %d", st, info, s.events)
	}
}

type nopSink struct{}

func (nopSink) Samples(*meter.Block) error { return nil }
func (nopSink) Gap(meter.Gap) error        { return nil }
func (nopSink) Mark(meter.MarkEcho) error  { return nil }
func (nopSink) Event(meter.Event) error    { return nil }

// cycle replays data forever, so the scanner reaches steady state.
type cycle struct {
	data []byte
	off  int
}

func (c *cycle) Read(p []byte) (int, error) {
	n := copy(p, c.data[c.off:])
	c.off = (c.off + n) % len(c.data)
	return n, nil
}

func TestDecodeAllocatesNothingPerFrame(t *testing.T) {
	var frames [][]byte
	for i := range 50 {
		frames = append(frames, samplesFrame(uint64(i*100), 100))
	}
	sc := NewScanner(&cycle{data: stream(frames...)})
	id, cal := sampleIdentity(), sampleCal()
	var st meter.Stats
	d := newDecoder(id.Info(&cal), meter.StreamConfig{Ports: []int{1, 2}}, &st)
	var sink meter.Sink = nopSink{}
	next := func() {
		f, err := sc.Next()
		if err != nil {
			t.Fatal(err)
		}
		if err := d.samples(f.Payload, 0, sink); err != nil {
			t.Fatal(err)
		}
	}
	for range 100 {
		next() // warm up: buffers sized
	}
	if a := testing.AllocsPerRun(1000, next); a != 0 {
		t.Fatalf("%v allocations per frame, want 0", a)
	}
}

// A corrupted length on an idle link must not hold later frames hostage.
func TestAbandonReleasesFramesBehindABadLength(t *testing.T) {
	bad := bytes.Clone(AppendFrame(nil, TypeAck, 1, []byte{byte(TypeStop)}))
	bad[5] = 0x0F // length 3841: far more bytes than will come
	good := AppendFrame(nil, TypeAck, 2, []byte{byte(TypeStop)})
	sc := NewScanner(bytes.NewReader(stream(bad, good)))
	if f, err := sc.Next(); err != nil || f.Seq != 2 {
		t.Fatalf("at the end of the stream: %+v, %v; want the seq 2 ACK", f, err)
	}
	sc = NewScanner(&idleAfter{data: stream(bad, good)})
	if _, err := sc.Next(); err != ErrIdle {
		t.Fatalf("want ErrIdle while the bad frame waits, got %v", err)
	}
	sc.Abandon()
	f, err := sc.Next()
	if err != nil || f.Seq != 2 {
		t.Fatalf("after Abandon: %+v, %v; want the seq 2 ACK", f, err)
	}
}

// idleAfter returns data once, then (0, nil) forever.
type idleAfter struct {
	data []byte
	done bool
}

func (r *idleAfter) Read(p []byte) (int, error) {
	if r.done {
		return 0, nil
	}
	r.done = true
	return copy(p, r.data), nil
}
