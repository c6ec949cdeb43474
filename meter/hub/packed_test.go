package hub

import (
	"bytes"
	"errors"
	"math/bits"
	"math/rand"
	"testing"

	"github.com/idlewatt/idlewatt/meter"
)

// randomSets makes n sample sets of chans channels in format 2's layout:
// a level with Gaussian noise of sigma counts, a step of a few amps at
// n/2, and the extremes of both ranges now and then.
func randomSets(rng *rand.Rand, n, chans int, sigma float64) []byte {
	var b []byte
	for k := range n {
		for j := range chans {
			bus := int32(4000 + j*5600 + int(rng.NormFloat64()*3))
			cur := int32(30 + j*1000 + int(rng.NormFloat64()*sigma))
			if k > n/2 {
				cur += 300000
			}
			switch rng.Intn(50) {
			case 0:
				bus, cur = 0, -(1 << 19)
			case 1:
				bus, cur = 0xFFFF, 1<<19-1
			}
			cur = max(-(1 << 19), min(cur, 1<<19-1))
			bus = max(0, min(bus, 0xFFFF))
			b = AppendCur20(le.AppendUint16(b, uint16(bus)), cur)
		}
	}
	return b
}

// Whatever the counts, a packed frame decodes to exactly the sets it
// took, holds at least one, and fits the payload asked for whenever one
// set's worst case does.
func TestPackedRoundTrip(t *testing.T) {
	rng := rand.New(rand.NewSource(1))
	var pk Packer
	var s Samples
	for _, chans := range []int{1, 2, 3, 8, 16} {
		for _, sigma := range []float64{0, 2, 60, 400, 200000} {
			for _, maxPayload := range []int{48, 248, 1016, MaxPayload} {
				n := 300
				sets := randomSets(rng, n, chans, sigma)
				mask := uint16(1<<chans - 1)
				for k := 0; k < n; {
					p, m := pk.Append(nil, Samples{First: uint64(k), Mask: mask, Flags: SamplesResent}, sets[k*chans*5:], n-k, maxPayload)
					if m < 1 {
						t.Fatalf("%d channels: packed %d sets", chans, m)
					}
					if worst := samples2Hdr + chans*packedChanHdr + (chans*(2*packedEscape+packedBusRaw+packedCurRaw)+7)/8; worst <= maxPayload && len(p) > maxPayload {
						t.Fatalf("%d channels, σ %g: payload %d bytes > %d", chans, sigma, len(p), maxPayload)
					}
					if err := s.DecodeV2(p); err != nil {
						t.Fatalf("%d channels, σ %g, max %d: %v", chans, sigma, maxPayload, err)
					}
					if s.First != uint64(k) || s.Count != m || s.Flags != SamplesResent || s.Format != FormatPacked || s.Width != 5 {
						t.Fatalf("header %+v, want first %d count %d", s, k, m)
					}
					if want := sets[k*chans*5 : (k+m)*chans*5]; !bytes.Equal(s.Data, want) {
						t.Fatalf("%d channels, σ %g: sets %d… decode differently", chans, sigma, k)
					}
					k += m
				}
			}
		}
	}
}

// A level with little noise packs into far fewer bytes than format 2's
// five per channel sample: that is the format's reason to be.
func TestPackedSize(t *testing.T) {
	rng := rand.New(rand.NewSource(2))
	var pk Packer
	for _, c := range []struct {
		sigma   float64
		maxBits float64 // per channel sample, frame headers included
	}{{0, 6}, {60, 16}, {400, 19}} {
		sets := randomSets(rng, 100, 2, c.sigma)
		// no extremes or steps: a quiet 10 ms block
		for k := range 100 {
			for j := range 2 {
				q := sets[(k*2+j)*5:]
				copy(q, AppendCur20(le.AppendUint16(nil, uint16(4000+j*5600+int(rng.NormFloat64()*2))), int32(30+int(rng.NormFloat64()*c.sigma))))
			}
		}
		total := 0
		for k := 0; k < 100; {
			p, m := pk.Append(nil, Samples{Mask: 3}, sets[k*10:], 100-k, DefaultMaxFrame-frameOverhd)
			total += len(p) + frameOverhd
			k += m
		}
		if got := float64(total*8) / 200; got > c.maxBits {
			t.Errorf("σ %g counts: %.1f bits per channel sample, want ≤ %g", c.sigma, got, c.maxBits)
		} else {
			t.Logf("σ %g counts: %.1f bits per channel sample in 256-byte frames (format 2: 44 with its frames)", c.sigma, got)
		}
	}
}

// Every way a packed block can be malformed is an error, never a panic
// or a wrong sample.
func TestPackedRefused(t *testing.T) {
	good := sampleBlockPacked()
	mut := func(f func(p []byte) []byte) []byte { return f(bytes.Clone(good)) }
	cases := map[string][]byte{
		"current k 21":       mut(func(p []byte) []byte { p[samples2Hdr+5] = 21 << 3; return p }),
		"trailing byte":      append(bytes.Clone(good), 0),
		"padding not zero":   mut(func(p []byte) []byte { p[len(p)-1] |= 1; return p }),
		"stream cut short":   good[:len(good)-2],
		"no channel headers": good[:samples2Hdr+5],
		"count beyond bits":  mut(func(p []byte) []byte { p[10], p[11] = 0xFF, 0xFF; return p }),
		"first current out of range": mut(func(p []byte) []byte {
			copy(p[samples2Hdr+2:], []byte{0xFF, 0xFF, 0x0F})
			return p
		}),
		"bus below 0": func() []byte {
			var pk Packer
			sets := packedSets()
			p, _ := pk.Append(nil, Samples{First: 1, Mask: 3}, sets, 4, MaxPayload)
			p[samples2Hdr], p[samples2Hdr+1] = 0, 0 // bus 0, then a delta of −1 after +1
			return p
		}(),
	}
	for name, p := range cases {
		var s Samples
		err := s.DecodeV2(p)
		if name == "bus below 0" && err == nil {
			// 0, +1, −2 goes below 0 at sample 2
			t.Errorf("%s: accepted", name)
			continue
		}
		if err == nil || !errors.Is(err, meter.ErrProtocol) {
			t.Errorf("%s: %v, want a protocol error", name, err)
		}
	}
}

// Steady-state decoding of packed frames, noisy and still, allocates
// nothing per frame: the volts and amps live in the decoder's reused
// buffers.
func TestDecodePackedAllocatesNothingPerFrame(t *testing.T) {
	rng := rand.New(rand.NewSource(3))
	var frames [][]byte
	var pk Packer
	first := uint64(0)
	for i := range 50 {
		sets := randomSets(rng, 40, 4, 60)
		if i%2 == 1 {
			sets = bytes.Repeat(sets[:4*5], 40) // still: the stream decoder's runs
		}
		p, m := pk.Append(nil, Samples{First: first, Mask: 0x000F}, sets, 40, MaxPayload)
		frames = append(frames, AppendFrame(nil, TypeSamples2, 0, p))
		first += uint64(m)
	}
	sc := NewScanner(&cycle{data: stream(frames...)})
	id, cal := sampleIdentityV2(), sampleCalV2()
	var st meter.Stats
	d := newDecoder(id.InfoFormat(&cal, FormatPacked), meter.StreamConfig{Ports: []int{1, 2}}, &st)
	d.format = FormatPacked
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
	if d.link.Refused != [NumRefusals]uint64{} {
		t.Fatalf("refused frames in a clean packed stream: %+v", *d.link)
	}
}

// headerPacked is headerV2 for a packed stream.
func headerPacked(ring uint32) []byte {
	id, cal := sampleIdentityV2(), sampleCalV2()
	id.Formats |= FormatBitPacked
	return stream(AppendFrame(nil, TypeIdentity, 0, id.Append(nil)),
		AppendFrame(nil, TypeAck, 1, (&Ack{Cmd: TypeLink, Version: 2, MaxFrame: 256}).Append(nil)),
		AppendFrame(nil, TypeCal, 2, cal.Append(nil)),
		AppendFrame(nil, TypeAck, 3, (&Ack{Cmd: TypeStart, Rate: 1000, ChanMask: 0x0F, Format: FormatPacked, RingSamples: ring}).Append(nil)))
}

// packedFrame is samples2Frame packed: count samples from first, each
// current count its index.
func packedFrame(first uint64, count int, flags uint8) []byte {
	var sets []byte
	for k := range count {
		for range 4 {
			sets = AppendCur20(le.AppendUint16(sets, 4000), int32(first)+int32(k))
		}
	}
	var pk Packer
	p, _ := pk.Append(nil, Samples{First: first, Mask: 0x000F, Flags: flags}, sets, count, MaxPayload)
	return AppendFrame(nil, TypeSamples2, 0, p)
}

// A packed v2 session decodes and merges as a 20-bit one: live blocks, a
// hole filled by a RESENT packed block, and a 20-bit block in a packed
// stream refused as a format other than the stream's.
func TestPackedStreamMerges(t *testing.T) {
	data := stream(headerPacked(1000), packedFrame(0, 10, 0), packedFrame(20, 10, 0),
		packedFrame(10, 10, SamplesResent), samples2Frame(30, 5, 0), packedFrame(30, 10, 0))
	sink := &orderSink{t: t, lsb: 8e-6}
	_, st, err := DecodeStream(bytes.NewReader(data), sink)
	if err != nil {
		t.Fatal(err)
	}
	if sink.next != 40 || sink.samples != 40 || len(sink.gaps) != 0 {
		t.Fatalf("delivered up to %d, %d samples, gaps %v; want 0–39, no gap", sink.next, sink.samples, sink.gaps)
	}
	if st.Recovered != 10 || st.Refused != 1 {
		t.Fatalf("recovered %d, refused %d; want 10 and 1", st.Recovered, st.Refused)
	}
}

// The k byte's layout: bus parameter in bits 0–2, current in bits 3–7.
func TestPackedFixtureLayout(t *testing.T) {
	p := sampleBlockPacked()
	if got := p[samples2Hdr+5]; got != 1|1<<3 {
		t.Fatalf("channel 0 k byte 0x%02X, want 0x09 (bus k 1, current k 1)", got)
	}
	if n := bits.OnesCount16(le.Uint16(p[8:])); len(p) != samples2Hdr+n*packedChanHdr+4 {
		t.Fatalf("payload %d bytes, want %d + %d × 6 + 4 (27 bits of deltas)", len(p), samples2Hdr, n)
	}
}

// FuzzPacked decodes arbitrary packed payloads: never a panic, never a
// count out of range; whatever decodes packs again (with the packer's own
// parameters) to the same samples.
func FuzzPacked(f *testing.F) {
	f.Add(sampleBlockPacked())
	f.Add(packedFrame(7, 12, SamplesResent)[HeaderLen : len(packedFrame(7, 12, SamplesResent))-TrailerLen])
	f.Fuzz(func(t *testing.T, p []byte) {
		if len(p) >= samples2Hdr {
			p[13] = FormatPacked
		}
		var s Samples
		if s.DecodeV2(p) != nil {
			return
		}
		for k := 0; k < len(s.Data); k += 5 {
			if c := cur20(s.Data[k+2:]); c < -(1<<19) || c > 1<<19-1 {
				t.Fatalf("current count %d out of range", c)
			}
		}
		want := bytes.Clone(s.Data)
		var pk Packer
		var back Samples
		for k := 0; k < s.Count; {
			q, m := pk.Append(nil, Samples{Mask: s.Mask}, want[k*s.Chans*5:], s.Count-k, MaxPayload)
			if err := back.DecodeV2(q); err != nil {
				t.Fatalf("re-packed block does not decode: %v", err)
			}
			if !bytes.Equal(back.Data, want[k*s.Chans*5:(k+m)*s.Chans*5]) {
				t.Fatalf("re-packed sets %d… differ", k)
			}
			k += m
		}
	})
}

// Packing a RESEND's answer — thousands of sets, frame after frame — costs
// time in proportion to the sets, not their square: each frame looks at
// no more sets than it could hold at the shortest codes.
func TestPackedWorkPerFrameIsBounded(t *testing.T) {
	rng := rand.New(rand.NewSource(4))
	sets := randomSets(rng, 20000, 8, 60)
	var pk Packer
	maxPayload := DefaultMaxFrame - frameOverhd
	_, m := pk.Append(nil, Samples{Mask: 0xFF}, sets, 20000, maxPayload)
	maxSets := 1 + (maxPayload-samples2Hdr-8*packedChanHdr)*8/(packedMinBits*8)
	if looked := len(pk.zb)/8 + 1; looked > maxSets || m > looked {
		t.Errorf("one 256-byte frame of %d sets looked at %d of 20000 sets, want ≤ %d", m, looked, maxSets)
	}
}

// BenchmarkUnpack: one 256-byte packed frame of 8 channels (a quiet
// level, 60 counts of noise) decoded; bytes are channel samples.
func BenchmarkUnpack(b *testing.B) {
	rng := rand.New(rand.NewSource(1))
	sets := randomSets(rng, 100, 8, 60)
	for k := range 100 {
		for j := range 8 {
			q := sets[(k*8+j)*5:]
			copy(q, AppendCur20(le.AppendUint16(nil, uint16(4000+int(rng.NormFloat64()*2))), int32(3000+int(rng.NormFloat64()*60))))
		}
	}
	var pk Packer
	p, m := pk.Append(nil, Samples{Mask: 0xFF}, sets, 100, 248)
	var s Samples
	b.SetBytes(int64(m * 8))
	for b.Loop() {
		if err := s.DecodeV2(p); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(m), "sets/frame")
}

// BenchmarkRiceFloor: riceNext and the refill alone, over 1-bit codes
// (a noiseless stream's, parameter 0): the least a packed channel sample
// (two codes, one depending on the other's length) can cost in this
// decoder, whatever else it does. ns/code is per code.
func BenchmarkRiceFloor(b *testing.B) {
	p := make([]byte, 4096+16)
	for i := range 4096 {
		p[i] = 0xFF
	}
	const codes = 8 * 4096
	var sum uint32
	for b.Loop() {
		var win uint64
		var nb uint
		i := 0
		for range codes {
			if nb < riceMaxBits {
				win |= be.Uint64(p[i:]) >> nb
				i += int((63 - nb) >> 3)
				nb |= 56
			}
			u, w, used := riceNext(win, 0, packedCurRaw)
			win, nb, sum = w, nb-used, sum+u
		}
	}
	if sum != 0 {
		b.Fatal("1-bit codes of parameter 0 decode to 0")
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/codes, "ns/code")
}
