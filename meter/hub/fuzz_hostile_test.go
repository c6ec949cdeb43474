package hub

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"strings"
	"testing"
	"time"

	"github.com/idlewatt/idlewatt/capture"
	"github.com/idlewatt/idlewatt/meter"
)

// hostileFrames turns fuzz bytes into a stream behind header: each 4 bytes
// (op, a, b, c) are one frame the decoder's state machine must take —
// good blocks, jumps forward and back, indices anywhere in 2⁶⁴ (the hub
// then counts on from there), short payloads, blocks of other channels,
// EVENTs, MARK_ECHOs and OVERRUNs of any length, kind, port and index,
// unknown types, RESENT and EXPIRED answers. v2 selects SAMPLES2 blocks.
func hostileFrames(data []byte, v2 bool) []byte {
	var out [][]byte
	next := uint64(0)
	block := func(first uint64, n int) []byte {
		if v2 {
			return samples2Frame(first, n, 0)
		}
		return samplesFrame(first, n)
	}
	for i := 0; i+3 < len(data); i += 4 {
		op, a, b, c := data[i], data[i+1], data[i+2], data[i+3]
		n := int(a%16) + 1
		switch op % 12 {
		case 0:
			out = append(out, block(next, n))
			next += uint64(n)
		case 1:
			next += uint64(b % 32)
			out = append(out, block(next, n))
			next += uint64(n)
		case 2:
			out = append(out, block(next-min(next, uint64(b%64)), n))
		case 3: // a count anywhere: near 2⁶⁴, 2⁶³, …
			next = ^uint64(0) - uint64(b)<<(c%64)
			out = append(out, block(next, n))
			next += uint64(n)
		case 4: // one byte short
			f := block(next, n)
			p := f[HeaderLen : len(f)-TrailerLen]
			out = append(out, AppendFrame(nil, Type(f[2]), 0, p[:len(p)-1]))
			next += uint64(n)
		case 5: // port 3's channels, never started
			s := Samples{First: next, Mask: 0x0030, Count: n}
			out = append(out, AppendFrame(nil, TypeSamples, 0, append(s.AppendHeader(nil), make([]byte, n*2*4)...)))
			next += uint64(n)
		case 6:
			e := Event{Kind: a, Port: b % 4, Index: next + uint64(c), Value: uint32(b) << (c % 32)}
			p := e.Append(nil)
			out = append(out, AppendFrame(nil, TypeEvent, 0, p[:len(p)-int(a%2)]))
		case 7:
			e := Event{Kind: EvOverrun, Index: next + uint64(a%8), Value: uint32(b) << (c % 32)}
			out = append(out, AppendFrame(nil, TypeEvent, 0, e.Append(nil)))
		case 8:
			m := MarkEcho{ID: uint32(a), Index: next + uint64(b)<<(c%64)}
			p := m.Append(nil)
			out = append(out, AppendFrame(nil, TypeMarkEcho, 0, p[:len(p)-int(a%3)]))
		case 9: // any type from ACCURACY on: ACCURACY itself (malformed
			// too) only after the first frame, where it is a later answer
			// and passed over; as the opening's answer it is the hub's
			// statement, and a malformed one is refused at the open
			// (TestReplayMalformedAccuracy).
			typ := Type(0x89 + a%0x77)
			if typ == TypeAccuracy && len(out) == 0 {
				typ++
			}
			out = append(out, AppendFrame(nil, typ, b, bytes.Repeat([]byte{c}, int(b%40))))
		case 10:
			out = append(out, samples2Frame(next-min(next, uint64(b%64)), n, SamplesResent))
		case 11:
			x := Expired{First: next - min(next, uint64(b)) + uint64(c)<<(a%64), Count: uint32(n)}
			out = append(out, AppendFrame(nil, TypeExpired, 0, x.Append(nil)))
		}
	}
	return stream(out...)
}

// teeSink passes a stream on to a capture writer and an order check.
type teeSink struct {
	w *capture.Writer
	o orderCheck
}

func (s *teeSink) Samples(b *meter.Block) error { s.o.Samples(b); return s.w.Samples(b) }
func (s *teeSink) Gap(g meter.Gap) error        { s.o.Gap(g); return s.w.Gap(g) }
func (s *teeSink) Mark(m meter.MarkEcho) error  { return s.w.Mark(m) }
func (s *teeSink) Event(e meter.Event) error    { return s.w.Event(e) }

// FuzzHostileStream drives the decoder's state machine with hostile frames
// behind a v1 and a v2 header. Nothing may end the stream; the sink sees
// every index once, in order, on the timeline; and the capture written
// from it reads back whole: no damage, no invalid chunk, nothing rejected,
// every written sample read.
func FuzzHostileStream(f *testing.F) {
	f.Add([]byte{0, 9, 0, 0, 3, 9, 1, 0, 0, 9, 0, 0, 0, 9, 0, 0})                           // a jump to 2⁶⁴ − 2, wrapping
	f.Add([]byte{0, 9, 0, 0, 4, 9, 0, 0, 5, 9, 0, 0, 6, 200, 7, 0, 8, 1, 2, 3, 0, 9, 0, 0}) // malformed of each kind
	f.Add([]byte{0, 9, 0, 0, 7, 3, 255, 31, 0, 9, 0, 0, 2, 9, 40, 0, 9, 1, 2, 3})           // a huge overrun, a step back
	f.Add([]byte{0, 15, 0, 0, 1, 15, 20, 0, 10, 4, 20, 0, 11, 4, 20, 63, 0, 15, 0, 0})      // RESENT and EXPIRED around a hole
	f.Fuzz(func(t *testing.T, data []byte) {
		for _, hd := range []struct {
			h  []byte
			v2 bool
		}{{header(), false}, {headerV2(64), true}} {
			rp, err := NewReplay(bytes.NewReader(stream(hd.h, hostileFrames(data, hd.v2))), "fuzz")
			if err != nil {
				t.Fatal(err)
			}
			info := rp.Info()
			var buf bytes.Buffer
			w, err := capture.NewWriter(&buf, capture.Header{Tool: "fuzz", Meter: info, Channels: info.Channels, RateHz: 1000},
				capture.Options{FlushEvery: time.Hour})
			if err != nil {
				t.Fatal(err)
			}
			s := &teeSink{w: w}
			if err := rp.Stream(t.Context(), meter.StreamConfig{}, s); err != nil {
				t.Fatalf("v2 %v: the stream ended: %v", hd.v2, err)
			}
			if s.o.bad != "" {
				t.Fatalf("v2 %v: %s", hd.v2, s.o.bad)
			}
			if d := matchesReference(stream(hd.h, hostileFrames(data, hd.v2)), 0); d != "" {
				t.Fatalf("v2 %v: %s", hd.v2, d)
			}
			if err := w.Close(); err != nil {
				t.Fatal(err)
			}
			r, err := capture.NewReader(bytes.NewReader(buf.Bytes()))
			if err != nil {
				t.Fatal(err)
			}
			for {
				if _, err := r.Next(); errors.Is(err, io.EOF) {
					break
				} else if err != nil {
					t.Fatalf("v2 %v: reading the capture back: %v", hd.v2, err)
				}
			}
			if acc := r.Account(); !acc.Clean() || len(acc.Notes()) != 0 {
				t.Fatalf("v2 %v: the capture does not read back whole: %v", hd.v2, acc.Notes())
			}
		}
	})
}

// A malformed ACCURACY as a recorded stream's opening answer is the hub's
// statement and refused at the open with its byte offset, as a malformed
// CAL is; the same frame after the first sample block is a later answer to
// the recording host, passed over like every answer, and the stream goes on.
func TestReplayMalformedAccuracy(t *testing.T) {
	h := header()
	bad := AppendFrame(nil, TypeAccuracy, 3, bytes.Repeat([]byte{7}, 8))
	_, err := NewReplay(bytes.NewReader(stream(h, bad, samplesFrame(0, 4))), "rec")
	if err == nil || !strings.Contains(err.Error(), fmt.Sprintf("byte %d", len(h))) || !strings.Contains(err.Error(), "ACCURACY") {
		t.Fatalf("opening ACCURACY malformed: err = %v, want the frame's byte %d named", err, len(h))
	}
	rp, err := NewReplay(bytes.NewReader(stream(h, samplesFrame(0, 4), bad, samplesFrame(4, 4))), "rec")
	if err != nil {
		t.Fatal(err)
	}
	var s gapSink
	if err := rp.Stream(t.Context(), meter.StreamConfig{}, &s); err != nil {
		t.Fatalf("mid-stream ACCURACY ended the stream: %v", err)
	}
	if len(s.starts) != 2 || len(s.gaps) != 0 {
		t.Fatalf("blocks %v, gaps %v; want 2 blocks, no gap", s.starts, s.gaps)
	}
}
