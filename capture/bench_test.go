package capture

// The package's benchmarks: speeds are reported (samples/s, rows/s,
// ns/sample) and never asserted by a test, since they depend on the
// machine's load. docs/benchmarks.md quotes them with their command:
//
//	go test ./capture -run '^$' -bench . -benchtime 3x

import (
	"bytes"
	"io"
	"math/rand/v2"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/idlewatt/idlewatt/units"
)

func BenchmarkWrite(b *testing.B) {
	for _, h := range []struct {
		name string
		ch   int
	}{{"float32", 1}, {"int16", 0}} {
		b.Run(h.name, func(b *testing.B) {
			path := filepath.Join(b.TempDir(), "c.iwcap")
			w, err := Create(path, testHeader(), Options{})
			if err != nil {
				b.Fatal(err)
			}
			blk := block(h.ch, 0, 1000)
			b.SetBytes(int64(blk.Len()) * 16) // float64 V and I in
			b.ResetTimer()
			for k := range b.N {
				blk.Start = uint64(k) * 1000
				if err := w.Samples(blk); err != nil {
					b.Fatal(err)
				}
			}
			if err := w.Close(); err != nil {
				b.Fatal(err)
			}
			b.StopTimer()
			b.ReportMetric(float64(b.N)*1000/b.Elapsed().Seconds(), "samples/s")
			fi, _ := os.Stat(path)
			b.ReportMetric(float64(fi.Size())/float64(b.N*1000), "file_B/sample")
		})
	}
}

func BenchmarkRead(b *testing.B) {
	for _, h := range []struct {
		name string
		ch   int
	}{{"float32", 1}, {"int16", 0}} {
		b.Run(h.name, func(b *testing.B) {
			var buf bytes.Buffer
			w, _ := NewWriter(&buf, testHeader(), Options{FlushEvery: time.Hour})
			const n = 1 << 20
			for k := uint64(0); k < n; k += 1000 {
				w.Samples(block(h.ch, k, 1000))
			}
			w.Close()
			data := buf.Bytes()
			b.SetBytes(int64(len(data)))
			b.ResetTimer()
			for range b.N {
				r, err := NewReader(bytes.NewReader(data))
				if err != nil {
					b.Fatal(err)
				}
				if _, err := readCount(r); err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric(float64(b.N)*n/b.Elapsed().Seconds(), "samples/s")
		})
	}
}

func BenchmarkRows(b *testing.B) {
	var buf bytes.Buffer
	w, _ := NewWriter(&buf, testHeader(), Options{FlushEvery: time.Hour})
	const n = 1 << 18
	for k := uint64(0); k < n; k += 1000 {
		w.Samples(block(0, k, 1000))
		w.Samples(block(1, k, 1000))
	}
	w.Close()
	data := buf.Bytes()
	b.SetBytes(int64(len(data)))
	for b.Loop() {
		r, _ := NewReader(bytes.NewReader(data))
		rows := NewRows(r)
		for {
			if _, err := rows.Next(); err != nil {
				break
			}
		}
	}
	b.ReportMetric(float64(b.N)*n/b.Elapsed().Seconds(), "rows/s")
}

// BenchmarkWriterSamples is the writer's CPU per channel-sample (counts
// check, coding, summaries) for each format, on noisy hub-like counts.
func BenchmarkWriterSamples(b *testing.B) {
	for _, ver := range []int{1, 2} {
		b.Run("format"+string(rune('0'+ver)), func(b *testing.B) {
			rng := rand.New(rand.NewPCG(1, 1))
			blk := block(0, 0, 2500)
			for k := range blk.I {
				blk.I[k] = units.Amps(float32(float64(400+rng.IntN(40)) * float64(float32(0.0005))))
			}
			w, _ := NewWriter(io.Discard, testHeader(), Options{FlushEvery: time.Hour, Version: ver})
			b.ResetTimer()
			for k := range b.N {
				blk.Start = uint64(k) * 2500
				_ = w.Samples(blk)
				if k%4 == 3 {
					_ = w.Flush()
				}
			}
			b.StopTimer()
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*2500), "ns/sample")
			_ = w.Close()
		})
	}
}
