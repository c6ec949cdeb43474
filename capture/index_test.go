package capture

import (
	"bytes"
	"errors"
	"hash/crc32"
	"io"
	"os"
	"path/filepath"
	"reflect"
	"testing"
	"time"

	"github.com/idlewatt/idlewatt/hostclock"
	"github.com/idlewatt/idlewatt/meter"
)

// indexedCapture writes a format 2 capture of many flushes with every kind
// of record, small summary windows (levels 2 and 3 are 64 and 1024 samples)
// and index segments of about indexEvery bytes; it returns its path.
func indexedCapture(t testing.TB, flushes int, indexEvery int64) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "c.iwcap")
	w, err := Create(path, testHeader(), Options{FlushEvery: time.Hour, SummaryPer: 4, IndexEvery: indexEvery})
	if err != nil {
		t.Fatal(err)
	}
	w.now = func() hostclock.Time { return 1_000_000_000 }
	must := func(err error) {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
	}
	for f := range flushes {
		at := uint64(f) * 300
		must(w.Samples(block(0, at, 300)))
		if f%7 == 3 {
			must(w.Samples(block(1, at, 100)))
			must(w.Gap(meter.Gap{Channel: 1, Start: at + 100, Count: 200, Reason: "crc"}))
		} else {
			must(w.Samples(block(1, at, 300)))
		}
		h := hostclock.Time(f) * 1000
		must(w.Mark(meter.MarkEcho{ID: uint32(f), HostSent: h, HostRecv: h + 50, MeterIndex: at}))
		if f%5 == 0 {
			must(w.Event(meter.Event{Kind: meter.EventDevSlp, Port: 1, Index: at + 5, Value: int64(f % 2), HostRecv: h}))
			must(w.State(StateEvent{Host: h, Port: 1, Kind: StatePhase, Value: "idle"}))
			must(w.IO(IOEvent{Port: 1, Op: OpRead, Offset: 4096, Size: 512, Issue: h, Complete: h + 10}))
		}
		if f%11 == 0 {
			must(w.Stats(meter.Stats{Frames: uint64(f), CRCErrors: 1}))
		}
		must(w.Flush())
	}
	must(w.Close())
	return path
}

// overviewScan reads path sequentially with SkipSamples and keeps what an
// indexed read hands out: everything but samples and summary levels below
// indexMinLevel. It returns the records, the final error and the account.
func overviewScan(t testing.TB, path string) ([]item, error, Account) {
	t.Helper()
	r, err := Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	r.SkipSamples(true)
	var out []item
	for {
		rec, err := r.Next()
		if err != nil {
			if err == io.EOF {
				err = nil
			}
			return out, err, r.Account()
		}
		if rec.Kind == KindSummary && rec.Summary.Level < indexMinLevel {
			continue
		}
		out = append(out, copyRecord(rec))
	}
}

// indexedRead reads path through its index; useErr is UseIndex's error.
func indexedRead(t testing.TB, path string) (out []item, useErr, err error, acc Account) {
	t.Helper()
	r, err := Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	if useErr = r.UseIndex(); useErr != nil {
		return nil, useErr, nil, Account{}
	}
	for {
		rec, err := r.Next()
		if err != nil {
			if err == io.EOF {
				err = nil
			}
			return out, nil, err, r.Account()
		}
		out = append(out, copyRecord(rec))
	}
}

func countIndexChunks(t testing.TB, b []byte) int {
	n := 0
	for off := int64(preambleLen); off+chunkHdrLen <= int64(len(b)); off += int64(chunkHdrLen + le.Uint32(b[off+4:]) + crcLen) {
		if b[off+2] == chunkIndex {
			n++
		}
	}
	return n
}

func TestIndexMatchesScan(t *testing.T) {
	path := indexedCapture(t, 60, 4<<10)
	b, _ := os.ReadFile(path)
	if n := countIndexChunks(t, b); n < 4 {
		t.Fatalf("%d index chunks, want several segments", n)
	}
	want, werr, wacc := overviewScan(t, path)
	if werr != nil {
		t.Fatal(werr)
	}
	got, uerr, gerr, gacc := indexedRead(t, path)
	if uerr != nil || gerr != nil {
		t.Fatalf("UseIndex %v, Next %v", uerr, gerr)
	}
	levels := map[int]int{}
	for _, it := range got {
		if it.Kind == KindSummary {
			levels[it.Summary.Level]++
		}
	}
	if levels[2] == 0 || levels[3] == 0 || levels[0]+levels[1] != 0 {
		t.Fatalf("summary levels handed out: %v", levels)
	}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("indexed read: %d records, scan %d; first difference at %d", len(got), len(want), firstDiff(got, want))
	}
	if gacc.Read != wacc.Read || !gacc.EndSeen || gacc.Written != wacc.Written {
		t.Fatalf("account: indexed read %d of %d (end %v), scan %d of %d", gacc.Read, gacc.Written, gacc.EndSeen, wacc.Read, wacc.Written)
	}
	// UseIndexOf reads only the kinds asked for (gaps always): the scan's
	// records of those kinds, in the same order.
	for _, k := range []IndexKinds{IndexSummaries, IndexRecords} {
		r, err := Open(path)
		if err != nil {
			t.Fatal(err)
		}
		if err := r.UseIndexOf(k); err != nil {
			t.Fatal(err)
		}
		got, err := readAll(r)
		r.Close()
		var want2 []item
		for _, it := range want {
			if it.Kind == KindGap || (it.Kind == KindSummary) == (k == IndexSummaries) {
				want2 = append(want2, it)
			}
		}
		if err != nil || !reflect.DeepEqual(got, want2) {
			t.Fatalf("UseIndexOf(%d): %d records (%v), want %d", k, len(got), err, len(want2))
		}
	}
}

func firstDiff(a, b []item) int {
	for k := range min(len(a), len(b)) {
		if !reflect.DeepEqual(a[k], b[k]) {
			return k
		}
	}
	return min(len(a), len(b))
}

// TestIndexWithoutOne: format 1, format 2.0 (IndexEvery < 0) and a capture
// cut before its first index have none; UseIndex says so and the Reader
// scans as before.
func TestIndexWithoutOne(t *testing.T) {
	dir := t.TempDir()
	for _, tc := range []struct {
		name string
		opt  Options
	}{{"v1", Options{Version: 1}}, {"v2.0", Options{IndexEvery: -1}}} {
		path := filepath.Join(dir, tc.name)
		w, err := Create(path, testHeader(), tc.opt)
		if err != nil {
			t.Fatal(err)
		}
		w.Samples(block(0, 0, 100))
		w.Mark(meter.MarkEcho{ID: 1, MeterIndex: 3})
		if err := w.Close(); err != nil {
			t.Fatal(err)
		}
		r, _ := Open(path)
		if err := r.UseIndex(); !errors.Is(err, ErrNoIndex) {
			t.Errorf("%s: UseIndex %v, want ErrNoIndex", tc.name, err)
		}
		its, err := readAll(r)
		if err != nil || len(its) < 2 || its[0].Kind != KindMark && its[1].Kind != KindMark {
			t.Errorf("%s: after UseIndex the scan read %d records, %v", tc.name, len(its), err)
		}
		r.Close()
	}
}

// TestIndexCutEverywhere cuts an indexed capture at every chunk boundary
// and inside chunks: an indexed read has no index (a cut before the first
// index chunk) or reads exactly what the scan reads, ending the same way.
func TestIndexCutEverywhere(t *testing.T) {
	path := indexedCapture(t, 25, 2<<10)
	b, _ := os.ReadFile(path)
	cut := filepath.Join(t.TempDir(), "cut.iwcap")
	used := 0
	for off := int64(preambleLen); off+chunkHdrLen <= int64(len(b)); off += int64(chunkHdrLen + le.Uint32(b[off+4:]) + crcLen) {
		for _, at := range []int64{off, off + 7, off + chunkHdrLen + 1} {
			if at > int64(len(b)) {
				continue
			}
			if err := os.WriteFile(cut, b[:at], 0o644); err != nil {
				t.Fatal(err)
			}
			r, err := Open(cut)
			if err != nil {
				continue // a cut inside the header
			}
			r.Close()
			want, werr, wacc := overviewScan(t, cut)
			got, uerr, gerr, gacc := indexedRead(t, cut)
			if errors.Is(uerr, ErrNoIndex) {
				continue
			}
			if uerr != nil {
				t.Fatalf("cut at %d: UseIndex %v", at, uerr)
			}
			used++
			if !reflect.DeepEqual(got, want) || errString(gerr) != errString(werr) || gacc.Read != wacc.Read {
				t.Fatalf("cut at %d: indexed %d records (%v, read %d), scan %d (%v, read %d)", at, len(got), gerr, gacc.Read, len(want), werr, wacc.Read)
			}
		}
	}
	if used < 20 {
		t.Fatalf("the index was used on %d cuts only", used)
	}
}

func errString(err error) string {
	if err == nil {
		return ""
	}
	return err.Error()
}

// TestIndexDamaged: an index chunk with a flipped byte is passed over (the
// one before it serves, and the scan after it accounts the damage); a forged
// index with a valid CRC that lists a wrong chunk, and a listed chunk that
// is itself damaged, make the indexed read fail with ErrIndex — never a
// wrong record.
func TestIndexDamaged(t *testing.T) {
	path := indexedCapture(t, 40, 4<<10)
	b, _ := os.ReadFile(path)
	var idxOffs, markOffs []int64
	for off := int64(preambleLen); off+chunkHdrLen <= int64(len(b)); off += int64(chunkHdrLen + le.Uint32(b[off+4:]) + crcLen) {
		switch b[off+2] {
		case chunkIndex:
			idxOffs = append(idxOffs, off)
		case chunkMark:
			markOffs = append(markOffs, off)
		}
	}
	dir := t.TempDir()
	write := func(name string, c []byte) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, c, 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}

	// 1. The last index chunk's payload garbled (two bytes: not mended).
	c := bytes.Clone(b)
	last := idxOffs[len(idxOffs)-1]
	c[last+chunkHdrLen+3] ^= 0xFF
	c[last+chunkHdrLen+40] ^= 0xFF
	p := write("garbled-last", c)
	want, werr, wacc := overviewScan(t, p)
	got, uerr, gerr, gacc := indexedRead(t, p)
	if uerr != nil || !reflect.DeepEqual(got, want) || errString(gerr) != errString(werr) || gacc.DamageRegions != 1 || wacc.DamageRegions != 1 {
		t.Fatalf("garbled last index: UseIndex %v; indexed %d records (%v, %d damaged), scan %d (%v, %d)", uerr, len(got), gerr, gacc.DamageRegions, len(want), werr, wacc.DamageRegions)
	}

	// 2. A forged entry: the last index's first entry moved by one byte,
	// CRC recomputed.
	c = bytes.Clone(b)
	plen := int64(le.Uint32(c[last+4:]))
	pay := c[last+chunkHdrLen : last+chunkHdrLen+plen]
	nch := int64(le.Uint16(pay[26:]))
	e0 := indexFixed + 8*nch
	le.PutUint64(pay[e0:], le.Uint64(pay[e0:])+1)
	reCRC(c, last)
	_, uerr, gerr, _ = indexedRead(t, write("forged", c))
	if !errors.Is(uerr, ErrIndex) && !errors.Is(gerr, ErrIndex) {
		t.Fatalf("forged entry: UseIndex %v, Next %v; want ErrIndex", uerr, gerr)
	}

	// 3. A forged link: the last index names a previous index that is not one.
	c = bytes.Clone(b)
	pay = c[last+chunkHdrLen : last+chunkHdrLen+plen]
	le.PutUint64(pay, uint64(markOffs[0]))
	reCRC(c, last)
	if _, uerr, _, _ = indexedRead(t, write("forged-link", c)); !errors.Is(uerr, ErrIndex) {
		t.Fatalf("forged link: UseIndex %v, want ErrIndex", uerr)
	}

	// 4. A listed mark damaged: the scan mends or skips it; the indexed read
	// stops with ErrIndex rather than hand out what it cannot check.
	c = bytes.Clone(b)
	c[markOffs[3]+chunkHdrLen+9] ^= 0x0F
	got, uerr, gerr, _ = indexedRead(t, write("mark", c))
	if uerr != nil || !errors.Is(gerr, ErrIndex) {
		t.Fatalf("damaged listed mark: UseIndex %v, Next %v after %d records; want ErrIndex", uerr, gerr, len(got))
	}
}

func reCRC(b []byte, off int64) {
	plen := int64(le.Uint32(b[off+4:]))
	end := off + chunkHdrLen + plen
	le.PutUint32(b[end:], crc32.Checksum(b[off:end], castagnoli))
}

// TestIndexIrregular: samples that do not advance their channel make the
// index unusable (only a scan counts the rejection).
func TestIndexIrregular(t *testing.T) {
	path := filepath.Join(t.TempDir(), "c.iwcap")
	w, err := Create(path, testHeader(), Options{FlushEvery: time.Hour})
	if err != nil {
		t.Fatal(err)
	}
	w.Samples(block(0, 100, 50))
	w.Flush()
	w.Samples(block(0, 0, 50)) // a restart
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	if _, uerr, _, _ := indexedRead(t, path); !errors.Is(uerr, ErrIndex) {
		t.Fatalf("UseIndex %v, want ErrIndex", uerr)
	}
}

// FuzzIndexDecode: decodeIndex never panics, and what it accepts encodes
// back to the same bytes.
func FuzzIndexDecode(f *testing.F) {
	path := indexedCapture(f, 12, 1<<10)
	b, _ := os.ReadFile(path)
	for off := int64(preambleLen); off+chunkHdrLen <= int64(len(b)); off += int64(chunkHdrLen + le.Uint32(b[off+4:]) + crcLen) {
		if b[off+2] == chunkIndex {
			f.Add(uint8(2), b[off+chunkHdrLen:off+chunkHdrLen+int64(le.Uint32(b[off+4:]))])
		}
	}
	f.Add(uint8(0), make([]byte, indexFixed))
	f.Fuzz(func(t *testing.T, nch uint8, p []byte) {
		x, err := decodeIndex(p, int(nch))
		if err != nil {
			return
		}
		if back := appendIndex(nil, &x); !bytes.Equal(back, p) {
			t.Fatalf("re-encoded index differs:\n% x\n% x", back, p)
		}
	})
}

// FuzzIndexedReader: arbitrary bytes after a valid header, read through
// UseIndex, never panic, and an indexed read that ends without ErrIndex
// hands out records in sequence order.
func FuzzIndexedReader(f *testing.F) {
	// A small capture (a few kB: the fuzzer minimises every new input)
	// with three index segments.
	path := filepath.Join(f.TempDir(), "seed.iwcap")
	w, err := Create(path, testHeader(), Options{FlushEvery: time.Hour, SummaryPer: 1, IndexEvery: 300})
	if err != nil {
		f.Fatal(err)
	}
	for k := range 4 {
		at := uint64(k) * 40
		w.Samples(block(0, at, 40))
		w.Samples(block(1, at, 40))
		w.Mark(meter.MarkEcho{ID: uint32(k), HostSent: hostclock.Time(k), HostRecv: hostclock.Time(k) + 5, MeterIndex: at})
		if k == 2 {
			w.Gap(meter.Gap{Channel: -1, Start: at + 40, Count: 10, Reason: "crc"})
		}
		w.Flush()
	}
	if err := w.Close(); err != nil {
		f.Fatal(err)
	}
	b, _ := os.ReadFile(path)
	if countIndexChunks(f, b) < 3 {
		f.Fatalf("seed has %d index chunks", countIndexChunks(f, b))
	}
	f.Add(b)
	f.Add(b[:len(b)/2])
	dir := f.TempDir()
	f.Fuzz(func(t *testing.T, c []byte) {
		p := filepath.Join(dir, "f.iwcap")
		if err := os.WriteFile(p, c, 0o644); err != nil {
			t.Fatal(err)
		}
		r, err := Open(p)
		if err != nil {
			return
		}
		defer r.Close()
		_ = r.UseIndex()
		last := int64(-1)
		for range 100000 {
			rec, err := r.Next()
			if err != nil {
				break
			}
			if rec.Offset < last {
				t.Fatalf("record at byte %d after one at %d", rec.Offset, last)
			}
			last = rec.Offset
		}
	})
}
