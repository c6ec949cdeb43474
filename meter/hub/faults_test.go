package hub_test

import (
	"bytes"
	"context"
	"errors"
	"io"
	"net"
	"testing"
	"time"

	"github.com/idlewatt/idlewatt/meter"
	"github.com/idlewatt/idlewatt/meter/hub"
	"github.com/idlewatt/idlewatt/meter/hub/hubemu"
)

func fast(t testing.TB, o hubemu.Options, d time.Duration) []byte {
	t.Helper()
	var b bytes.Buffer
	if err := hubemu.WriteFast(&b, o, d); err != nil {
		t.Fatal(err)
	}
	return b.Bytes()
}

// At one corrupted byte in 1,000, no corrupted sample may be accepted and
// at least 99 % of the frames that arrived intact must be recovered.
// Corruption substitutes bytes, so the faulty stream aligns with a clean
// one made with the same seed: a frame is intact iff its bytes match.
func TestCorruptionNeverAcceptedFramesRecovered(t *testing.T) {
	o := hubemu.Options{Ports: 4, Rate: 1000, Seed: 42}
	clean := fast(t, o, 60*time.Second)
	o.Faults.CorruptRate = 1e-3
	dirty := fast(t, o, 60*time.Second)
	if len(clean) != len(dirty) {
		t.Fatalf("substitution changed the length: %d vs %d", len(clean), len(dirty))
	}
	// Frame boundaries of the clean stream.
	intact := map[int64]bool{}
	sc := hub.NewScanner(bytes.NewReader(clean))
	total := 0
	for {
		f, err := sc.Next()
		if err == io.EOF {
			break
		}
		end := f.Offset + int64(hub.HeaderLen+len(f.Payload)+hub.TrailerLen)
		intact[f.Offset] = bytes.Equal(clean[f.Offset:end], dirty[f.Offset:end])
		total++
	}
	good := 0
	for _, ok := range intact {
		if ok {
			good++
		}
	}
	sc = hub.NewScanner(bytes.NewReader(dirty))
	recovered, accepted := 0, 0
	for {
		f, err := sc.Next()
		if err == io.EOF {
			break
		}
		end := f.Offset + int64(hub.HeaderLen+len(f.Payload)+hub.TrailerLen)
		if ok, boundary := intact[f.Offset]; !boundary || !ok || !bytes.Equal(clean[f.Offset:end], dirty[f.Offset:end]) {
			accepted++
			continue
		}
		recovered++
	}
	st := sc.Stats()
	t.Logf("%d frames sent, %d intact, %d recovered, %d corrupted accepted; %d CRC errors, %d resyncs, %d bytes discarded",
		total, good, recovered, accepted, st.CRCErrors, st.Resyncs, st.BytesDiscarded)
	if accepted != 0 {
		t.Errorf("%d corrupted frames accepted, want 0", accepted)
	}
	if recovered*100 < good*99 {
		t.Errorf("recovered %d of %d intact frames, want ≥ 99 %%", recovered, good)
	}
	if good == total || st.CRCErrors == 0 {
		t.Errorf("the fault injector corrupted nothing")
	}

	// Through the whole decoder: every sample accepted has the clean value.
	var cleanSink, dirtySink valueSink
	if _, _, err := hub.DecodeStream(bytes.NewReader(clean), &cleanSink); err != nil {
		t.Fatal(err)
	}
	if _, st, err := hub.DecodeStream(bytes.NewReader(dirty), &dirtySink); err != nil || st.SamplesLost == 0 {
		t.Fatalf("dirty decode: %v, %+v", err, st)
	}
	for c, v := range dirtySink.values {
		if len(v) != 1 || len(cleanSink.values[c]) != 1 {
			t.Errorf("channel %d: values %v in the dirty stream, %v in the clean one", c, v, cleanSink.values[c])
		}
	}
}

// valueSink records the distinct (V, I) readings per channel; the
// emulator's constant drives make exactly one per channel.
type valueSink struct{ values map[int]map[[2]float64]int }

func (s *valueSink) Samples(b *meter.Block) error {
	if s.values == nil {
		s.values = map[int]map[[2]float64]int{}
	}
	if s.values[b.Channel] == nil {
		s.values[b.Channel] = map[[2]float64]int{}
	}
	for k := range b.I {
		s.values[b.Channel][[2]float64{float64(b.V[k]), float64(b.I[k])}]++
	}
	return nil
}
func (s *valueSink) Gap(meter.Gap) error       { return nil }
func (s *valueSink) Mark(meter.MarkEcho) error { return nil }
func (s *valueSink) Event(meter.Event) error   { return nil }

// With drops, truncations and stalls that overflow the buffer, received
// samples plus reported gaps account for every index exactly once.
func TestFaultsAccountForEverySample(t *testing.T) {
	// 20-bit samples: packed ones of these constant drives are so small
	// that a stall would not overflow the buffer.
	o := hubemu.Options{Ports: 2, Rate: 1000, Seed: 3, BufferBytes: 8 << 10, Format: hub.Format20}
	o.Faults = hubemu.Faults{DropRate: 1e-4, TruncateRate: 0.01, StallEvery: 2 * time.Second, StallFor: 500 * time.Millisecond,
		DisconnectEvery: 7 * time.Second, DisconnectFor: 300 * time.Millisecond}
	sink := newRecSink()
	info, st, err := hub.DecodeStream(bytes.NewReader(fast(t, o, 20*time.Second)), sink)
	if err != nil {
		t.Fatal(err)
	}
	overruns := 0
	for _, e := range sink.events {
		if e.Kind == meter.EventOverrun {
			overruns++
		}
	}
	var gapSamples uint64
	for _, g := range sink.gaps {
		gapSamples += g.Count
	}
	t.Logf("stats %+v, %d gaps, %d overruns", st, len(sink.gaps), overruns)
	if sink.overlap != 0 {
		t.Fatalf("%d blocks did not continue where the last block or gap ended", sink.overlap)
	}
	if overruns == 0 || st.SamplesLost != gapSamples || gapSamples == 0 {
		t.Fatalf("overruns %d, lost %d, gap samples %d", overruns, st.SamplesLost, gapSamples)
	}
	for c := range info.Channels {
		if n := sink.next[c]; n+gapAfter(sink.gaps, n) < 19000 {
			t.Errorf("channel %d ends at sample %d", c, n)
		}
		if sink.samples[c]+gapSamples != sink.next[c] {
			t.Errorf("channel %d: %d samples + %d gap ≠ %d", c, sink.samples[c], gapSamples, sink.next[c])
		}
	}
}

func gapAfter(gs []meter.Gap, at uint64) uint64 {
	for _, g := range gs {
		if g.Start == at {
			return g.Count
		}
	}
	return 0
}

// fakeHub answers every command on a pipe with the frames answer returns.
func fakeHub(t *testing.T, answer func(f *hub.Frame) []byte) net.Conn {
	host, dev := net.Pipe()
	go func() {
		sc := hub.NewScanner(dev)
		for {
			f, err := sc.Next()
			if err != nil {
				return
			}
			if _, err := dev.Write(answer(f)); err != nil {
				return
			}
		}
	}()
	t.Cleanup(func() { dev.Close() })
	return host
}

func TestNewErrors(t *testing.T) {
	opts := hub.Options{Timeout: 300 * time.Millisecond}
	garbage := fakeHub(t, func(*hub.Frame) []byte { return bytes.Repeat([]byte("AT+OK\r\n"), 20) })
	if _, err := hub.New(garbage, opts); !errors.Is(err, meter.ErrProtocol) {
		t.Errorf("garbage answer: %v, want ErrProtocol", err)
	}
	v4 := fakeHub(t, func(f *hub.Frame) []byte {
		return hub.AppendFrame(nil, hub.TypeIdentity, f.Seq, []byte{4, 9, 9, 9})
	})
	if _, err := hub.New(v4, opts); !errors.Is(err, hub.ErrVersion) || !errors.Is(err, meter.ErrProtocol) {
		t.Errorf("version 4: %v, want ErrVersion", err)
	}
	silent, dev := net.Pipe()
	go io.Copy(io.Discard, dev)
	defer dev.Close()
	if _, err := hub.New(silent, opts); !errors.Is(err, meter.ErrNoDevice) {
		t.Errorf("silence: %v, want ErrNoDevice", err)
	}
}

func TestRejectionsAndUnsupported(t *testing.T) {
	emu, err := hubemu.New(hubemu.Options{Ports: 2, Link: hub.LinkUART921600})
	if err != nil {
		t.Fatal(err)
	}
	defer emu.Close()
	h, err := hub.Open(emu.Path(), hub.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer h.Close()
	ctx := context.Background()
	err = h.Mark(ctx, 1)
	var rej *hub.RejectError
	if !errors.Is(err, meter.ErrRejected) || !errors.As(err, &rej) || rej.Reason != hub.ReasonNotStreaming {
		t.Errorf("mark while idle: %v, want a NOT_STREAMING rejection", err)
	}
	if err := h.Stream(ctx, meter.StreamConfig{Rate: 10000}, newRecSink()); !errors.Is(err, meter.ErrUnsupported) {
		t.Errorf("2 ports at 10 kHz over a UART: %v, want ErrUnsupported", err)
	}
	if err := h.Stream(ctx, meter.StreamConfig{Rate: 777}, newRecSink()); !errors.Is(err, meter.ErrUnsupported) {
		t.Errorf("777 Hz: %v, want ErrUnsupported", err)
	}
	if err := h.SetDevSlp(ctx, 3, true); !errors.Is(err, meter.ErrUnsupported) {
		t.Errorf("port 3 of 2: %v, want ErrUnsupported", err)
	}
	if err := h.Ping(ctx, []byte("hello")); err != nil {
		t.Errorf("ping: %v", err)
	}
}

// zeroReader returns (0, nil) every other call, as go.bug.st/serial does on
// a read timeout.
type zeroReader struct {
	net.Conn
	n int
}

func (z *zeroReader) Read(p []byte) (int, error) {
	z.n++
	if z.n%2 == 0 {
		return 0, nil
	}
	return z.Conn.Read(p)
}

func TestTimedOutReadsAreTolerated(t *testing.T) {
	id := hub.Identity{Version: 1, Ports: 1, Rails: []hub.RailDesc{{Rail: meter.Rail5V, MaxMilliVolt: 6000, CurrentLSBnA: 50000}},
		Rates: []uint32{1000}, BusLSBuV: 1250}
	conn := fakeHub(t, func(f *hub.Frame) []byte {
		switch f.Type {
		case hub.TypeIdentify:
			return hub.AppendFrame(nil, hub.TypeIdentity, f.Seq, id.Append(nil))
		case hub.TypeReadCal:
			return hub.AppendFrame(nil, hub.TypeNak, f.Seq, []byte{byte(f.Type), byte(hub.ReasonUnknownCommand)})
		}
		return hub.AppendFrame(nil, hub.TypeAck, f.Seq, []byte{byte(f.Type)})
	})
	h, err := hub.New(&zeroReader{Conn: conn}, hub.Options{Timeout: time.Second})
	if err != nil {
		t.Fatal(err)
	}
	defer h.Close()
	if got := h.Info(); got.Ports != 1 || len(got.Channels) != 1 || float64(got.Channels[0].CurrentLSB) != 50000*1e-9 {
		t.Fatalf("info = %+v (no calibration: nominal LSB expected)", got)
	}
}
