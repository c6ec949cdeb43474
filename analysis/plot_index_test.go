package analysis

import (
	"bytes"
	"encoding/binary"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/idlewatt/idlewatt/analysis/synthcap"
	"github.com/idlewatt/idlewatt/capture"
)

// indexSpy counts the passes that read through the capture's index.
type indexSpy struct {
	*capture.Reader
	used *int
}

func (s indexSpy) UseIndex() error {
	err := s.Reader.UseIndex()
	if err == nil {
		*s.used++
	}
	return err
}

// TestPlotThroughIndex: the overview of a capture with an index reads only
// through it and draws exactly the chart a scan of the same capture without
// an index draws; a capture whose index lists a damaged chunk is scanned,
// with a note saying why, and still gives that chart.
func TestPlotThroughIndex(t *testing.T) {
	dir := t.TempDir()
	s := synthcap.Review(10*time.Minute, 1000, 20)
	write := func(name string, every int64) string {
		p := filepath.Join(dir, name)
		w, err := capture.Create(p, s.Header(), capture.Options{SummaryPer: 16, IndexEvery: every})
		if err != nil {
			t.Fatal(err)
		}
		if err := synthcap.Generate(s, w); err != nil {
			t.Fatal(err)
		}
		if err := w.Close(); err != nil {
			t.Fatal(err)
		}
		return p
	}
	indexed, plain := write("indexed.iwcap", 64<<10), write("plain.iwcap", -1)
	plot := func(path string, used *int) ([]byte, []string) {
		t.Helper()
		out := filepath.Join(dir, filepath.Base(path)+".svg")
		os.Remove(out)
		notes, err := Plot(path, out, PlotOptions{Buckets: 50, Subtitle: "x", Open: func() (Source, error) {
			r, err := capture.Open(path)
			if err != nil {
				return nil, err
			}
			return indexSpy{r, used}, nil
		}})
		if err != nil {
			t.Fatal(err)
		}
		b, err := os.ReadFile(out)
		if err != nil {
			t.Fatal(err)
		}
		return b, notes
	}
	var nPlain, nIdx int
	want, wnotes := plot(plain, &nPlain)
	got, gnotes := plot(indexed, &nIdx)
	if nPlain != 0 || nIdx != 2 {
		t.Fatalf("passes through an index: %d without one, %d with (want 0 and 2: first pass and summaries)", nPlain, nIdx)
	}
	if !bytes.Equal(got, want) || len(gnotes) != len(wnotes) {
		t.Fatalf("the chart through the index differs from the scanned one (%d vs %d bytes; notes %q vs %q)", len(got), len(want), gnotes, wnotes)
	}

	// A mark the index lists, damaged: the scan mends it; the indexed read
	// refuses it, so plot scans and says why.
	b, _ := os.ReadFile(indexed)
	for off := int64(16); off+16 <= int64(len(b)); off += 16 + int64(binary.LittleEndian.Uint32(b[off+4:])) + 4 {
		if b[off+2] == 0x21 {
			b[off+16+9] ^= 0x01
			break
		}
	}
	damaged := filepath.Join(dir, "damaged.iwcap")
	if err := os.WriteFile(damaged, b, 0o644); err != nil {
		t.Fatal(err)
	}
	var nDam int
	got, dnotes := plot(damaged, &nDam)
	if len(dnotes) == 0 || !strings.Contains(dnotes[0], "capture index") || !strings.Contains(dnotes[0], "read the whole capture instead") {
		t.Fatalf("damaged listed chunk: notes %q, want the index note first", dnotes)
	}
	if !bytes.Equal(got, want) {
		t.Fatalf("the chart after the fallback differs from the scanned one")
	}

	// Zoomed in to where the indexed levels are too coarse: scanned, no note.
	out := filepath.Join(dir, "zoom.svg")
	var nZoom int
	notes, err := Plot(indexed, out, PlotOptions{From: 10, To: 20, Buckets: 50, Open: func() (Source, error) {
		r, err := capture.Open(indexed)
		return indexSpy{r, &nZoom}, err
	}})
	if err != nil || len(notes) != 0 {
		t.Fatalf("zoomed plot: %v, notes %q", err, notes)
	}
}
