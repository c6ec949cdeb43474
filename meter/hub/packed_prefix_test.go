package hub

import (
	"math/bits"
	"math/rand"
	"testing"

	"github.com/idlewatt/idlewatt/units"
)

// Every entry of every prefix table is the sample riceNext reads from a
// window beginning with its index, whatever bits follow: the length, the
// bus delta, and the current code's quotient with the remainder the
// window holds at the entry's shift. An index without an entry is one
// whose sample's prefix does not fit it, an escape, or a bus delta
// beyond the entry's byte.
func TestPrefixTableIsRiceNext(t *testing.T) {
	rng := rand.New(rand.NewSource(7))
	for kb := uint(0); kb <= packedMaxKBus; kb++ {
		for ki := uint(0); ki <= packedMaxKCur; ki++ {
			tab := newPrefixTable(kb, ki)
			held := 0
			for x := range tab {
				e := tab[x]
				w := uint64(x)<<(64-prefixBits) | rng.Uint64()>>prefixBits
				ub, w2, nb := riceNext(w, kb, packedBusRaw)
				ui, _, ni := riceNext(w2, ki, packedCurRaw)
				qb, qc := uint(bits.LeadingZeros64(w)), uint(bits.LeadingZeros64(w2))
				if e == 0 {
					fits := qb < packedEscape && qc < packedEscape && nb+qc+1 <= prefixBits
					if fits && unzig(ub) == int32(int8(unzig(ub))) {
						t.Fatalf("kb %d ki %d index %#x: no entry for a %d-bit prefix", kb, ki, x, nb+qc+1)
					}
					continue
				}
				held++
				if e.tl() != nb+ni || uint64(e)&63 != uint64(e.tl()) {
					t.Fatalf("kb %d ki %d index %#x: length %d (shift count %d); riceNext read %d bits", kb, ki, x, e.tl(), e&63, nb+ni)
				}
				// The window rotated by the entry brings the sample's
				// bits round to its low end, the current remainder lowest.
				mask := uint32(1)<<ki - 1
				rem := uint32(bits.RotateLeft64(w, int(e&63))) & mask
				if e.bus() != unzig(ub) || e.qs()|rem != ui {
					t.Fatalf("kb %d ki %d index %#x: bus %d current %d, riceNext %d and %d",
						kb, ki, x, e.bus(), e.qs()|rem, unzig(ub), ui)
				}
			}
			// The shortest samples, a 1 and kb bits then a 1, are held.
			if kb+2 <= prefixBits && held == 0 {
				t.Fatalf("kb %d ki %d: an empty table", kb, ki)
			}
		}
	}
}

// The prefix reader accepts the blocks of a noisy meter and decodes them
// to what unpackFloatDeltas, code by code, decodes: every value and the
// bits read. (sameUnpack holds unpackFloats, either reader, to the
// reference on damaged blocks too; this is what shows the prefix reader
// is the one that ran.)
func TestPrefixDeltasIsUnpackFloatDeltas(t *testing.T) {
	rng := rand.New(rand.NewSource(11))
	var pk Packer
	var fast, slow packedFloats
	for j := range fast.lv {
		fast.lv[j], fast.li[j] = 1.25e-3+float64(j)*1e-6, 8e-6*(1+float64(j)/7)
		slow.lv[j], slow.li[j] = fast.lv[j], fast.li[j]
	}
	blocks, samples := 0, 0
	for _, chans := range []int{1, 2, 3, 4, 8, 16} {
		for _, sigma := range []float64{0, 1, 3, 60, 400} {
			for _, maxPayload := range []int{64, 248, 1016, MaxPayload} {
				sets := randomSets(rng, 300, chans, sigma)
				if rng.Intn(2) == 0 {
					sets = refSets(rng, 300, chans) // still segments among noisy ones
				}
				p, _ := pk.Append(nil, Samples{Mask: uint16(1<<chans - 1)}, sets, 300, maxPayload)
				var s Samples
				if err := s.header2(p); err != nil {
					t.Fatal(err)
				}
				stream, err := s.packedHeader(s.Data, &fast.chs)
				if err != nil {
					t.Fatal(err)
				}
				if !prefixable(fast.chs[:s.Chans]) {
					continue
				}
				slow.chs = fast.chs
				n := s.Count * s.Chans
				fast.v, fast.i = make([]units.Volts, n), make([]units.Amps, n)
				slow.v, slow.i = make([]units.Volts, n), make([]units.Amps, n)
				if fast.bs == nil {
					fast.bs = new(floatStream)
				}
				bs := fast.bs[:len(stream)+floatPad]
				clear(bs[copy(bs, stream):])
				total := 8 * len(stream)
				pos, ok := fast.prefixDeltas(fast.bs, bs, total, fast.chs[:s.Chans], s.Count)
				want, err := unpackFloatDeltas(&slow, bs, total, slow.chs[:s.Chans], s.Count)
				if err != nil {
					t.Fatal(err)
				}
				if !ok || pos != want {
					t.Fatalf("%d channels σ %g: prefix reader ok %v at bit %d; code by code %d", chans, sigma, ok, pos, want)
				}
				for k := range n {
					if k%s.Count != 0 && (fast.v[k] != slow.v[k] || fast.i[k] != slow.i[k]) {
						t.Fatalf("%d channels σ %g: value %d: %v %v, code by code %v %v", chans, sigma, k, fast.v[k], fast.i[k], slow.v[k], slow.i[k])
					}
				}
				blocks++
				samples += n
			}
		}
	}
	if blocks < 80 {
		t.Fatalf("only %d blocks were prefixable", blocks)
	}
	t.Logf("%d blocks, %d channel samples", blocks, samples)
}

// BenchmarkUnpackFloats: one 248-byte packed frame of 8 channels of a
// noisy meter (a bus count and 10 current counts of noise), decoded by
// the stream decoder's path into volts and amps; bytes are channel
// samples, as in BenchmarkUnpack.
func BenchmarkUnpackFloats(b *testing.B) {
	rng := rand.New(rand.NewSource(1))
	sets := make([]byte, 0, 100*8*5)
	for range 100 {
		for j := range 8 {
			sets = AppendCur20(le.AppendUint16(sets, uint16(4000+j*5000+int(rng.NormFloat64()))), int32(3000+j*1000+int(rng.NormFloat64()*10)))
		}
	}
	var pk Packer
	p, m := pk.Append(nil, Samples{Mask: 0xFF}, sets, 100, 248)
	var s Samples
	var f packedFloats
	for j := range f.lv {
		f.lv[j], f.li[j] = 1.25e-3, 8e-6
	}
	b.SetBytes(int64(m * 8))
	for b.Loop() {
		if err := s.header2(p); err != nil {
			b.Fatal(err)
		}
		if err := s.unpackFloats(s.Data, &f); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(m), "sets/frame")
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/float64(m*8), "ns/sample")
}
