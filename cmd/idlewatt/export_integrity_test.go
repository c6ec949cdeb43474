package main

import (
	"context"
	"math"
	"path/filepath"
	"strconv"
	"testing"

	"github.com/idlewatt/idlewatt/capture"
	"github.com/idlewatt/idlewatt/meter"
	"github.com/idlewatt/idlewatt/units"
)

// TestExportAcross2To32 exports a capture whose sample indices start just
// below 2³², cross it, and resume after a gap of more than 2³² samples:
// sample_index, gap and t_s must be exact on every row (issue 8 item 6).
func TestExportAcross2To32(t *testing.T) {
	t.Parallel()
	const rate = 10000
	p32 := uint64(1) << 32
	seg1, seg1End := p32-1000, p32+500
	seg2, seg2End := uint64(1)<<33+1<<20, uint64(1)<<33+1<<20+300
	dir := t.TempDir()
	capPath := filepath.Join(dir, "wrap.iwcap")
	h := capture.Header{RateHz: rate, Channels: []meter.Channel{{Port: 1, Rail: meter.Rail5V}}}
	w, err := capture.Create(capPath, h, capture.Options{})
	if err != nil {
		t.Fatal(err)
	}
	val := func(idx uint64) units.Amps { return units.Amps(float32(idx%1000) * 1e-3) }
	put := func(from, to uint64) {
		for s := from; s < to; s += 128 {
			b := &meter.Block{Channel: 0, Start: s}
			for idx := s; idx < min(s+128, to); idx++ {
				b.V, b.I = append(b.V, 5), append(b.I, val(idx))
			}
			if err := w.Samples(b); err != nil {
				t.Fatal(err)
			}
		}
	}
	put(seg1, seg1End)
	if err := w.Gap(meter.Gap{Channel: -1, Start: seg1End, Count: seg2 - seg1End, Reason: "disconnect"}); err != nil {
		t.Fatal(err)
	}
	put(seg2, seg2End)
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	csvPath := filepath.Join(dir, "wrap.csv")
	if _, e, code := run(t, context.Background(), "export", capPath, "--csv", csvPath); code != 0 {
		t.Fatalf("export exit %d: %s", code, e)
	}
	rows := readCSV(t, csvPath)[1:]
	if want := int(seg1End-seg1) + 1 + int(seg2End-seg2); len(rows) != want {
		t.Fatalf("%d rows, want %d", len(rows), want)
	}
	idx := seg1
	for r, row := range rows {
		got, err := strconv.ParseUint(row[1], 10, 64)
		if err != nil || got != idx {
			t.Fatalf("row %d: sample_index %q, want %d", r, row[1], idx)
		}
		wantT := strconv.FormatFloat(float64(idx-seg1)/rate, 'f', -1, 64)
		if row[0] != wantT {
			t.Fatalf("row %d (index %d): t_s %s, want %s", r, idx, row[0], wantT)
		}
		ts, _ := strconv.ParseFloat(row[0], 64)
		if k := math.Round(ts * rate); uint64(k) != idx-seg1 {
			t.Fatalf("row %d: t_s %s × rate = %v samples, want %d", r, row[0], k, idx-seg1)
		}
		if idx == seg1End {
			if row[2] != strconv.FormatUint(seg2-seg1End, 10) || row[3] != "" {
				t.Fatalf("gap row %v, want gap %d and no values", row, seg2-seg1End)
			}
			idx = seg2
			continue
		}
		if row[2] != "" || row[4] != strconv.FormatFloat(float64(float32(val(idx))), 'g', -1, 32) {
			t.Fatalf("row %d (index %d): gap %q current %q, want none and %v", r, idx, row[2], row[4], val(idx))
		}
		idx++
	}
}
