package hub_test

// Hostile frames mid-stream (issue 26): a frame with a good CRC whose
// payload the protocol does not allow is dropped and counted by kind; the
// stream goes on, and the samples it would have carried are an exact gap
// with reason "refused" (or, live on a v2 link, a hole RESEND fills). A
// count that jumps (near 2⁶⁴, wrapping) is a restart, never an index a
// capture cannot hold.

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/idlewatt/idlewatt/meter"
	"github.com/idlewatt/idlewatt/meter/hub"
	"github.com/idlewatt/idlewatt/meter/hub/hubemu"
)

// hostileLinks are the links a hostile frame is tried on: v1 (16-bit
// SAMPLES), v2 20-bit and v2 packed SAMPLES2.
var hostileLinks = []struct {
	name string
	o    hubemu.Options
}{
	{"v1", hubemu.Options{Protocol: 1}},
	{"v2-20bit", hubemu.Options{Protocol: 2, Format: hub.Format20}},
	{"v2-packed", hubemu.Options{Protocol: 2}},
}

// hostileKinds: what each injection must be counted as, and whether it
// stands in for a block (whose samples are then missing on the wire).
var hostileKinds = []struct {
	kind     hubemu.InjectKind
	refused  hub.Refusal
	replaces bool
	v2Only   bool
}{
	{hubemu.InjectEventShort, hub.RefusedEvent, false, false},
	{hubemu.InjectEventKind, hub.RefusedEvent, false, false},
	{hubemu.InjectUnknownType, hub.RefusedUnknown, false, false},
	{hubemu.InjectForeignPorts, hub.RefusedChannels, true, false},
	{hubemu.InjectSamplesOnV2, hub.RefusedLink, true, true},
	{hubemu.InjectSamplesShort, hub.RefusedSamples, true, false}, // RefusedSamples2 on v2 (below)
}

// strictSink records a stream and fails on anything out of order or past
// what a capture can hold.
type strictSink struct {
	next    map[int]uint64
	samples uint64 // channel 0's
	gaps    []meter.Gap
	events  []meter.Event
	marks   []meter.MarkEcho
	bad     string
}

func (s *strictSink) at(c int, start, n uint64) {
	if s.next == nil {
		s.next = map[int]uint64{}
	}
	want, seen := s.next[c]
	switch {
	case s.bad != "":
	case start+n < start || start+n > 1<<62:
		s.bad = fmt.Sprintf("channel %d: %d samples at %d run past any capture's indices", c, n, start)
	case seen && start != want:
		s.bad = fmt.Sprintf("channel %d: %d at %d, want %d", c, n, start, want)
	}
	s.next[c] = start + n
}
func (s *strictSink) Samples(b *meter.Block) error {
	s.at(b.Channel, b.Start, uint64(b.Len()))
	if b.Channel == 0 {
		s.samples += uint64(b.Len())
	}
	return nil
}
func (s *strictSink) Gap(g meter.Gap) error {
	for c := range 4 {
		s.at(c, g.Start, g.Count)
	}
	s.gaps = append(s.gaps, g)
	return nil
}
func (s *strictSink) Mark(m meter.MarkEcho) error { s.marks = append(s.marks, m); return nil }
func (s *strictSink) Event(e meter.Event) error   { s.events = append(s.events, e); return nil }

func (s *strictSink) lostBy() map[string]uint64 {
	m := map[string]uint64{}
	for _, g := range s.gaps {
		m[g.Reason] += g.Count
	}
	return m
}

// replayHostile decodes a WriteFast stream of o (2 ports, 1 kHz, 1 s).
func replayHostile(t *testing.T, o hubemu.Options) (*hub.Replay, *strictSink) {
	t.Helper()
	o.Ports, o.Rate, o.Seed = 2, 1000, 3
	rp, err := hub.NewReplay(bytes.NewReader(fast(t, o, time.Second)), "hostile")
	if err != nil {
		t.Fatal(err)
	}
	s := &strictSink{}
	if err := rp.Stream(context.Background(), meter.StreamConfig{}, s); err != nil {
		t.Fatalf("the stream ended: %v (a refused frame must not end it)", err)
	}
	if s.bad != "" {
		t.Fatal(s.bad)
	}
	return rp, s
}

// TestHostileFrameDroppedAndCounted: each hostile kind, on each link, once
// at sample 400 of a recorded stream: the stream decodes to its end, the
// frame is counted under its kind and nothing else is, and every sample of
// the clean stream is delivered or in one "refused" gap of exactly the
// block it replaced.
func TestHostileFrameDroppedAndCounted(t *testing.T) {
	for _, l := range hostileLinks {
		_, clean := replayHostile(t, l.o)
		if clean.samples < 900 || len(clean.gaps) != 0 {
			t.Fatalf("%s: clean stream: %d samples, gaps %+v", l.name, clean.samples, clean.gaps)
		}
		for _, k := range hostileKinds {
			if k.v2Only && l.o.Protocol < 2 {
				continue
			}
			t.Run(l.name+"/"+k.kind.String(), func(t *testing.T) {
				o := l.o
				o.Faults.Inject = []hubemu.Injection{{At: 400, Kind: k.kind}}
				rp, s := replayHostile(t, o)
				want := k.refused
				if want == hub.RefusedSamples && l.o.Protocol >= 2 {
					want = hub.RefusedSamples2
				}
				ls := rp.LinkStats()
				for r := range hub.NumRefusals {
					n := uint64(0)
					if r == want {
						n = 1
					}
					if ls.Refused[r] != n {
						t.Errorf("refused %s: %d, want %d (all: %v)", r, ls.Refused[r], n, ls.RefusedBy())
					}
				}
				if st := rp.Stats(); st.Refused != 1 || st.Restarts != 0 {
					t.Errorf("stats %+v: want 1 refused, no restart", st)
				}
				lost := s.lostBy()
				if !k.replaces {
					if s.samples != clean.samples || len(s.gaps) != 0 {
						t.Errorf("%d samples (clean %d), gaps %+v: an extra frame must cost nothing", s.samples, clean.samples, s.gaps)
					}
					return
				}
				// The block holding sample 400: 10 ms of samples.
				if len(s.gaps) != 1 || lost["refused"] != 10 || s.gaps[0].Start != 400 || s.samples+10 != clean.samples {
					t.Errorf("gaps %+v, %d samples (clean %d): want one refused gap of the 10 samples at 400", s.gaps, s.samples, clean.samples)
				}
			})
		}
	}
}

// TestCounterNearWrapIsARestart: the hub's count jumps to 300 short of
// 2⁶⁴ and wraps past it. The jump is one restart (an event, counted), the
// wrap none: every sample is delivered, in order, on indices a capture
// holds.
func TestCounterNearWrapIsARestart(t *testing.T) {
	for _, l := range hostileLinks {
		t.Run(l.name, func(t *testing.T) {
			_, clean := replayHostile(t, l.o)
			o := l.o
			o.Faults.Inject = []hubemu.Injection{{At: 400, Kind: hubemu.InjectCounterJump, To: 1<<64 - 300}}
			rp, s := replayHostile(t, o)
			st := rp.Stats()
			if st.Restarts != 1 || st.Refused != 0 || st.SamplesLost != 0 {
				t.Errorf("stats %+v: want exactly one restart, nothing refused or lost", st)
			}
			if s.samples != clean.samples {
				t.Errorf("%d samples delivered, the clean stream has %d", s.samples, clean.samples)
			}
			restarts := 0
			for _, e := range s.events {
				if e.Kind == meter.EventRestart {
					restarts++
					if uint64(e.Value) < 1<<63 || e.Index != 410 {
						t.Errorf("restart event %+v: want the wire index near 2^64 placed at 410", e)
					}
				}
			}
			if restarts != 1 {
				t.Errorf("%d restart events, want 1: %+v", restarts, s.events)
			}
		})
	}
}

// liveHostile streams a live emulated hub with injections until channel 0
// has n samples, sending a MARK every 20 ms.
func liveHostile(t *testing.T, o hubemu.Options, n uint64) (*hub.Hub, *recSink) {
	t.Helper()
	o.Ports, o.Seed = 2, 5
	emu, err := hubemu.New(o)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { emu.Close() })
	h, err := hub.Open(emu.Path(), hub.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { h.Close() })
	s := newRecSink()
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- h.Stream(ctx, meter.StreamConfig{Rate: 1000}, s) }()
	for id := uint32(1); ; id++ {
		select {
		case err := <-done:
			cancel()
			t.Fatalf("the stream ended: %v (a refused frame must not end it)", err)
		case <-time.After(20 * time.Millisecond):
		}
		h.Mark(ctx, id) //nolint:errcheck // NOT_STREAMING before START is fine
		if _, _, got := s.snapshot(); got >= n {
			break
		}
	}
	cancel()
	if err := <-done; err != nil {
		t.Fatalf("Stream: %v", err)
	}
	if s.overlap != 0 {
		t.Fatalf("%d blocks out of order", s.overlap)
	}
	return h, s
}

// TestHostileFramesLive: every hostile kind at once on a live v1 and a live
// v2 hub, the bad MARK_ECHO too: the stream runs on, each is counted under
// its kind; on v1 the two replaced blocks are "refused" gaps, on v2 RESEND
// recovers them from the hub's ring.
func TestHostileFramesLive(t *testing.T) {
	for _, proto := range []int{1, 2} {
		t.Run(fmt.Sprintf("v%d", proto), func(t *testing.T) {
			inj := []hubemu.Injection{{At: 200, Kind: hubemu.InjectEventShort}, {At: 300, Kind: hubemu.InjectEventKind},
				{At: 400, Kind: hubemu.InjectUnknownType}, {At: 500, Kind: hubemu.InjectForeignPorts},
				{At: 600, Kind: hubemu.InjectSamplesShort}, {At: 650, Kind: hubemu.InjectMarkEchoShort}}
			want := map[string]uint64{"event": 2, "unknown_type": 1, "channel_mask": 1, "mark_echo": 1, "samples": 1}
			if proto == 2 {
				inj = append(inj, hubemu.Injection{At: 700, Kind: hubemu.InjectSamplesOnV2})
				want = map[string]uint64{"event": 2, "unknown_type": 1, "channel_mask": 1, "mark_echo": 1, "samples2": 1, "link_version": 1}
			}
			h, s := liveHostile(t, hubemu.Options{Protocol: proto, Faults: hubemu.Faults{Inject: inj}}, 1200)
			got := h.RefusedBy()
			if fmt.Sprint(got) != fmt.Sprint(want) {
				t.Errorf("refused by kind %v, want %v", got, want)
			}
			s.mu.Lock()
			defer s.mu.Unlock()
			lost := map[string]uint64{}
			for _, g := range s.gaps {
				lost[g.Reason] += g.Count
			}
			if proto == 1 {
				// The live emulator's blocks are what each 5 ms tick
				// renders: each refused gap is exactly the block that
				// reached the injection's index.
				if len(s.gaps) != 2 || len(lost) != 1 {
					t.Fatalf("gaps %+v: want the two replaced blocks as refused gaps", s.gaps)
				}
				for i, at := range []uint64{500, 600} {
					if g := s.gaps[i]; g.Reason != "refused" || g.Start > at || g.Start+g.Count <= at {
						t.Errorf("gap %+v: want the block holding sample %d", g, at)
					}
				}
				return
			}
			if len(s.gaps) != 0 || h.Stats().Recovered == 0 {
				t.Errorf("gaps %+v, %d recovered: RESEND must recover the three refused blocks", s.gaps, h.Stats().Recovered)
			}
		})
	}
}

// TestCounterJumpLive: live, the count jumps to 2⁶⁴ − 200 and wraps 0.2 s
// later: one restart, marks still on the timeline with the samples.
func TestCounterJumpLive(t *testing.T) {
	inj := []hubemu.Injection{{At: 300, Kind: hubemu.InjectCounterJump, To: 1<<64 - 200}}
	h, s := liveHostile(t, hubemu.Options{Faults: hubemu.Faults{Inject: inj}}, 1000)
	// A MARK answered in the instant between the jump and the first block
	// of the new count carries an index the host cannot place yet: that
	// echo (only) may be refused.
	if st, by := h.Stats(), h.RefusedBy(); st.Restarts != 1 || st.Refused != by["mark_echo"] || st.Refused > 1 {
		t.Errorf("stats %+v (refused %v): want one restart, nothing refused but perhaps one mark echo", st, by)
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, g := range s.gaps {
		if g.Reason != "restart" || g.Start+g.Count > 1<<62 {
			t.Errorf("gap %+v: only the restart's estimate may be a gap", g)
		}
	}
	end := s.next[0]
	for _, m := range s.marks {
		if m.MeterIndex > end+1000 {
			t.Errorf("mark %+v beyond the samples' end %d", m, end)
		}
	}
	if len(s.marks) < 5 {
		t.Errorf("%d marks", len(s.marks))
	}
}

// TestStartAckOfOtherChannels: a hub that acknowledges START with a
// channel mask other than the one asked would send blocks the host must
// refuse, every one: Stream says so at once, naming both masks.
func TestStartAckOfOtherChannels(t *testing.T) {
	id := hub.Identity{Version: 1, Ports: 2, Caps: hub.CapMarks, BusLSBuV: 1250, LinkBytesSec: hub.LinkUSBCDC,
		Rails: []hub.RailDesc{{Rail: meter.Rail5V, MaxMilliVolt: 6000, CurrentLSBnA: 50000}, {Rail: meter.Rail12V, MaxMilliVolt: 15000, CurrentLSBnA: 100000}},
		Rates: []uint32{1000}, Model: "fake", Firmware: "1", Serial: "F1"}
	conn := fakeHub(t, func(f *hub.Frame) []byte {
		switch f.Type {
		case hub.TypeIdentify:
			return hub.AppendFrame(nil, hub.TypeIdentity, f.Seq, id.Append(nil))
		case hub.TypeStart:
			return hub.AppendFrame(nil, hub.TypeAck, f.Seq, (&hub.Ack{Cmd: hub.TypeStart, Rate: 1000, ChanMask: 0x000C}).Append(nil))
		case hub.TypeReadCal:
			return hub.AppendFrame(nil, hub.TypeNak, f.Seq, (&hub.Nak{Cmd: f.Type, Reason: hub.ReasonUnsupported}).Append(nil))
		}
		return hub.AppendFrame(nil, hub.TypeAck, f.Seq, (&hub.Ack{Cmd: f.Type}).Append(nil))
	})
	h, err := hub.New(conn, hub.Options{Timeout: time.Second})
	if err != nil {
		t.Fatal(err)
	}
	defer h.Close()
	err = h.Stream(context.Background(), meter.StreamConfig{Rate: 1000, Ports: []int{1}}, newRecSink())
	if !errors.Is(err, meter.ErrProtocol) || !strings.Contains(err.Error(), "channel mask 0x000C, asked for 0x0003") {
		t.Fatalf("ACK of START for port 2 when port 1 was asked: %v", err)
	}
}
