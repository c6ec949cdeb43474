package importer

import (
	"context"
	"errors"
	"io"
	"math"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/idlewatt/idlewatt/analysis"
	"github.com/idlewatt/idlewatt/meter/files"
	"github.com/idlewatt/idlewatt/meter/files/jls"
)

// countingReader counts the bytes read through it.
type countingReader struct {
	r io.ReaderAt
	n atomic.Int64
}

func (c *countingReader) ReadAt(p []byte, off int64) (int, error) {
	n, err := c.r.ReadAt(p, off)
	c.n.Add(int64(n))
	return n, err
}

// TestOverviewFromSummaries: plot's overview of a JLS file is drawn from the
// file's power summaries — its envelope spans exactly their min and max —
// and reads a fraction of the file, none of its sample data chunks beyond
// what opening it reads.
func TestOverviewFromSummaries(t *testing.T) {
	path := filepath.Join(fixtures, "jls", "js220-like.jls")
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	fi, _ := f.Stat()
	cr := &countingReader{r: f}
	ov, err := openOverview(context.Background(), cr, fi.Size(), path, Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer ov.Close()
	pd, err := analysis.PlotTraces(path, analysis.PlotOptions{Buckets: 10, Open: func() (analysis.Source, error) { return ov.Source(), nil }})
	if err != nil {
		t.Fatal(err)
	}
	if ov.tmp != "" {
		t.Fatal("the overview imported the samples")
	}
	t.Logf("the overview read %d of the file's %d bytes", cr.n.Load(), fi.Size())
	if read := cr.n.Load(); read > fi.Size()/3 {
		t.Errorf("the overview read %d of the file's %d bytes", read, fi.Size())
	}
	// The power summaries as the JLS reader gives them (level 1: 128
	// samples a window, the level two points a bucket of 1000 samples need).
	rd, err := jls.Open(f, fi.Size())
	if err != nil {
		t.Fatal(err)
	}
	lo, hi := math.Inf(1), math.Inf(-1)
	it := rd.Summaries(rd.Signal(1, "power"), 1)
	for {
		s, err := it.Next()
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		for k := range s.Mean {
			if !math.IsNaN(s.Mean[k]) {
				lo, hi = math.Min(lo, float64(float32(s.Min[k]))), math.Max(hi, float64(float32(s.Max[k])))
			}
		}
	}
	env := pd.Traces[0].Power
	elo, ehi := math.Inf(1), math.Inf(-1)
	for k := range env.T {
		if !math.IsNaN(env.Mean[k]) {
			elo, ehi = math.Min(elo, env.Min[k]), math.Max(ehi, env.Max[k])
		}
	}
	if env.Len() == 0 || elo != lo || ehi != hi {
		t.Errorf("envelope %d points, %g … %g W; the file's summaries %g … %g W", env.Len(), elo, ehi, lo, hi)
	}
	notes := strings.Join(pd.Notes, "\n")
	if !strings.Contains(notes, "overview drawn from the file's own summaries") || strings.Contains(notes, "no usable clock marks") ||
		strings.Contains(notes, "signals not used: power") {
		t.Errorf("notes:\n%s", notes)
	}
}

// TestOverviewFallsBack: a chart finer than the file's summary levels is
// drawn from the samples (a capture imported on demand, removed by Close);
// a file without a power signal has no overview.
func TestOverviewFallsBack(t *testing.T) {
	path := filepath.Join(fixtures, "jls", "js220-like.jls")
	ov, err := OpenOverview(context.Background(), path, Options{})
	if err != nil {
		t.Fatal(err)
	}
	pd, err := analysis.PlotTraces(path, analysis.PlotOptions{Buckets: 2000, Open: func() (analysis.Source, error) { return ov.Source(), nil }})
	if err != nil {
		t.Fatal(err)
	}
	tmp := ov.tmp
	if tmp == "" || pd.Traces[0].Power.Len() == 0 {
		t.Fatalf("no samples drawn (%q)", tmp)
	}
	ov.Close()
	if _, err := os.Stat(tmp); !os.IsNotExist(err) {
		t.Errorf("Close left %s", tmp)
	}
	if _, err := OpenOverview(context.Background(), filepath.Join(fixtures, "jls", "levels-omit.jls"), Options{Options: files.Options{Voltage: 5}}); !errors.Is(err, ErrNoOverview) {
		t.Errorf("a file without power: %v", err)
	}
	if _, err := OpenOverview(context.Background(), filepath.Join(fixtures, "ppk2csv", "current-only-1k.csv"), Options{}); !errors.Is(err, ErrNoOverview) {
		t.Errorf("a CSV: %v", err)
	}
}
