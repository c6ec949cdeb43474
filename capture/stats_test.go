package capture

import (
	"bytes"
	"encoding/binary"
	"testing"
	"time"

	"github.com/idlewatt/idlewatt/hostclock"
	"github.com/idlewatt/idlewatt/meter"
)

// TestStatsExtended: the counters added in 1.1 (duplicates, restarts, bad
// lines) travel in a stats-extended chunk after the 1.0 stats chunk, only
// when one is non-zero. The 1.0 chunk is unchanged (a 1.0 reader skips the
// new, non-critical chunk and still has its counters); this reader returns
// both, the second with everything.
func TestStatsExtended(t *testing.T) {
	st := meter.Stats{Frames: 1, CRCErrors: 2, Resyncs: 3, BytesDiscarded: 4, SamplesLost: 5,
		Duplicates: 6, Restarts: 7, BadLines: 8, FirstBadLine: 9, FirstBadByte: 10}
	var buf bytes.Buffer
	w, err := NewWriter(&buf, testHeader(), Options{FlushEvery: time.Hour})
	if err != nil {
		t.Fatal(err)
	}
	w.now = func() hostclock.Time { return 42 }
	if err := w.Stats(meter.Stats{Frames: 1}); err != nil { // clean: one 1.0 chunk
		t.Fatal(err)
	}
	if err := w.Stats(st); err != nil {
		t.Fatal(err)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	items, err := readBytes(buf.Bytes())
	if err != nil {
		t.Fatal(err)
	}
	var got []meter.Stats
	for _, it := range items {
		if it.Kind == KindStats {
			got = append(got, it.Stats)
		}
	}
	old := meter.Stats{Frames: 1, CRCErrors: 2, Resyncs: 3, BytesDiscarded: 4, SamplesLost: 5}
	if len(got) != 3 || got[0] != (meter.Stats{Frames: 1}) || got[1] != old || got[2] != st {
		t.Fatalf("stats records %+v\nwant {Frames:1}, %+v, %+v", got, old, st)
	}
	// Exactly one stats-extended chunk, non-critical, 8 + 12 × 8 bytes.
	n := 0
	b := buf.Bytes()
	for off := preambleLen; off+chunkHdrLen <= len(b); {
		plen := int(binary.LittleEndian.Uint32(b[off+4:]))
		if b[off+2] == chunkStatsX {
			n++
			if b[off+3]&flagCritical != 0 || plen != 8+8*StatsCountersRetx {
				t.Fatalf("stats-extended chunk: flags %#x, %d bytes", b[off+3], plen)
			}
		}
		off += chunkHdrLen + plen + crcLen
	}
	if n != 1 {
		t.Fatalf("%d stats-extended chunks, want 1", n)
	}
}

// TestStatsExtendedLonger: a later writer may append counters; this reader
// takes the ones it knows. A payload that is short or not whole u64s is an
// invalid chunk, skipped and counted.
func TestStatsExtendedLonger(t *testing.T) {
	for _, c := range []struct {
		extra int
		ok    bool
	}{{8, true}, {16, true}, {-8, false}, {3, false}} {
		var buf bytes.Buffer
		w, _ := NewWriter(&buf, testHeader(), Options{})
		w.mu.Lock()
		s := w.begin(chunkStatsX, 0)
		p := make([]byte, statsXMin+c.extra)
		for i := 8; i+8 <= len(p); i += 8 {
			binary.LittleEndian.PutUint64(p[i:], uint64(i/8))
		}
		w.pend = append(w.pend, p...)
		w.end(s)
		w.mu.Unlock()
		w.Close()
		r, _ := NewReader(bytes.NewReader(buf.Bytes()))
		items, err := readAll(r)
		if !c.ok {
			// Intact (the CRC matches) but impossible: skipped and counted.
			if a := r.Account(); len(items) != 0 || a.Invalid != 1 {
				t.Errorf("%d-byte stats-extended payload: %d records, %d invalid chunks", len(p), len(items), a.Invalid)
			}
			continue
		}
		if err != nil || len(items) != 1 || items[0].Stats.FirstBadByte != 10 || items[0].Stats.Frames != 1 {
			t.Errorf("%d-byte payload: %+v, %v", len(p), items, err)
		}
	}
}

// TestStatsRecoveredRefused: retransmission's counters (hub protocol v2)
// are stored, read back, and known apart from an older capture's absence
// of them: a capture of a retransmitting link always carries them (0 when
// nothing was recovered), an older 88-byte stats-extended chunk reads
// with StatsCounters 10 (unknown), a capture of another meter without
// them has the 1.0 chunk only.
func TestStatsRecoveredRefused(t *testing.T) {
	last := func(h Header, write func(w *Writer)) Record {
		t.Helper()
		var buf bytes.Buffer
		w, err := NewWriter(&buf, h, Options{})
		if err != nil {
			t.Fatal(err)
		}
		write(w)
		if err := w.Close(); err != nil {
			t.Fatal(err)
		}
		r, err := NewReader(bytes.NewReader(buf.Bytes()))
		if err != nil {
			t.Fatal(err)
		}
		var rec Record
		for {
			it, err := r.Next()
			if err != nil {
				break
			}
			if it.Kind == KindStats {
				rec = it
			}
		}
		return rec
	}
	v2 := testHeader()
	v2.Meter.ProtocolVersion = 2
	if r := last(v2, func(w *Writer) { w.Stats(meter.Stats{Frames: 9}) }); r.StatsCounters != StatsCountersRetx || r.Stats.Frames != 9 || r.Stats.Recovered != 0 {
		t.Errorf("clean v2 link: %d counters, %+v; want %d, recovered 0 known", r.StatsCounters, r.Stats, StatsCountersRetx)
	}
	if r := last(v2, func(w *Writer) { w.Stats(meter.Stats{Frames: 9, Recovered: 1234, Refused: 5}) }); r.Stats.Recovered != 1234 || r.Stats.Refused != 5 {
		t.Errorf("v2 link: read back %+v, want recovered 1234, refused 5", r.Stats)
	}
	if r := last(testHeader(), func(w *Writer) { w.Stats(meter.Stats{Frames: 9}) }); r.StatsCounters != StatsCountersV10 {
		t.Errorf("clean link without retransmission: %d counters, want %d", r.StatsCounters, StatsCountersV10)
	}
	// As 1.1 wrote it: host and 10 counters.
	r := last(testHeader(), func(w *Writer) {
		w.mu.Lock()
		s := w.begin(chunkStatsX, 0)
		p := make([]byte, statsXMin)
		binary.LittleEndian.PutUint64(p[8+8*5:], 3) // duplicates
		w.pend = append(w.pend, p...)
		w.end(s)
		w.mu.Unlock()
	})
	if r.StatsCounters != StatsCountersV11 || r.Stats.Duplicates != 3 {
		t.Errorf("1.1 stats-extended chunk: %d counters, %+v; want %d, duplicates 3", r.StatsCounters, r.Stats, StatsCountersV11)
	}
}
