package analysis_test

import (
	"errors"
	"io"
	"os"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/idlewatt/idlewatt/analysis"
	"github.com/idlewatt/idlewatt/analysis/synthcap"
	"github.com/idlewatt/idlewatt/capture"
)

// benchDir holds captures generated for benchmarks, shared by the
// benchmarks of one test binary and removed by TestMain.
var (
	benchDir  string
	benchOnce sync.Once
	benchErr  error
	benchPath string
)

func TestMain(m *testing.M) {
	code := m.Run()
	if benchDir != "" {
		os.RemoveAll(benchDir)
	}
	os.Exit(code)
}

// benchCapture returns the capture benchmarks read: $IDLEWATT_BENCH_CAPTURE
// when set (e.g. scripts/report-scale.sh's hour), else 5 minutes × 2 drives
// × 2 rails at 10 kS/s generated once per test binary.
func benchCapture(b *testing.B) (path string, channelSamples float64) {
	if p := os.Getenv("IDLEWATT_BENCH_CAPTURE"); p != "" {
		r, err := capture.Open(p)
		if err != nil {
			b.Fatal(err)
		}
		defer r.Close()
		n := 0
		for {
			rec, err := r.Next()
			if err != nil {
				break
			}
			if rec.Kind == capture.KindSamples {
				n += len(rec.Block.V)
			}
		}
		return p, float64(n)
	}
	benchOnce.Do(func() {
		if benchDir, benchErr = os.MkdirTemp("", "analysis-bench-"); benchErr != nil {
			return
		}
		benchPath = filepath.Join(benchDir, "5m.iwcap")
		benchErr = synthcap.Write(benchPath, synthcap.Review(5*time.Minute, 10000, 50))
	})
	if benchErr != nil {
		b.Fatal(benchErr)
	}
	return benchPath, 5 * 60 * 10000 * 4
}

// readTime is how long merely reading path takes (page cache warm).
func readTime(path string) time.Duration {
	for range 2 {
		f, _ := os.Open(path)
		io.Copy(io.Discard, f)
		f.Close()
	}
	t0 := time.Now()
	f, _ := os.Open(path)
	io.Copy(io.Discard, f)
	f.Close()
	return time.Since(t0)
}

// scanTime is how long decoding every record of path with a capture.Reader
// takes: the floor for any analysis that looks at every sample.
func scanTime(b *testing.B, path string) time.Duration {
	t0 := time.Now()
	if err := scan(path); err != nil {
		b.Fatal(err)
	}
	return time.Since(t0)
}

func scan(path string) error {
	r, err := capture.Open(path)
	if err != nil {
		return err
	}
	defer r.Close()
	for {
		if _, err := r.Next(); err != nil {
			if errors.Is(err, io.EOF) {
				return nil
			}
			return err
		}
	}
}

// BenchmarkAnalyze5m analyzes 5 minutes × 2 drives × 2 rails at 10 kS/s (or
// $IDLEWATT_BENCH_CAPTURE) and reports channel-samples/s and the speed
// relative to merely reading the file (speed-vs-read, the goal is
// ≥ 0.5) and to decoding it with a capture.Reader (speed-vs-scan). Both
// references are timed once, before the loop, on a machine that may be busy:
// compare runs, not single numbers. docs/benchmarks.md has figures.
func BenchmarkAnalyze5m(b *testing.B) {
	path, n := benchCapture(b)
	fi, _ := os.Stat(path)
	read := readTime(path)
	sc := scanTime(b, path)
	b.SetBytes(fi.Size())
	b.ResetTimer()
	for b.Loop() {
		if _, err := analysis.Analyze(path, analysis.DefaultOptions()); err != nil {
			b.Fatal(err)
		}
	}
	per := b.Elapsed() / time.Duration(b.N)
	b.ReportMetric(n/per.Seconds(), "samples/s")
	b.ReportMetric(read.Seconds()/per.Seconds(), "speed-vs-read")
	b.ReportMetric(sc.Seconds()/per.Seconds(), "speed-vs-scan")
}

// BenchmarkScan5m decodes every record of the same capture and nothing
// else: the reference speed-vs-scan divides by.
func BenchmarkScan5m(b *testing.B) {
	path, n := benchCapture(b)
	fi, _ := os.Stat(path)
	read := readTime(path)
	b.SetBytes(fi.Size())
	b.ResetTimer()
	for b.Loop() {
		if err := scan(path); err != nil {
			b.Fatal(err)
		}
	}
	per := b.Elapsed() / time.Duration(b.N)
	b.ReportMetric(n/per.Seconds(), "samples/s")
	b.ReportMetric(read.Seconds()/per.Seconds(), "speed-vs-read")
}
