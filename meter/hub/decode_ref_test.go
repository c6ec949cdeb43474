package hub

import (
	"bytes"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"hash/fnv"
	"math"
	"math/rand"
	"reflect"
	"testing"

	"github.com/idlewatt/idlewatt/meter"
)

// The stream decoder against its reference: the decoder as it was before
// packed blocks were decoded straight into volts and amps (packed_float.go)
// — every SAMPLES2 payload through DecodeV2 with unpackRef, the bit-by-bit
// packed decoder (packed_ref_test.go), into counts, and the counts
// converted by emit. Both decode the same streams (packed ones of every
// shape, damaged ones, the emulator's with faults: decode_ref_emu_test.go)
// and must make the same sink calls with the same values, bit for bit, and
// end with the same error, Info, Stats and LinkStats.

// decodeV2Ref is DecodeV2 with the reference packed decoder.
func decodeV2Ref(s *Samples, p []byte) error {
	if len(p) >= samples2Hdr && p[13] == FormatPacked {
		if err := s.header2(p); err != nil {
			return err
		}
		return s.unpackRef(s.Data)
	}
	return s.DecodeV2(p)
}

// recSink records every call, a block's volts and amps as a hash of their
// bits; the call numbered failAt (1-based) returns errSinkFull.
type recSink struct {
	calls  []string
	failAt int
}

var errSinkFull = errors.New("sink full")

func (r *recSink) add(s string) error {
	r.calls = append(r.calls, s)
	if len(r.calls) == r.failAt {
		return errSinkFull
	}
	return nil
}

func (r *recSink) Samples(b *meter.Block) error {
	h := fnv.New64a()
	var w [8]byte
	for k := range b.V {
		binary.LittleEndian.PutUint64(w[:], math.Float64bits(float64(b.V[k])))
		h.Write(w[:])
	}
	for k := range b.I {
		binary.LittleEndian.PutUint64(w[:], math.Float64bits(float64(b.I[k])))
		h.Write(w[:])
	}
	return r.add(fmt.Sprintf("samples channel %d start %d len %d/%d values %016x", b.Channel, b.Start, len(b.V), len(b.I), h.Sum64()))
}
func (r *recSink) Gap(g meter.Gap) error       { return r.add(fmt.Sprintf("gap %+v", g)) }
func (r *recSink) Mark(m meter.MarkEcho) error { return r.add(fmt.Sprintf("mark %+v", m)) }
func (r *recSink) Event(e meter.Event) error   { return r.add(fmt.Sprintf("event %+v", e)) }
func (r *recSink) String() string              { return fmt.Sprintf("%d calls", len(r.calls)) }
func (r *recSink) call(i int) string {
	if i < len(r.calls) {
		return r.calls[i]
	}
	return "(none)"
}

// refResult is what one decode of a stream gave.
type refResult struct {
	sink  recSink
	info  meter.Info
	stats meter.Stats
	link  LinkStats
	err   string
}

func decodeWith(data []byte, ref bool, failAt int) refResult {
	r := refResult{sink: recSink{failAt: failAt}}
	rp, err := NewReplay(bytes.NewReader(data), "ref")
	if err != nil {
		r.err = "open: " + err.Error()
		return r
	}
	if ref {
		rp.ref = decodeV2Ref
	}
	if err := rp.Stream(context.Background(), meter.StreamConfig{}, &r.sink); err != nil {
		r.err = err.Error()
	}
	r.info, r.stats, r.link = rp.Info(), rp.Stats(), rp.LinkStats()
	return r
}

// matchesReference decodes data with the decoder and with the reference,
// the sink failing at call failAt (0: never), and describes the first
// difference; "" if there is none.
func matchesReference(data []byte, failAt int) string {
	got, want := decodeWith(data, false, failAt), decodeWith(data, true, failAt)
	for i := range max(len(got.sink.calls), len(want.sink.calls)) {
		if got.sink.call(i) != want.sink.call(i) {
			return fmt.Sprintf("sink call %d of %d: decoder %s, reference %s", i, len(want.sink.calls), got.sink.call(i), want.sink.call(i))
		}
	}
	switch {
	case got.err != want.err:
		return fmt.Sprintf("decoder ended with %q, reference with %q", got.err, want.err)
	case !reflect.DeepEqual(got.info, want.info):
		return fmt.Sprintf("Info: decoder %+v, reference %+v", got.info, want.info)
	case got.stats != want.stats:
		return fmt.Sprintf("Stats: decoder %+v, reference %+v", got.stats, want.stats)
	case got.link != want.link:
		return fmt.Sprintf("LinkStats: decoder %+v, reference %+v", got.link, want.link)
	}
	return ""
}

// checkReference fails t unless data decodes as the reference decodes it,
// whole and with the sink failing at a call chosen by rng.
func checkReference(t *testing.T, rng *rand.Rand, name string, data []byte) {
	t.Helper()
	if d := matchesReference(data, 0); d != "" {
		t.Fatalf("%s: %s", name, d)
	}
	n := len(decodeWith(data, true, 0).sink.calls)
	if n > 0 {
		if d := matchesReference(data, 1+rng.Intn(n)); d != "" {
			t.Fatalf("%s, the sink failing: %s", name, d)
		}
	}
}

// refHeader opens a recorded packed stream of a v2 hub with ports ports ×
// 2 rails (each channel its own 20-bit LSB), START acknowledged for mask
// (0: no ACK of START) with a ring of ring samples.
func refHeader(ports int, mask uint16, ring uint32) []byte {
	id := sampleIdentityV2()
	id.Ports, id.Formats = uint8(ports), id.Formats|FormatBitPacked
	cal := Calibration{Wide: true}
	for p := 1; p <= ports; p++ {
		for i, r := range id.Rails {
			cal.Entries = append(cal.Entries, CalEntry{Port: uint8(p), Rail: r.Rail, WideLSBpA: id.WideLSBpA[i] + uint32(p*7919+i*104729)})
		}
	}
	frames := [][]byte{AppendFrame(nil, TypeIdentity, 0, id.Append(nil)),
		AppendFrame(nil, TypeAck, 1, (&Ack{Cmd: TypeLink, Version: 2, MaxFrame: 4096}).Append(nil)),
		AppendFrame(nil, TypeCal, 2, cal.Append(nil))}
	if mask != 0 {
		frames = append(frames, AppendFrame(nil, TypeAck, 3, (&Ack{Cmd: TypeStart, Rate: 10000, ChanMask: mask, Format: FormatPacked, RingSamples: ring}).Append(nil)))
	}
	return stream(frames...)
}

// refSets returns n sample sets of chans channels in format 2's layout,
// segment after segment of a kind rng picks: every count still (a quiet
// meter, or a channel at rest), some channels still and some noisy,
// noise of a few counts to the full range, steps, and the extremes of
// each count's range.
func refSets(rng *rand.Rand, n, chans int) []byte {
	bus, cur := make([]int32, chans), make([]int32, chans)
	for j := range chans {
		bus[j], cur[j] = int32(rng.Intn(65536)), int32(rng.Intn(1<<20))-1<<19
	}
	var b []byte
	for len(b) < n*chans*5 {
		seg := 1 + rng.Intn(300)
		kind := rng.Intn(6)
		sigma := []float64{0, 1, 3, 60, 3000, 400000}[rng.Intn(6)]
		still := rng.Uint32()
		for range seg {
			for j := range chans {
				switch {
				case kind == 0, kind == 1 && still>>j&1 == 1:
				case kind == 2:
					if rng.Intn(40) == 0 {
						bus[j], cur[j] = int32(rng.Intn(65536)), int32(rng.Intn(1<<20))-1<<19
					}
				case kind == 3:
					bus[j] = []int32{0, 0xFFFF}[rng.Intn(2)]
					cur[j] = []int32{-(1 << 19), 1<<19 - 1, 0, -1}[rng.Intn(4)]
				default:
					bus[j] += int32(rng.NormFloat64() * min(sigma, 300))
					cur[j] += int32(rng.NormFloat64() * sigma)
				}
				bus[j] = max(0, min(bus[j], 0xFFFF))
				cur[j] = max(-(1 << 19), min(cur[j], 1<<19-1))
				b = AppendCur20(le.AppendUint16(b, uint16(bus[j])), cur[j])
			}
		}
	}
	return b[:n*chans*5]
}

// refFrames packs the sets of sets (chans channels in mask) from index
// first into SAMPLES2 frames of at most maxPayload bytes.
func refFrames(sets []byte, mask uint16, first uint64, maxPayload int, flags uint8) [][]byte {
	chans := bits16(mask)
	var pk Packer
	var out [][]byte
	for k := 0; k < len(sets)/(chans*5); {
		p, m := pk.Append(nil, Samples{First: first + uint64(k), Mask: mask, Flags: flags}, sets[k*chans*5:], len(sets)/(chans*5)-k, maxPayload)
		out = append(out, AppendFrame(nil, TypeSamples2, byte(len(out)), p))
		k += m
	}
	return out
}

func bits16(m uint16) int {
	n := 0
	for ; m != 0; m &= m - 1 {
		n++
	}
	return n
}

// reCRC gives the frame f a good CRC again after its payload was changed.
func reCRC(f []byte) []byte {
	c := CRC16(f[2 : len(f)-TrailerLen])
	f[len(f)-2], f[len(f)-1] = byte(c>>8), byte(c)
	return f
}

// damage returns frames with rng's damage: frames lost, repeated, sent
// again as RESENT, moved; payload bytes changed under a good CRC (a packed
// stream that does not decode, or decodes to other counts); bytes changed
// under the old CRC; frames cut short; overruns and EXPIRED answers.
func damage(rng *rand.Rand, frames [][]byte) [][]byte {
	var out [][]byte
	for i := 0; i < len(frames); i++ {
		f := bytes.Clone(frames[i])
		switch rng.Intn(24) {
		case 0: // lost
			continue
		case 1: // repeated
			out = append(out, f)
		case 2: // moved after the next
			if i+1 < len(frames) {
				out = append(out, bytes.Clone(frames[i+1]))
				i++
			}
		case 3: // sent again as RESENT, later
			if j := i - rng.Intn(8); j >= 0 {
				g := bytes.Clone(frames[j])
				g[HeaderLen+12] |= SamplesResent
				out = append(out, reCRC(g))
			}
		case 4, 5, 6: // a payload byte changed, the CRC good
			if len(f) > HeaderLen+samples2Hdr+TrailerLen {
				k := HeaderLen + samples2Hdr + rng.Intn(len(f)-HeaderLen-samples2Hdr-TrailerLen)
				f[k] ^= byte(1 << rng.Intn(8))
				f = reCRC(f)
			}
		case 7: // a header byte changed, the CRC good
			f[HeaderLen+rng.Intn(samples2Hdr)] ^= byte(1 << rng.Intn(8))
			f = reCRC(f)
		case 8: // a byte changed, the CRC bad
			f[rng.Intn(len(f))] ^= byte(1 + rng.Intn(255))
		case 9: // cut short
			f = f[:rng.Intn(len(f))]
		case 10: // the packed stream cut or lengthened, the CRC good
			p := f[HeaderLen : len(f)-TrailerLen]
			if rng.Intn(2) == 0 && len(p) > samples2Hdr {
				p = p[:samples2Hdr+rng.Intn(len(p)-samples2Hdr)]
			} else if len(p) < MaxPayload {
				p = append(bytes.Clone(p), byte(rng.Intn(256)))
			}
			f = AppendFrame(nil, TypeSamples2, 0, p)
		case 11: // an overrun naming the next frame's samples
			var s Samples
			if s.header2(f[HeaderLen:len(f)-TrailerLen]) == nil {
				out = append(out, AppendFrame(nil, TypeEvent, 0, (&Event{Kind: EvOverrun, Index: s.First + uint64(s.Count), Value: uint32(1 + rng.Intn(50))}).Append(nil)))
			}
		case 12: // EXPIRED for samples lately asked
			var s Samples
			if s.header2(f[HeaderLen:len(f)-TrailerLen]) == nil && s.First > 0 {
				out = append(out, AppendFrame(nil, TypeExpired, 0, (&Expired{First: s.First - uint64(rng.Intn(int(min(s.First, 200)))), Count: uint32(1 + rng.Intn(100))}).Append(nil)))
			}
		}
		out = append(out, f)
	}
	return out
}

// The decoder delivers what the reference delivers, on packed streams of
// 1 to 16 channels, all streamed or some, quiet to full-range noise,
// frames small and large, with and without a ring, whole and damaged.
func TestDecodeMatchesReference(t *testing.T) {
	rng := rand.New(rand.NewSource(311))
	n := 0
	for _, ports := range []int{1, 2, 3, 8} {
		all := uint16(1<<(2*ports) - 1)
		for _, mask := range []uint16{all, all &^ 2, 0, 1 << (2*ports - 1)} {
			if mask == 0 && ports == 3 {
				continue
			}
			for _, maxPayload := range []int{48, 248, 1016, MaxPayload} {
				for _, ring := range []uint32{0, 500} {
					m := mask
					if m == 0 {
						m = all // no ACK of START: blocks of every channel
					}
					sets := refSets(rng, 400+rng.Intn(2000), bits16(m))
					frames := refFrames(sets, m, uint64(rng.Intn(1000)), maxPayload, 0)
					h := refHeader(ports, mask, ring)
					name := fmt.Sprintf("%d ports, mask %#x, %d-byte payloads, ring %d", ports, mask, maxPayload, ring)
					checkReference(t, rng, name, stream(append([][]byte{h}, frames...)...))
					for r := range 3 {
						checkReference(t, rng, fmt.Sprintf("%s, damaged (%d)", name, r), stream(append([][]byte{h}, damage(rng, frames)...)...))
					}
					n++
				}
			}
		}
	}
	if n != 120 {
		t.Fatalf("%d streams compared, want 120", n)
	}
}

// FuzzDecodeMatchesReference: any bytes behind each header of FuzzDecode
// and a packed one of 3 ports decode as the reference decodes them; and
// so do the same bytes cut into SAMPLES2 payloads (each a 2-byte length,
// then its bytes) framed with a good CRC, which reach the packed decoders
// where a fuzzer's bytes seldom carry a good CRC.
func FuzzDecodeMatchesReference(f *testing.F) {
	// Small seeds: the fuzzer minimises each new input, an execution (a
	// dozen decodes) at a time.
	rng := rand.New(rand.NewSource(5))
	sets := refSets(rng, 60, 6)
	frames := refFrames(sets, 0x3F, 0, 100, 0)
	f.Add(stream(frames...))
	f.Add(stream(damage(rng, refFrames(sets, 0x3F, 0, 60, 0))...))
	f.Add(stream(packedFrame(0, 30, 0), packedFrame(50, 20, 0), packedFrame(30, 20, SamplesResent)))
	var cut []byte
	for _, fr := range frames {
		p := fr[HeaderLen : len(fr)-TrailerLen]
		cut = append(le.AppendUint16(cut, uint16(len(p))), p...)
	}
	f.Add(cut)
	hdrs := [][]byte{header(), headerV2(50), headerPacked(50), headerPacked(0), refHeader(3, 0x3F, 300)}
	f.Fuzz(func(t *testing.T, data []byte) {
		for i, h := range hdrs {
			if d := matchesReference(append(bytes.Clone(h), data...), 0); d != "" {
				t.Fatalf("header %d: %s", i, d)
			}
		}
		framed := [][]byte{refHeader(3, 0x3F, 300)}
		for q := data; len(q) >= 2; {
			n := min(int(le.Uint16(q)), len(q)-2, MaxPayload)
			framed = append(framed, AppendFrame(nil, TypeSamples2, 0, q[2:2+n]))
			q = q[2+n:]
		}
		if d := matchesReference(stream(framed...), 0); d != "" {
			t.Fatalf("framed: %s", d)
		}
	})
}
