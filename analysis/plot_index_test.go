package analysis

import (
	"encoding/binary"
	"os"
	"path/filepath"
	"reflect"
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

func (s indexSpy) UseIndexOf(k capture.IndexKinds) error {
	err := s.Reader.UseIndexOf(k)
	if err == nil {
		*s.used++
	}
	return err
}

// TestPlotThroughIndex: the overview of a capture with an index reads only
// through it and finds exactly the traces and notes a scan of the same
// capture written without an index finds; a capture whose index lists a
// damaged chunk is scanned, with a note saying why, and gives those traces.
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
	plot := func(path string, used *int, o PlotOptions) *PlotData {
		t.Helper()
		o.Open = func() (Source, error) {
			r, err := capture.Open(path)
			if err != nil {
				return nil, err
			}
			return indexSpy{r, used}, nil
		}
		d, err := PlotTraces(path, o)
		if err != nil {
			t.Fatal(err)
		}
		return d
	}
	var nPlain, nIdx int
	want := plot(plain, &nPlain, PlotOptions{Buckets: 50})
	got := plot(indexed, &nIdx, PlotOptions{Buckets: 50})
	if nPlain != 0 || nIdx != 2 {
		t.Fatalf("passes through an index: %d without one, %d with (want 0 and 2: first pass and summaries)", nPlain, nIdx)
	}
	if len(want.Traces) != 2 || want.Traces[0].Power.Len() < 20 {
		t.Fatalf("the scanned chart has %d traces (%d points)", len(want.Traces), want.Traces[0].Power.Len())
	}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("the chart through the index differs from the scanned one (notes %q vs %q)", got.Notes, want.Notes)
	}

	// A mark the index lists, damaged: the scan mends it; the indexed read
	// refuses it, so PlotTraces scans and says why.
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
	dam := plot(damaged, &nDam, PlotOptions{Buckets: 50})
	if len(dam.Notes) == 0 || !strings.Contains(dam.Notes[0], "capture index") || !strings.Contains(dam.Notes[0], "read the whole capture instead") {
		t.Fatalf("damaged listed chunk: notes %q, want the index note first", dam.Notes)
	}
	if !reflect.DeepEqual(dam.Traces, want.Traces) {
		t.Fatalf("the chart after the fallback differs from the scanned one")
	}

	// Zoomed in to where the indexed levels are too coarse: scanned, the
	// same traces as without an index, no note.
	var nZoom, nZoomPlain int
	zi := plot(indexed, &nZoom, PlotOptions{From: 10, To: 20, Buckets: 50})
	zp := plot(plain, &nZoomPlain, PlotOptions{From: 10, To: 20, Buckets: 50})
	if len(zi.Notes) != 0 || !reflect.DeepEqual(zi, zp) {
		t.Fatalf("zoomed: notes %q; traces equal %v", zi.Notes, reflect.DeepEqual(zi.Traces, zp.Traces))
	}
}
