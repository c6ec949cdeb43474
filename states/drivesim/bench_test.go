package drivesim

import (
	"testing"
	"time"

	"github.com/idlewatt/idlewatt/units"
	"github.com/idlewatt/idlewatt/workload"
)

// benchRender renders one simulated second per op at 10 kS/s in 10 ms
// chunks (as the hub emulator does) and reports the share of one core a
// port costs in real time. busy adds 4 KiB reads at ioPerSec.
func benchRender(b *testing.B, ioPerSec int) { benchRenderNoise(b, ioPerSec, Noise{}) }

func benchRenderNoise(b *testing.B, ioPerSec int, nz Noise) {
	p, _ := Lookup("jmf667h-128-a19", nil)
	p.Noise = nz
	m, err := New(p, Options{Seed: 1, Policy: PolicyMedPowerDIPM})
	if err != nil {
		b.Fatal(err)
	}
	const rate, chunk = 10000, 100
	v5, v12 := make([]units.Volts, chunk), make([]units.Volts, chunk)
	i5, i12 := make([]units.Amps, chunk), make([]units.Amps, chunk)
	var t time.Duration
	step := time.Duration(0)
	if ioPerSec > 0 {
		step = time.Second / time.Duration(ioPerSec)
	}
	next := time.Duration(0)
	b.ReportAllocs()
	b.ResetTimer()
	for range b.N {
		for range rate / chunk {
			end := t + 10*time.Millisecond
			for step > 0 && next < end {
				m.IO(next, workload.OpRead, 4096)
				m.IODone(next+50*time.Microsecond, workload.OpRead, 4096)
				next += step
			}
			m.Render(t, rate, v5, i5, v12, i12)
			t = end
		}
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/1e9*100, "%core/port")
}

func BenchmarkRenderIdle(b *testing.B)        { benchRender(b, 0) }
func BenchmarkRenderIO1kPerSec(b *testing.B)  { benchRender(b, 1000) }
func BenchmarkRenderIO20kPerSec(b *testing.B) { benchRender(b, 20000) }

// With a noise model: every component at once, and AR(1) alone.
func BenchmarkRenderEveryNoise(b *testing.B) { benchRenderNoise(b, 0, everyNoise) }
func BenchmarkRenderAR1(b *testing.B)        { benchRenderNoise(b, 0, Noise{AR1MA: 1, AR1TauMs: 2}) }

// renderChunk renders the next 10 ms of m (tests of concurrent use).
func renderChunk(m *Model) {
	v5, v12 := make([]units.Volts, 100), make([]units.Volts, 100)
	i5, i12 := make([]units.Amps, 100), make([]units.Amps, 100)
	m.Render(m.Now(), 10000, v5, i5, v12, i12)
}
