package capture

import (
	"bytes"
	"math"
	"math/rand/v2"
	"testing"
	"time"

	"github.com/idlewatt/idlewatt/meter"
	"github.com/idlewatt/idlewatt/units"
)

func signals(rng *rand.Rand) map[string][]int32 {
	n := 3000
	out := map[string][]int32{}
	mk := func(name string, f func(k int) int32) {
		xs := make([]int32, n)
		for k := range xs {
			xs[k] = f(k)
		}
		out[name] = xs
	}
	mk("constant", func(int) int32 { return 4000 })
	mk("zero", func(int) int32 { return 0 })
	for _, sig := range []float64{0.3, 3, 10, 60, 1000} {
		mk("noise", func(int) int32 { return int32(8000 + math.Round(rng.NormFloat64()*sig)) })
	}
	mk("steps", func(k int) int32 { return int32((k/97)%5*3000) + int32(rng.IntN(3)) })
	mk("extremes", func(k int) int32 {
		if k%2 == 0 {
			return math.MinInt32
		}
		return math.MaxInt32
	})
	mk("random", func(int) int32 { return int32(rng.Uint32()) })
	mk("ramp", func(k int) int32 { return int32(k*k) - 1e6 })
	return out
}

func TestCountStreamRoundTrip(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	var e countEncoder
	for name, xs := range signals(rng) {
		for _, n := range []int{0, 1, 2, 255, 256, 257, 511, 1000, len(xs)} {
			in := xs[:n]
			b := e.appendCountStream(nil, in)
			got := make([]int32, n)
			if err := decodeCountStream(got, b); err != nil {
				t.Fatalf("%s n=%d: %v", name, n, err)
			}
			for k := range in {
				if got[k] != in[k] {
					t.Fatalf("%s n=%d: value %d = %d, want %d", name, n, k, got[k], in[k])
				}
			}
			// A byte more is refused (the chunk's count says how many values).
			if n > 0 {
				if err := decodeCountStream(got, append(b, 0xff)); err == nil {
					t.Errorf("%s n=%d: a trailing byte was accepted", name, n)
				}
			}
		}
	}
}

// TestCountStreamSize holds the codec to its purpose: Gaussian noise of σ
// counts costs within 0.35 bits of its entropy, a constant almost nothing.
func TestCountStreamSize(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	var e countEncoder
	const n = 100_000
	xs := make([]int32, n)
	for _, sig := range []float64{2, 10, 60} {
		for k := range xs {
			xs[k] = int32(5000 + math.Round(rng.NormFloat64()*sig))
		}
		bitsPer := float64(8*len(e.appendCountStream(nil, xs))) / n
		h := 0.5 * math.Log2(2*math.Pi*math.E*sig*sig)
		if bitsPer > h+0.35 {
			t.Errorf("σ %g counts: %.2f bits/value, entropy %.2f", sig, bitsPer, h)
		}
		t.Logf("σ %g counts: %.2f bits/value (entropy %.2f)", sig, bitsPer, h)
	}
	for k := range xs {
		xs[k] = 4000
	}
	if b := len(e.appendCountStream(nil, xs)); b > n/256 {
		t.Errorf("a constant: %d bytes for %d values", b, n)
	}
}

func TestCountsChunkRanges(t *testing.T) {
	var e countEncoder
	n := 1000
	vc, ic, rg := make([]int32, n), make([]int32, n), make([]uint8, n)
	for k := range n {
		vc[k], ic[k] = int32(4000+k%3), int32(k*7%500)
		rg[k] = uint8(k / 400) // three ranges
	}
	cal := []Calibration{{VGain: 1.25e-3, IGain: 1e-6}, {VGain: 1.25e-3, IGain: 1e-4, IOffset: -0.5}, {VGain: 2.5e-3, VOffset: 0.1, IGain: 1e-2}}
	p := e.appendCountsChunk(nil, 3, 77, cal, vc, ic, rg)
	var d countsDecoder
	v, i := make([]units.Volts, n), make([]units.Amps, n)
	if err := decodeCounts(&d, p, n, v, i); err != nil {
		t.Fatal(err)
	}
	for k := range n {
		c := cal[rg[k]]
		wv := float64(float32(float64(vc[k])*c.VGain + c.VOffset))
		wi := float64(float32(float64(ic[k])*c.IGain + c.IOffset))
		if float64(v[k]) != wv || float64(i[k]) != wi {
			t.Fatalf("sample %d: %v %v, want %v %v", k, v[k], i[k], wv, wi)
		}
	}
	p[len(p)-1] ^= 0x7f // a run length that no longer fits
	if err := decodeCounts(&d, p, n, v, i); err == nil {
		t.Error("a damaged range stream was accepted")
	}
}

// TestLevels writes noisy samples with gaps in format 2 and checks every
// level against the samples: level 0 from the samples themselves, each
// coarser level from the one below.
func TestLevels(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 6))
	var buf bytes.Buffer
	w, err := NewWriter(&buf, testHeader(), Options{FlushEvery: time.Hour, SummaryPer: 8})
	if err != nil {
		t.Fatal(err)
	}
	type stat struct {
		n        uint32
		min, max float32
		sum      float64
	}
	truth := map[[2]uint64]*stat{} // (channel, window) at level 0
	idx := uint64(3)
	for step := range 60 {
		n := 1 + rng.IntN(300)
		for ch := range 2 {
			b := block(ch, idx, n)
			for k := range b.I {
				b.I[k] = units.Amps(float64(int(b.I[k]/1e-4)+rng.IntN(50)) * 1e-4) // keep them counts
			}
			if err := w.Samples(b); err != nil {
				t.Fatal(err)
			}
			for k := range b.V {
				p := float32(b.V[k]) * float32(b.I[k])
				key := [2]uint64{uint64(ch), (idx + uint64(k)) / 8}
				s := truth[key]
				if s == nil {
					s = &stat{min: p, max: p}
					truth[key] = s
				}
				s.n++
				s.min, s.max, s.sum = min(s.min, p), max(s.max, p), s.sum+float64(p)
			}
		}
		idx += uint64(n)
		if step%7 == 3 {
			gap := uint64(rng.IntN(5000))
			if err := w.Gap(meter.Gap{Channel: -1, Start: idx, Count: gap, Reason: "crc"}); err != nil {
				t.Fatal(err)
			}
			idx += gap
		}
		if step%5 == 0 {
			_ = w.Flush()
		}
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	got, err := readBytes(buf.Bytes())
	if err != nil {
		t.Fatal(err)
	}
	// points[level][(channel, window)]
	var points [levels]map[[2]uint64]stat
	for l := range points {
		points[l] = map[[2]uint64]stat{}
	}
	for _, it := range got {
		if it.Kind != KindSummary {
			continue
		}
		s := it.Summary
		if want := uint32(8) << (4 * s.Level); s.Per != want {
			t.Fatalf("level %d: per %d, want %d", s.Level, s.Per, want)
		}
		for k := range s.MinW {
			key := [2]uint64{uint64(s.Channel), s.Start/uint64(s.Per) + uint64(k)}
			if _, dup := points[s.Level][key]; dup {
				t.Fatalf("level %d window %v written twice", s.Level, key)
			}
			points[s.Level][key] = stat{n: s.Count[k], min: s.MinW[k], max: s.MaxW[k], sum: float64(s.MeanW[k]) * float64(s.Count[k])}
		}
	}
	if len(points[0]) != len(truth) {
		t.Fatalf("level 0: %d windows, samples fill %d", len(points[0]), len(truth))
	}
	for key, s := range truth {
		p := points[0][key]
		if p.n != s.n || p.min != s.min || p.max != s.max || math.Abs(p.sum-s.sum) > 1e-6*math.Abs(s.sum)+1e-6 {
			t.Fatalf("level 0 window %v: %+v, samples give %+v", key, p, *s)
		}
	}
	for l := 1; l < levels; l++ {
		agg := map[[2]uint64]*stat{}
		for key, p := range points[l-1] {
			up := [2]uint64{key[0], key[1] / levelK}
			a := agg[up]
			if a == nil {
				a = &stat{min: p.min, max: p.max}
				agg[up] = a
			}
			a.n += p.n
			a.min, a.max, a.sum = min(a.min, p.min), max(a.max, p.max), a.sum+p.sum
		}
		if len(agg) != len(points[l]) {
			t.Fatalf("level %d: %d windows, level %d fills %d", l, len(points[l]), l-1, len(agg))
		}
		for key, a := range agg {
			p := points[l][key]
			if p.n != a.n || p.min != a.min || p.max != a.max || math.Abs(p.sum-a.sum) > 1e-5*math.Abs(a.sum)+1e-5 {
				t.Fatalf("level %d window %v: %+v, level below gives %+v", l, key, p, *a)
			}
		}
	}
}

// TestFormat2Smaller: the same samples take far less room in format 2.
func TestFormat2Smaller(t *testing.T) {
	size := func(ver int) int {
		var buf bytes.Buffer
		w, _ := NewWriter(&buf, testHeader(), Options{FlushEvery: time.Hour, Version: ver})
		rng := rand.New(rand.NewPCG(7, 8))
		for f := range 20 {
			for ch := range 2 {
				b := block(ch, uint64(f)*1000, 1000)
				for k := range b.I { // channel 0: noisy counts of its LSB; channel 1 has none
					b.I[k] = units.Amps(float32(float64(400+rng.IntN(40)) * float64(float32(0.0005))))
				}
				_ = w.Samples(b)
			}
		}
		_ = w.Close()
		return buf.Len()
	}
	// Channel 1 (no LSBs) is float32 in both, 8 B/sample; channel 0 is
	// int16 counts in format 1, 4 B/sample, and must take under half that.
	v1, v2 := size(1), size(2)
	const ch1 = 8 * 20000
	if v2-ch1 > (v1-ch1)/2 {
		t.Errorf("format 2: %d bytes, format 1: %d", v2, v1)
	}
}

func FuzzCountStream(f *testing.F) {
	var e countEncoder
	f.Add(e.appendCountStream(nil, []int32{1, 2, 3, 1000, -5}), 5)
	f.Add([]byte{0x40, 0x12, 0x34}, 300)
	f.Fuzz(func(t *testing.T, b []byte, n int) {
		if n < 0 || n > 1<<14 {
			return
		}
		xs := make([]int32, n)
		if decodeCountStream(xs, b) != nil {
			return
		}
		// Whatever decodes re-encodes to a stream that decodes the same.
		again := make([]int32, n)
		if err := decodeCountStream(again, e.appendCountStream(nil, xs)); err != nil {
			t.Fatal(err)
		}
		for k := range xs {
			if xs[k] != again[k] {
				t.Fatalf("value %d: %d then %d", k, xs[k], again[k])
			}
		}
	})
}

// FuzzCountsChunk feeds arbitrary encoding-2 payloads (as a CRC-intact
// chunk would hand them over) to the layout check and the decoder.
func FuzzCountsChunk(f *testing.F) {
	var e countEncoder
	f.Add(e.appendCountsChunk(nil, 0, 0, []Calibration{{VGain: 1e-3, IGain: 1e-4}}, []int32{1, 2, 3}, []int32{4, 5, 6}, nil))
	f.Add(e.appendCountsChunk(nil, 1, 9, []Calibration{{VGain: 1}, {IGain: 2}}, []int32{1, 2}, []int32{3, 4}, []uint8{0, 1}))
	f.Fuzz(func(t *testing.T, p []byte) {
		if len(p) < samplesFixed {
			return
		}
		n := int(le.Uint32(p[4:]))
		if _, _, _, _, err := parseCounts(p, n, nil); err != nil {
			return
		}
		var d countsDecoder
		v, i := make([]units.Volts, n), make([]units.Amps, n)
		_ = decodeCounts(&d, p, n, v, i)
	})
}

// TestFormat2DamageCostsTheChunk: in a format 2 capture of 30 flushes of
// noisy counts, two flipped bits in any one encoding-2 samples chunk (not
// mendable) or a 16-byte garble in its streams cost exactly that chunk's
// samples, as a "damaged" gap; one flipped bit costs nothing (mended). The
// resynchronisation property of format 1 holds: chunk framing is the same.
func TestFormat2DamageCostsTheChunk(t *testing.T) {
	var buf bytes.Buffer
	w, err := NewWriter(&buf, testHeader(), Options{FlushEvery: time.Hour})
	if err != nil {
		t.Fatal(err)
	}
	rng := rand.New(rand.NewPCG(11, 12))
	for f := range 30 {
		b := block(0, uint64(f)*1000, 1000)
		for k := range b.I {
			b.I[k] = units.Amps(float32(float64(400+rng.IntN(40)) * float64(float32(0.0005))))
		}
		_ = w.Samples(b)
		_ = w.Samples(block(1, uint64(f)*1000, 1000))
		_ = w.Flush()
	}
	_ = w.Close()
	clean := buf.Bytes()
	var enc2 []int64
	for off := int64(preambleLen); off < int64(len(clean)); off += int64(chunkHdrLen + le.Uint32(clean[off+4:]) + crcLen) {
		if clean[off+2] == chunkSamples && clean[off+chunkHdrLen+2] == encCounts {
			enc2 = append(enc2, off)
		}
	}
	if len(enc2) != 30 {
		t.Fatalf("%d encoding-2 chunks, want 30", len(enc2))
	}
	total, _, err, _ := keptSamples(t, clean)
	if err != nil || total != 60000 {
		t.Fatalf("clean: %d samples, %v", total, err)
	}
	for i, off := range enc2 {
		plen := int64(le.Uint32(clean[off+4:]))
		for _, tc := range []struct {
			name string
			lost uint64
			hit  func(b []byte)
		}{
			{"one bit", 0, func(b []byte) { b[off+chunkHdrLen+plen/2] ^= 0x10 }},
			{"two bits", 1000, func(b []byte) { b[off+chunkHdrLen+plen/3] ^= 0x01; b[off+chunkHdrLen+2*plen/3] ^= 0x80 }},
			{"16-byte garble", 1000, func(b []byte) {
				for k := range int64(16) {
					b[off+chunkHdrLen+plen/2-8+k] = byte(rng.Uint32())
				}
			}},
		} {
			b := bytes.Clone(clean)
			tc.hit(b)
			n, gaps, err, acc := keptSamples(t, b)
			if err != nil {
				t.Fatalf("chunk %d, %s: %v", i, tc.name, err)
			}
			var damaged uint64
			for _, g := range gaps {
				if g.Reason == GapDamaged {
					damaged += g.Count
				}
			}
			// A hit in the first chunk of channel 0 has no earlier index, one
			// in its last no later index, to bound the hole (as in format
			// 1); the end chunk's count says it.
			if (i == 0 || i == len(enc2)-1) && tc.lost > 0 {
				damaged = acc.Written - acc.Read
			}
			if n != 60000-tc.lost || damaged != tc.lost {
				t.Fatalf("chunk %d, %s: %d samples kept, %d in damaged gaps; want %d lost", i, tc.name, n, damaged, tc.lost)
			}
		}
	}
}

// TestFormatsReadBackTheSameSamples: the same blocks written in format 1
// and format 2 read back bit for bit the same (format 2 is lossless), for
// counts of the header's LSB in double precision (the hub driver's), of
// the LSB rounded to float32, and for values that are no counts at all.
func TestFormatsReadBackTheSameSamples(t *testing.T) {
	rng := rand.New(rand.NewPCG(13, 14))
	var blocks []*meter.Block
	for f := range 12 {
		b := block(f%2, uint64(f/2)*700, 700)
		for k := range b.I {
			switch f % 6 {
			case 0:
				b.I[k] = units.Amps(float32(float64(400+rng.IntN(90)) * 0.0005))
			case 2:
				b.I[k] = units.Amps(float32(float64(400+rng.IntN(90)) * float64(float32(0.0005))))
			case 4:
				b.I[k] = units.Amps(float32(rng.Float64()))
			}
		}
		blocks = append(blocks, b)
	}
	read := func(ver int) []item {
		var buf bytes.Buffer
		w, _ := NewWriter(&buf, testHeader(), Options{FlushEvery: time.Hour, Version: ver})
		for _, b := range blocks {
			if err := w.Samples(b); err != nil {
				t.Fatal(err)
			}
		}
		_ = w.Close()
		got, err := readBytes(buf.Bytes())
		if err != nil {
			t.Fatal(err)
		}
		var s []item
		for _, it := range got {
			if it.Kind == KindSamples {
				s = append(s, it)
			}
		}
		return s
	}
	a, b := read(1), read(2)
	if len(a) != len(b) || len(a) == 0 {
		t.Fatalf("%d and %d samples records", len(a), len(b))
	}
	for k := range a {
		x, y := a[k].Block, b[k].Block
		if x.Channel != y.Channel || x.Start != y.Start || len(x.V) != len(y.V) {
			t.Fatalf("record %d: %d@%d×%d vs %d@%d×%d", k, x.Channel, x.Start, len(x.V), y.Channel, y.Start, len(y.V))
		}
		for j := range x.V {
			if math.Float64bits(float64(x.V[j])) != math.Float64bits(float64(y.V[j])) || math.Float64bits(float64(x.I[j])) != math.Float64bits(float64(y.I[j])) {
				t.Fatalf("record %d sample %d: %v %v vs %v %v", k, j, x.V[j], x.I[j], y.V[j], y.I[j])
			}
		}
	}
}
