package hub_test

import (
	"context"
	"testing"
	"time"

	"github.com/idlewatt/idlewatt/internal/testutil"
	"github.com/idlewatt/idlewatt/meter"
	"github.com/idlewatt/idlewatt/meter/hub"
)

// The first frames of a v2 stream arrive with the ACK of START, before the
// host has read it: a hole among them is asked for again like any other,
// not reported as a gap at once. A scripted hub sends the ACK and three
// blocks in one write, the middle one corrupted, and answers the RESEND.
func TestHoleBeforeStartAckIsResent(t *testing.T) {
	id := hub.Identity{Version: 2, Ports: 1, BusLSBuV: 1250, LinkBytesSec: hub.LinkUSBCDC,
		Rails:    []hub.RailDesc{{Rail: meter.Rail5V, MaxMilliVolt: 6000, CurrentLSBnA: 50000}, {Rail: meter.Rail12V, MaxMilliVolt: 15000, CurrentLSBnA: 100000}},
		Rates:    []uint32{1000},
		MaxFrame: 256, RingBytes: 1 << 16, Formats: hub.FormatBit16 | hub.FormatBit20, WideLSBpA: []uint32{8_000_000, 10_000_000},
		Model: "script", Firmware: "2", Serial: "S1"}
	block := func(first uint64, flags uint8, seq byte) []byte {
		s := hub.Samples{First: first, Mask: 0x3, Count: 10, Flags: flags, Format: hub.Format20}
		b := s.AppendHeader2(nil)
		for k := range 10 {
			for range 2 {
				b = hub.AppendCur20(append(b, 0xA0, 0x0F), int32(first)+int32(k))
			}
		}
		return hub.AppendFrame(nil, hub.TypeSamples2, seq, b)
	}
	conn := fakeHub(t, func(f *hub.Frame) []byte {
		switch f.Type {
		case hub.TypeIdentify:
			return hub.AppendFrame(nil, hub.TypeIdentity, f.Seq, id.Append(nil))
		case hub.TypeLink:
			return hub.AppendFrame(nil, hub.TypeAck, f.Seq, (&hub.Ack{Cmd: hub.TypeLink, Version: 2, MaxFrame: 256}).Append(nil))
		case hub.TypeReadCal, hub.TypeMark:
			return hub.AppendFrame(nil, hub.TypeNak, f.Seq, []byte{byte(f.Type), byte(hub.ReasonUnknownCommand)})
		case hub.TypeStart:
			ack := hub.AppendFrame(nil, hub.TypeAck, f.Seq, (&hub.Ack{Cmd: hub.TypeStart, Rate: 1000, ChanMask: 0x3,
				Format: hub.Format20, RingSamples: 1 << 16 / 10}).Append(nil))
			bad := block(10, 0, 1)
			bad[20] ^= 0xFF // the CRC fails: samples 10–19 are a hole
			return append(append(append(ack, block(0, 0, 0)...), bad...), block(20, 0, 2)...)
		case hub.TypeResend:
			var r hub.Resend
			if r.DecodeFromBytes(f.Payload) != nil || r.First != 10 || r.Count != 10 {
				return hub.AppendFrame(nil, hub.TypeNak, f.Seq, []byte{byte(f.Type), byte(hub.ReasonNeverSent)})
			}
			return block(10, hub.SamplesResent, f.Seq)
		}
		return hub.AppendFrame(nil, hub.TypeAck, f.Seq, []byte{byte(f.Type)})
	})
	h, err := hub.New(conn, hub.Options{Timeout: time.Second, Format: hub.Format20})
	if err != nil {
		t.Fatal(err)
	}
	defer h.Close()
	sink := newRecSink()
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- h.Stream(ctx, meter.StreamConfig{Rate: 1000}, sink) }()
	testutil.WaitFor(t, hangGuard, "30 samples", func() bool { _, _, n := sink.snapshot(); return n >= 30 })
	cancel()
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	if ls := h.LinkStats(); len(sink.gaps) != 0 || ls.Recovered != 10 {
		t.Fatalf("gaps %v, link %+v; want samples 10–19 recovered, no gap", sink.gaps, ls)
	}
}
