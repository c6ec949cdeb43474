package chart

import (
	"io"
	"math"
	"testing"
	"time"
)

// One hour at 10 kS/s per drive, fed as one-second meter blocks.
const (
	benchRate    = 10000
	benchSeconds = 3600
)

// benchBlocks returns a few one-second blocks of a drive's power to cycle
// through: idle, an I/O burst, slumber and DevSlp, so the min/max paths see
// realistic variety. Building them is outside the timed region.
func benchBlocks(idle float64) [][]float64 {
	var bs [][]float64
	for k := 0; k < 8; k++ {
		b := make([]float64, benchRate)
		for i := range b {
			x := float64(i) / benchRate
			switch k % 4 {
			case 0:
				b[i] = idle + 0.005*math.Sin(float64(i))
			case 1:
				b[i] = 1.5 + 0.8*math.Abs(math.Sin(x*40+float64(k)))
			case 2:
				b[i] = 0.08 + 0.002*math.Sin(float64(i))
			default:
				b[i] = 0.004 + 0.0002*math.Sin(float64(i))
			}
		}
		bs = append(bs, b)
	}
	return bs
}

// decimateHour feeds one drive-hour through a Decimator; it returns the
// envelope and how long the feeding took.
func decimateHour(tb testing.TB, blocks [][]float64) (Envelope, time.Duration) {
	d, err := NewDecimator(DecimatorOpts{Buckets: 2000, Span: benchSeconds})
	if err != nil {
		tb.Fatal(err)
	}
	start := time.Now()
	for s := 0; s < benchSeconds; s++ {
		d.AddUniform(float64(s), 1.0/benchRate, blocks[(s*7/3)%len(blocks)])
	}
	return d.Envelope(), time.Since(start)
}

func benchTraces(tb testing.TB) ([]Trace, time.Duration) {
	var trs []Trace
	var dec time.Duration
	for k, idle := range []float64{0.42, 0.21} {
		e, dt := decimateHour(tb, benchBlocks(idle))
		dec += dt
		tr := Trace{Name: []string{"JMF667H 128 GB", "JMF667H 256 GB"}[k], Power: e}
		// PCMark-7-like: ~20 I/Os per busy second, 30 000 I/Os in the hour.
		for s := 0; s < benchSeconds; s++ {
			if (s*7/3)%8%4 == 1 {
				for j := 0; j < 20; j++ {
					t := float64(s) + float64(j)*0.05
					tr.IO = append(tr.IO, Interval{Start: t, End: t + 0.002})
				}
			}
			tr.States = append(tr.States, StateSpan{Start: float64(s), End: float64(s + 1), State: []string{"idle", "active", "slumber", "devslp"}[(s*7/3)%8%4]})
		}
		tr.Notes = []Annotation{{T: 1800, Text: "DEVSLP enabled"}}
		trs = append(trs, tr)
	}
	return trs, dec
}

// BenchmarkPowerChart1h is the figure: a one-hour, two-drive power
// chart, 36 M samples a drive through the Decimator, then a 10 × 5.6 in
// PNG. It reports decimation and rendering separately.
func BenchmarkPowerChart1h(b *testing.B) {
	for _, format := range []string{"png", "svg"} {
		b.Run(format, func(b *testing.B) {
			var dec, ren time.Duration
			for b.Loop() {
				trs, d := benchTraces(b)
				dec += d
				t0 := time.Now()
				f, err := PowerOverTime(trs, PowerOpts{Title: "Power over time, 1 h"})
				if err != nil {
					b.Fatal(err)
				}
				if err := f.Write(io.Discard, format); err != nil {
					b.Fatal(err)
				}
				ren += time.Since(t0)
			}
			n := float64(b.N)
			b.ReportMetric(dec.Seconds()/n, "decimate-s/op")
			b.ReportMetric(ren.Seconds()/n, "render-s/op")
			b.ReportMetric(dec.Seconds()/n/(2*benchRate*benchSeconds)*1e9, "ns/sample")
		})
	}
}

// BenchmarkDecimatorAdd times the one-sample path, for callers that cannot
// batch.
func BenchmarkDecimatorAdd(b *testing.B) {
	d, _ := NewDecimator(DecimatorOpts{Buckets: 2000, Span: 3600})
	t := 0.0
	b.ReportAllocs()
	for b.Loop() {
		d.Add(t, 0.4)
		t += 1e-4
		if t >= 3600 {
			t = 0
		}
	}
}
