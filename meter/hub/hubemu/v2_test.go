package hubemu

import (
	"bytes"
	"math"
	"testing"
	"time"

	"github.com/idlewatt/idlewatt/meter"
	"github.com/idlewatt/idlewatt/meter/hub"
)

// send hands the hub one host frame and returns the frames it answered.
func send(t *testing.T, g *gen, typ hub.Type, seq byte, payload []byte) []hub.Frame {
	t.Helper()
	g.out = g.out[:0]
	sc := hub.NewScanner(bytes.NewReader(hub.AppendFrame(nil, typ, seq, payload)))
	f, err := sc.Next()
	if err != nil {
		t.Fatal(err)
	}
	g.handle(f, time.Second)
	var out []hub.Frame
	sc = hub.NewScanner(bytes.NewReader(bytes.Clone(g.out)))
	for {
		f, err := sc.Next()
		if err != nil {
			return out
		}
		fr := *f
		fr.Payload = bytes.Clone(f.Payload)
		out = append(out, fr)
	}
}

func nakReason(t *testing.T, fs []hub.Frame, cmd hub.Type) hub.Reason {
	t.Helper()
	for _, f := range fs {
		var n hub.Nak
		if f.Type == hub.TypeNak && n.DecodeFromBytes(f.Payload) == nil && n.Cmd == cmd {
			return n.Reason
		}
	}
	return 0
}

func newTestGen(t *testing.T, o Options) *gen {
	t.Helper()
	if err := o.validate(); err != nil {
		t.Fatal(err)
	}
	g, err := newGen(o)
	if err != nil {
		t.Fatal(err)
	}
	return g
}

// Bad input on the hub: each refused with its NAK reason, never a crash.
func TestHubRefusesBadV2Commands(t *testing.T) {
	resend := func(first uint64, n uint32) []byte { return (&hub.Resend{First: first, Count: n}).Append(nil) }
	start := (&hub.Start{Rate: 1000, PortMask: 1, Format: hub.Format20}).Append(nil)
	link := (&hub.Link{Version: 2, MaxFrame: 256}).Append(nil)

	g := newTestGen(t, Options{Ports: 1})
	if r := nakReason(t, send(t, g, hub.TypeResend, 1, resend(0, 1)), hub.TypeResend); r != hub.ReasonNotNegotiated {
		t.Errorf("RESEND on a v1 link: reason %v, want NOT_NEGOTIATED", r)
	}
	for _, bad := range [][]byte{(&hub.Link{Version: 3, MaxFrame: 256}).Append(nil), (&hub.Link{Version: 2, MaxFrame: 10}).Append(nil)} {
		if r := nakReason(t, send(t, g, hub.TypeLink, 2, bad), hub.TypeLink); r != hub.ReasonBadValue {
			t.Errorf("LINK % x: reason %v, want BAD_VALUE", bad, r)
		}
	}
	send(t, g, hub.TypeLink, 3, link)
	if r := nakReason(t, send(t, g, hub.TypeResend, 4, resend(0, 1)), hub.TypeResend); r != hub.ReasonNeverSent {
		t.Errorf("RESEND before any sample: reason %v, want NEVER_SENT", r)
	}
	if r := nakReason(t, send(t, g, hub.TypeStart, 5, (&hub.Start{Rate: 1000, PortMask: 1, Format: 7}).Append(nil)), hub.TypeStart); r != hub.ReasonBadFormat {
		t.Errorf("START format 7: reason %v, want BAD_FORMAT", r)
	}
	if r := nakReason(t, send(t, g, hub.TypeStart, 6, (&hub.Start{Rate: 1000, PortMask: 1}).Append(nil)), hub.TypeStart); r != hub.ReasonBadLength {
		t.Errorf("v1 START on a v2 link: reason %v, want BAD_LENGTH", r)
	}
	// An 8-byte START with format 0: the firmware's core (firmware/) NAKs it
	// BAD_FORMAT as docs/hub-protocol.md says; the emulator streamed 16-bit
	// samples behind a 7-byte v1 ACK (found by the byte-for-byte comparison).
	if r := nakReason(t, send(t, g, hub.TypeStart, 6, append((&hub.Start{Rate: 1000, PortMask: 1}).Append(nil), 0, 0)), hub.TypeStart); r != hub.ReasonBadFormat {
		t.Errorf("v2 START with format 0: reason %v, want BAD_FORMAT", r)
	}
	send(t, g, hub.TypeStart, 7, start)
	g.render(2 * time.Second) // 1000 samples taken
	if r := nakReason(t, send(t, g, hub.TypeResend, 8, resend(990, 20)), hub.TypeResend); r != hub.ReasonNeverSent {
		t.Errorf("RESEND past the last sample: reason %v, want NEVER_SENT", r)
	}
	if r := nakReason(t, send(t, g, hub.TypeResend, 9, resend(1<<64-5, 10)), hub.TypeResend); r != hub.ReasonNeverSent {
		t.Errorf("RESEND wrapping 2^64: reason %v, want NEVER_SENT", r)
	}
	fs := send(t, g, hub.TypeResend, 10, resend(100, 50))
	var got int
	for _, f := range fs {
		var s hub.Samples
		if f.Type != hub.TypeSamples2 || s.DecodeV2(f.Payload) != nil || s.Flags&hub.SamplesResent == 0 || f.Seq != 10 {
			t.Fatalf("answer %s seq %d, want RESENT SAMPLES2 with the RESEND's seq", f.Type, f.Seq)
		}
		got += s.Count
		if len(f.Payload)+hub.HeaderLen+hub.TrailerLen > 256 {
			t.Errorf("frame of %d bytes above the agreed 256", len(f.Payload)+8)
		}
	}
	if got != 50 {
		t.Errorf("resent %d samples, want 50", got)
	}

	g = newTestGen(t, Options{Ports: 1, RingBytes: -1})
	if g.id.RingBytes != 0 {
		t.Errorf("IDENTITY ring %d, want 0", g.id.RingBytes)
	}
	send(t, g, hub.TypeLink, 1, link)
	send(t, g, hub.TypeStart, 2, start)
	g.render(2 * time.Second)
	if r := nakReason(t, send(t, g, hub.TypeResend, 3, resend(0, 1)), hub.TypeResend); r != hub.ReasonNoRing {
		t.Errorf("RESEND to a hub with ring depth 0: reason %v, want NO_RING", r)
	}

	g = newTestGen(t, Options{Ports: 1, Protocol: 1})
	if r := nakReason(t, send(t, g, hub.TypeLink, 1, link), hub.TypeLink); r != hub.ReasonUnknownCommand {
		t.Errorf("LINK to a v1 hub: reason %v, want UNKNOWN_COMMAND", r)
	}
}

// A RESEND older than the ring: EXPIRED for the part that left it, the
// rest re-sent.
func TestResendPartlyExpired(t *testing.T) {
	g := newTestGen(t, Options{Ports: 1, RingBytes: 1000}) // 2 channels × 5 B: 100 samples
	send(t, g, hub.TypeLink, 1, (&hub.Link{Version: 2, MaxFrame: 256}).Append(nil))
	send(t, g, hub.TypeStart, 2, (&hub.Start{Rate: 1000, PortMask: 1, Format: hub.Format20}).Append(nil))
	g.render(1500 * time.Millisecond) // 500 samples
	var exp hub.Expired
	resent := 0
	for _, f := range send(t, g, hub.TypeResend, 3, (&hub.Resend{First: 350, Count: 100}).Append(nil)) {
		var s hub.Samples
		switch {
		case f.Type == hub.TypeExpired && exp.DecodeFromBytes(f.Payload) == nil:
		case f.Type == hub.TypeSamples2 && s.DecodeV2(f.Payload) == nil:
			resent += s.Count
		}
	}
	if exp.First != 350 || exp.Count != 50 || resent != 50 {
		t.Errorf("EXPIRED %+v and %d resent; want [350, 400) expired and 400–449 resent", exp, resent)
	}
}

// meanSink averages channel 0 (port 1, 5 V) power.
type meanSink struct {
	sum float64
	n   int
}

func (s *meanSink) Samples(b *meter.Block) error {
	if b.Channel == 0 {
		for k := range b.I {
			s.sum += float64(b.V[k]) * float64(b.I[k])
			s.n++
		}
	}
	return nil
}
func (s *meanSink) Gap(meter.Gap) error       { return nil }
func (s *meanSink) Mark(meter.MarkEcho) error { return nil }
func (s *meanSink) Event(meter.Event) error   { return nil }

// The DevSlp floor resolution on the emulated hub: a noise-free 1.215 mW
// floor (243 µA at 5 V) read through the whole byte path. With 16-bit
// samples the 5 V step is 50 µA (0.25 mW) and the floor reads 5 counts;
// with 20-bit samples the step is ≤ 0.05 mW and the reading is within
// half of it.
func TestDevSlpFloorResolution(t *testing.T) {
	const floorW = 5 * 243e-6
	for _, c := range []struct {
		proto   int
		maxStep float64 // W per count at 5 V, goal
	}{{1, 0.26e-3}, {2, 0.05e-3}} {
		o := Options{Ports: 1, Rate: 1000, Protocol: c.proto, Drives: []meter.SimDrive{meter.ConstantDrive{V5: 5, I5: 243e-6, V12: 12}}}
		var buf bytes.Buffer
		if err := WriteFast(&buf, o, time.Second); err != nil {
			t.Fatal(err)
		}
		var s meanSink
		info, _, err := hub.DecodeStream(&buf, &s)
		if err != nil {
			t.Fatal(err)
		}
		step := 5 * float64(info.Channels[0].CurrentLSB)
		got := s.sum / float64(s.n)
		t.Logf("protocol %d: 5 V step %.4f mW, floor %.4f mW read as %.4f mW (error %.4f mW), range ±%.2f A",
			c.proto, step*1e3, floorW*1e3, got*1e3, (got-floorW)*1e3, float64(info.MaxCurrent))
		if step > c.maxStep || math.Abs(got-floorW) > step/2+1e-9 {
			t.Errorf("protocol %d: step %.4f mW (goal ≤ %.4f), error %.4f mW", c.proto, step*1e3, c.maxStep*1e3, (got-floorW)*1e3)
		}
		if full := float64(info.Channels[0].CurrentLSB) * float64(hub.FormatFullScale(hub.Format20)); c.proto == 2 && full < 3 {
			t.Errorf("5 V 20-bit range ±%.2f A, want ≥ 3 A", full)
		}
	}
}
