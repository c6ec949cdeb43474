package hub

import (
	"bytes"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"testing"

	"github.com/idlewatt/idlewatt/meter"
)

// FuzzDecode feeds arbitrary bytes to the scanner and every payload decoder,
// and to the whole stream decoder behind a valid header. Nothing may panic;
// every frame the scanner returns must carry a valid CRC.
func FuzzDecode(f *testing.F) {
	files, _ := filepath.Glob(filepath.Join(fixtureDir, "*.hex"))
	for _, p := range files {
		text, err := os.ReadFile(p)
		if err != nil {
			f.Fatal(err)
		}
		b, err := parseHex(string(text))
		if err != nil {
			f.Fatal(err)
		}
		f.Add(b)
	}
	f.Add(stream(samplesFrame(0, 2), []byte{0xA5, 0x5A, 0xFF, 0xFF}, samplesFrame(5, 1)))
	f.Add(stream(samples2Frame(0, 3, 0), samples2Frame(7, 2, 0), samples2Frame(3, 4, SamplesResent),
		AppendFrame(nil, TypeExpired, 0, (&Expired{First: 9, Count: 40}).Append(nil)), samples2Frame(60, 2, 0)))
	f.Add(stream(packedFrame(0, 30, 0), packedFrame(50, 20, 0), packedFrame(30, 20, SamplesResent)))
	hdr, hdr2, hdr3 := header(), headerV2(50), headerPacked(50)
	f.Fuzz(func(t *testing.T, data []byte) {
		sc := NewScanner(bytes.NewReader(data))
		for {
			fr, err := sc.Next()
			if err == io.EOF {
				break
			}
			if err != nil {
				t.Fatal(err)
			}
			raw := data[fr.Offset : fr.Offset+int64(HeaderLen+len(fr.Payload)+TrailerLen)]
			if crcUpdate(crcInit, raw[2:]) != 0 {
				t.Fatalf("frame at %d has a bad CRC", fr.Offset)
			}
			decodeAny(fr) //nolint:errcheck // errors are fine; panics are not
		}
		// Behind a valid header nothing ends the stream: whatever the
		// frames, each is used or refused, and the sink sees every index
		// once, in order, on the timeline (v1, v2 with SAMPLES2, RESENT
		// blocks and EXPIRED through the merge, packed format 3).
		// And it decodes as the reference decoder does (decode_ref_test.go).
		for _, h := range [][]byte{hdr, hdr2, hdr3} {
			s := &orderCheck{}
			if _, _, err := DecodeStream(bytes.NewReader(append(bytes.Clone(h), data...)), s); err != nil {
				t.Fatalf("the stream ended: %v", err)
			}
			if s.bad != "" {
				t.Fatal(s.bad)
			}
			if d := matchesReference(append(bytes.Clone(h), data...), 0); d != "" {
				t.Fatal(d)
			}
		}
		NewReplay(bytes.NewReader(data), "fuzz") //nolint:errcheck
	})
}

// orderCheck fails on anything delivered out of index order: every block
// and gap of a channel continues where the last one ended.
type orderCheck struct {
	next map[int]uint64
	bad  string
}

func (s *orderCheck) at(c int, start, n uint64) {
	if s.next == nil {
		s.next = map[int]uint64{}
	}
	if want, ok := s.next[c]; ok && start != want && s.bad == "" {
		s.bad = fmt.Sprintf("channel %d: %d samples at %d, want %d", c, n, start, want)
	}
	if (start+n < start || start+n > maxTimeline) && s.bad == "" {
		s.bad = fmt.Sprintf("channel %d: %d samples at %d run past the timeline's largest index", c, n, start)
	}
	s.next[c] = start + n
}
func (s *orderCheck) Samples(b *meter.Block) error {
	s.at(b.Channel, b.Start, uint64(b.Len()))
	return nil
}
func (s *orderCheck) Gap(g meter.Gap) error {
	for c := range 4 {
		s.at(c, g.Start, g.Count)
	}
	return nil
}
func (s *orderCheck) Mark(meter.MarkEcho) error { return nil }
func (s *orderCheck) Event(meter.Event) error   { return nil }

// FuzzMerge drives the v2 merge with structured streams: each 3 input
// bytes are one frame — a live block, a RESENT block, an EXPIRED answer or
// an OVERRUN — at an index near the live edge. Whatever the order, the
// sink must see every index at most once, in order, and samples + gaps
// must cover exactly what was delivered, as the reference decoder
// delivers it (decode_ref_test.go). An input of odd length is a packed
// (format 3) stream, its blocks packed.
func FuzzMerge(f *testing.F) {
	f.Add([]byte{0, 0, 5, 0, 10, 5, 1, 5, 5, 0, 15, 5})
	f.Add([]byte{0, 0, 9, 0, 40, 9, 2, 9, 31, 1, 20, 9, 3, 60, 4, 0, 70, 2})
	f.Add([]byte{0, 0, 9, 0, 40, 9, 2, 9, 31, 1, 20, 9, 3, 60, 4, 0, 70, 2, 0})
	f.Fuzz(func(t *testing.T, data []byte) {
		block, hdr := samples2Frame, headerV2
		if len(data)%2 == 1 {
			block, hdr = packedFrame, headerPacked
		}
		frames := [][]byte{hdr(uint32(len(data)%64) + 1)}
		for i := 0; i+2 < len(data); i += 3 {
			first, n := uint64(data[i+1]), int(data[i+2]%16)+1
			switch data[i] % 4 {
			case 0:
				frames = append(frames, block(first, n, 0))
			case 1:
				frames = append(frames, block(first, n, SamplesResent))
			case 2:
				frames = append(frames, AppendFrame(nil, TypeExpired, 0, (&Expired{First: first, Count: uint32(n)}).Append(nil)))
			case 3:
				frames = append(frames, AppendFrame(nil, TypeEvent, 0, (&Event{Kind: EvOverrun, Index: first, Value: uint32(n)}).Append(nil)))
			}
		}
		s := &orderCheck{}
		if _, _, err := DecodeStream(bytes.NewReader(stream(frames...)), s); err != nil {
			t.Fatal(err)
		}
		if s.bad != "" {
			t.Fatal(s.bad)
		}
		if d := matchesReference(stream(frames...), 0); d != "" {
			t.Fatal(d)
		}
	})
}
