package ppk2

import (
	"math"
	"math/rand/v2"
	"testing"

	"github.com/idlewatt/idlewatt/meter"
)

func FuzzMetadata(f *testing.F) {
	f.Add([]byte(exampleMeta))
	f.Add([]byte("R0: -nan\nGS0: 0\nEND"))
	f.Add([]byte("VDD: 1e300\nmode: x\nEND\r\n"))
	f.Add([]byte("no end here"))
	f.Fuzz(func(t *testing.T, b []byte) {
		for _, bh := range []Behaviour{NordicApp, ZeroROnly} {
			m, err := ParseMetadata(b, bh)
			if err != nil {
				continue
			}
			for r := range Ranges {
				if m.R[r] == 0 || math.IsNaN(m.R[r]) || math.IsInf(m.R[r], 0) {
					t.Fatalf("R%d = %v accepted", r, m.R[r])
				}
			}
			if m.Len > len(b) {
				t.Fatalf("Len %d > %d", m.Len, len(b))
			}
			// A calibration Check passes converts every word of every range
			// to a finite current within ±(full scale + offset) bounds.
			if m.Check() == nil {
				k := NewConverter(m.Calibration, 5000)
				for r := range Ranges {
					for _, adc := range []uint32{0, 0x3fff} {
						if a := k.Amps(Word(adc | uint32(r)<<14)); math.IsNaN(a) || math.IsInf(a, 0) {
							t.Fatalf("range %d ADC %d: %v A from a checked calibration %+v", r, adc, a, m.Calibration)
						}
					}
				}
			}
		}
	})
}

// FuzzDecode feeds arbitrary bytes, split at an arbitrary point, through the
// syncer and the averaging pipeline: no panic, and samples and gaps tile
// the output index without overlap.
func FuzzDecode(f *testing.F) {
	f.Add(words(0, 40, 100), uint16(7), uint8(1))
	f.Add(append(append([]byte{1, 2, 3}, words(5, 30, 9)...), words(50, 30, 9)...), uint16(13), uint8(10))
	f.Add(vector, uint16(2), uint8(3))
	f.Fuzz(func(t *testing.T, b []byte, split uint16, n uint8) {
		c := &collect{}
		pl := newPipeline(c, NewConverter(DefaultCalibration(), 3000), true, uint64(n%16)+1, 3)
		s := &syncer{out: pl}
		k := int(split) % (len(b) + 1)
		s.feed(b[:k])
		s.feed(b[k:])
		pl.flush()
		if c.err != nil {
			t.Fatal(c.err)
		}
		if len(s.carry) > 4*lockRun {
			t.Fatalf("carry grew to %d", len(s.carry))
		}
	})
}

type discard struct{ n int }

func (d *discard) Samples(b *meter.Block) error { d.n += b.Len(); return nil }
func (*discard) Gap(meter.Gap) error            { return nil }
func (*discard) Mark(meter.MarkEcho) error      { return nil }
func (*discard) Event(meter.Event) error        { return nil }

// stream returns secs seconds of realistic words: currents that wander
// across ranges, so the spike filter works.
func stream(secs int) []byte {
	m, _ := ParseMetadata([]byte(exampleMeta), NordicApp)
	k := NewConverter(m.Calibration, 3000)
	rng := rand.New(rand.NewPCG(3, 4))
	b := make([]byte, 0, 4*SampleRate*secs)
	a := 1e-3
	for i := range SampleRate * secs {
		a = math.Min(0.5, math.Max(1e-6, a*math.Exp(rng.NormFloat64()*0.01)))
		b = appendWord(b, k.Encode(a, uint8(i), 0))
	}
	return b
}

func appendWord(b []byte, w Word) []byte {
	return append(b, byte(w), byte(w>>8), byte(w>>16), byte(w>>24))
}

func TestDecodeAllocs(t *testing.T) {
	b := stream(1)
	pl := newPipeline(&discard{}, NewConverter(DefaultCalibration(), 3000), true, 1, 3)
	s := &syncer{out: pl}
	chunk := 0
	allocs := testing.AllocsPerRun(20, func() {
		s.feed(b[chunk*4001 : (chunk+1)*4001]) // odd size: words split across reads
		pl.flush()
		chunk++
	})
	if allocs != 0 {
		t.Fatalf("%v allocations per read", allocs)
	}
}

// BenchmarkDecode: bytes/s through sync, conversion, spike filter and
// blocks. Real time is 400 kB/s.
func BenchmarkDecode(b *testing.B) {
	data := stream(2)
	for _, n := range []uint64{1, 10} {
		b.Run(map[uint64]string{1: "100kS", 10: "10kS"}[n], func(b *testing.B) {
			d := &discard{}
			pl := newPipeline(d, NewConverter(DefaultCalibration(), 3000), true, n, 3)
			s := &syncer{out: pl}
			b.SetBytes(int64(len(data)))
			for b.Loop() {
				for off := 0; off < len(data); off += 64 << 10 {
					s.feed(data[off:min(off+64<<10, len(data))])
					pl.flush()
				}
			}
			b.ReportMetric(float64(b.N)*float64(len(data))/b.Elapsed().Seconds()/400e3, "x-realtime")
		})
	}
}
