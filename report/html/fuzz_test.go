package html

import (
	"encoding/binary"
	"math"
	"testing"

	"github.com/idlewatt/idlewatt/analysis"
	"github.com/idlewatt/idlewatt/meter"
	"github.com/idlewatt/idlewatt/units"
)

// FuzzPyramid feeds the sink arbitrary runs, rail blocks and states — any
// times, periods and values, in any order — and checks that it never
// panics, stays within its budget, keeps every finite sample it accepted
// exactly once, and that the page still builds.
func FuzzPyramid(f *testing.F) {
	f.Add([]byte{0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16})
	f.Add([]byte{0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xf0, 0x7f, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10})
	f.Fuzz(func(t *testing.T, data []byte) {
		fl := func(i int) float64 {
			if len(data) < 8 {
				return float64(i)
			}
			j := (i * 5) % (len(data) - 7)
			return math.Float64frombits(binary.LittleEndian.Uint64(data[j:]))
		}
		p := NewPyramid(Budget{ShortBytes: 4000, LongBytes: 8000, ShortS: 1, LongS: 10})
		p.Begin(analysis.Clock{NsPerSample: 1e5, RateHz: 1e4}, 0)
		for i := 0; i < len(data)/2 && i < 64; i++ {
			w := []float64{fl(i), fl(i + 1), 0.25, fl(i + 2)}
			switch data[i] % 3 {
			case 0:
				dt := 1e-4 // the clock's period, as analysis passes it
				if data[i]&8 != 0 {
					dt = math.Abs(fl(i + 4))
				}
				before := countDrive(p, 1)
				p.DriveSamples(1, fl(i+3), dt, w)
				// Every finite sample of an accepted run is kept, once.
				if got := countDrive(p, 1) - before; p.usable(fl(i+3), dt, len(w)) {
					finite := uint64(0)
					for _, x := range w {
						if !math.IsNaN(x) && !math.IsInf(x, 0) {
							finite++
						}
					}
					if got != finite {
						t.Errorf("run %d: %d samples kept of %d finite", i, got, finite)
					}
				} else if got != 0 {
					t.Errorf("run %d rejected but %d samples kept", i, got)
				}
			case 1:
				b := &meter.Block{Channel: int(data[i] % 4), V: []units.Volts{units.Volts(fl(i)), 5}, I: []units.Amps{0.1, units.Amps(fl(i + 1))}}
				p.RailBlock(fl(i+2), 1e-4, b)
			default:
				p.DriveState(1, fl(i), analysis.State(data[i]%6))
			}
		}
		limit := float64(p.budget.LongBytes) / bytesPerBucket
		for port, l := range p.drives {
			if float64(len(l.n)) > 2*limit+2 {
				t.Errorf("port %d: %d buckets, budget %g", port, len(l.n), limit)
			}
		}
		p.finish()
		if _, err := build(&analysis.Report{}, p, &timeline{io: map[int]*ioBuckets{}, pins: map[int][][2]float64{}}, Options{}); err != nil {
			t.Errorf("build: %v", err)
		}
	})
}

func countDrive(p *Pyramid, port int) uint64 {
	var n uint64
	if l := p.drives[port]; l != nil {
		for _, c := range l.n {
			n += uint64(c)
		}
	}
	return n
}
