package capture

// Time integrity (issue 8 item 6): sample indices are 64-bit everywhere. A
// meter counting at 10 kS/s passes 2³² after about 5 days; a 32-bit counter
// (Joulescope's sample id) wraps every ~36 minutes at 2 MS/s. Instead of
// recording that long, these tests write a synthetic stream whose indices
// start just below 2³², cross it, and jump across 2³³ with a gap longer
// than 2³² samples, then read it back exactly.

import (
	"bytes"
	"errors"
	"io"
	"testing"

	"github.com/idlewatt/idlewatt/meter"
	"github.com/idlewatt/idlewatt/units"
)

const (
	p32 = uint64(1) << 32
	p33 = uint64(1) << 33
)

// wrapStream is the synthetic timeline: samples [p32−1000, p32+500), then
// every channel missing up to p33+2²⁰ (a gap of more than 2³² samples
// that crosses 2³³), then samples [p33+2²⁰, p33+2²⁰+700).
var wrapStream = struct {
	seg1, seg1End, gapCount, seg2, seg2End uint64
}{
	seg1: p32 - 1000, seg1End: p32 + 500,
	gapCount: p33 + 1<<20 - (p32 + 500),
	seg2:     p33 + 1<<20, seg2End: p33 + 1<<20 + 700,
}

// wrapValue gives each sample of each channel a value derived from its
// index, so a read-back sample shows which index it really is. Channel 0 is
// stored float32 (no LSBs), channel 1 as int16 counts.
func wrapValue(ch int, idx uint64) (units.Volts, units.Amps) {
	if ch == 0 {
		return units.Volts(5 + float32(idx%997)*1e-3), units.Amps(float32(idx%1009) * 1e-4)
	}
	v := float32(float64(int16(idx%4001)) * 1.25e-3)
	i := float32(float64(int16(idx%3001)-1500) * 1e-4)
	return units.Volts(v), units.Amps(i)
}

func wrapHeader() Header {
	return Header{RateHz: 10000, Channels: []meter.Channel{
		{Port: 1, Rail: meter.Rail5V},
		{Port: 1, Rail: meter.Rail12V, VoltLSB: 1.25e-3, CurrentLSB: 1e-4},
	}}
}

// writeWrapCapture writes wrapStream in blocks of 333 samples (so block
// boundaries do not line up with 2³²), with a summary window of 1000.
func writeWrapCapture(t *testing.T) []byte {
	t.Helper()
	var buf bytes.Buffer
	w, err := NewWriter(&buf, wrapHeader(), Options{SummaryPer: 1000, Version: 1})
	if err != nil {
		t.Fatal(err)
	}
	put := func(from, to uint64) {
		for s := from; s < to; s += 333 {
			e := min(s+333, to)
			for ch := range 2 {
				b := &meter.Block{Channel: ch, Start: s}
				for idx := s; idx < e; idx++ {
					v, i := wrapValue(ch, idx)
					b.V, b.I = append(b.V, v), append(b.I, i)
				}
				if err := w.Samples(b); err != nil {
					t.Fatal(err)
				}
			}
		}
	}
	ws := wrapStream
	put(ws.seg1, ws.seg1End)
	if err := w.Gap(meter.Gap{Channel: -1, Start: ws.seg1End, Count: ws.gapCount, Reason: "disconnect"}); err != nil {
		t.Fatal(err)
	}
	put(ws.seg2, ws.seg2End)
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

func TestIndicesBeyond2To32KeepTheirPlace(t *testing.T) {
	data := writeWrapCapture(t)
	r, err := NewReader(bytes.NewReader(data))
	if err != nil {
		t.Fatal(err)
	}
	ws := wrapStream
	next := []uint64{ws.seg1, ws.seg1}
	var gaps []meter.Gap
	var sums []Summary
	for {
		rec, err := r.Next()
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		switch rec.Kind {
		case KindSamples:
			b := rec.Block
			if next[b.Channel] == ws.seg1End {
				next[b.Channel] = ws.seg2
			}
			if b.Start != next[b.Channel] {
				t.Fatalf("channel %d: block starts at %d, want %d", b.Channel, b.Start, next[b.Channel])
			}
			for k := range b.V {
				idx := b.Start + uint64(k)
				if v, i := wrapValue(b.Channel, idx); b.V[k] != v || b.I[k] != i {
					t.Fatalf("channel %d index %d: read %v V %v A, want %v V %v A", b.Channel, idx, b.V[k], b.I[k], v, i)
				}
			}
			next[b.Channel] += uint64(b.Len())
		case KindGap:
			gaps = append(gaps, rec.Gap)
		case KindSummary:
			s := *rec.Summary
			sums = append(sums, s)
		}
	}
	for ch, n := range next {
		if n != ws.seg2End {
			t.Errorf("channel %d ends at %d, want %d", ch, n, ws.seg2End)
		}
	}
	want := meter.Gap{Channel: -1, Start: ws.seg1End, Count: ws.gapCount, Reason: "disconnect"}
	if len(gaps) != 1 || gaps[0] != want {
		t.Errorf("gaps %+v, want [%+v]", gaps, want)
	}
	// Summary windows sit at multiples of 1000 in index space, beyond 2³²
	// too, and cover exactly the samples present.
	covered := map[int]uint64{}
	for _, s := range sums {
		if s.Start%uint64(s.Per) != 0 {
			t.Errorf("summary window start %d is not a multiple of %d", s.Start, s.Per)
		}
		if s.Start+uint64(len(s.MeanW))*uint64(s.Per) <= ws.seg1 || s.Start > ws.seg2End {
			t.Errorf("summary [%d, +%d×%d) lies outside the data", s.Start, len(s.MeanW), s.Per)
		}
		covered[s.Channel] += uint64(len(s.MeanW))
	}
	// seg1 touches windows ⌊(p32−1000)/1000⌋ … ⌊(p32+499)/1000⌋; seg2 likewise.
	w1 := (ws.seg1End-1)/1000 - ws.seg1/1000 + 1
	w2 := (ws.seg2End-1)/1000 - ws.seg2/1000 + 1
	for ch := range 2 {
		if covered[ch] != w1+w2 {
			t.Errorf("channel %d: %d summary windows, want %d", ch, covered[ch], w1+w2)
		}
	}
}

func TestRowsAcross2To32(t *testing.T) {
	data := writeWrapCapture(t)
	r, err := NewReader(bytes.NewReader(data))
	if err != nil {
		t.Fatal(err)
	}
	ws := wrapStream
	rows := NewRows(r)
	want := ws.seg1
	sawGap := false
	for {
		row, err := rows.Next()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		if row.Index != want {
			t.Fatalf("row index %d, want %d", row.Index, want)
		}
		if row.Gap > 0 {
			if sawGap || row.Index != ws.seg1End || row.Gap != ws.gapCount {
				t.Fatalf("gap row at %d of %d, want one at %d of %d", row.Index, row.Gap, ws.seg1End, ws.gapCount)
			}
			sawGap = true
			want += row.Gap
			continue
		}
		for ch := range 2 {
			v, i := wrapValue(ch, row.Index)
			if !row.Present[ch] || row.V[ch] != v || row.I[ch] != i {
				t.Fatalf("row %d channel %d: present %v, %v V %v A; want %v V %v A", row.Index, ch, row.Present[ch], row.V[ch], row.I[ch], v, i)
			}
		}
		want++
	}
	if !sawGap || want != ws.seg2End {
		t.Fatalf("rows end at %d (gap seen %v), want %d", want, sawGap, ws.seg2End)
	}
}
