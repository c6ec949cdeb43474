package analysis_test

import (
	"io"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/idlewatt/idlewatt/analysis"
	"github.com/idlewatt/idlewatt/analysis/synthcap"
)

// BenchmarkAnalyze5m analyzes 5 minutes × 2 drives × 2 rails at 10 kS/s and
// reports samples/s and the ratio to merely reading the file; multiply the
// time by 12 for an hour (the memory does not grow with length — see
// scripts/report-scale.sh for the RSS of a real hour).
func BenchmarkAnalyze5m(b *testing.B) {
	path := filepath.Join(b.TempDir(), "5m.iwc")
	if err := synthcap.Write(path, synthcap.Review(5*time.Minute, 10000, 50)); err != nil {
		b.Fatal(err)
	}
	fi, _ := os.Stat(path)
	t0 := time.Now()
	f, _ := os.Open(path)
	io.Copy(io.Discard, f)
	f.Close()
	read := time.Since(t0)
	b.SetBytes(fi.Size())
	b.ResetTimer()
	for b.Loop() {
		if _, err := analysis.Analyze(path, analysis.DefaultOptions()); err != nil {
			b.Fatal(err)
		}
	}
	per := b.Elapsed() / time.Duration(b.N)
	b.ReportMetric(float64(5*60*10000*4)/per.Seconds(), "samples/s")
	b.ReportMetric(read.Seconds()/per.Seconds(), "speed-vs-read")
}
