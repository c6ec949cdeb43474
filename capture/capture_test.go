package capture

import (
	"bytes"
	"errors"
	"fmt"
	"hash/crc32"
	"io"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/idlewatt/idlewatt/hostclock"
	"github.com/idlewatt/idlewatt/internal/outfile"
	"github.com/idlewatt/idlewatt/internal/testlong"
	"github.com/idlewatt/idlewatt/meter"
	"github.com/idlewatt/idlewatt/units"
)

// testHeader has two channels: p1.5v with LSBs (so its exact multiples use
// the int16 encoding) and p1.12v without (float32).
func testHeader() Header {
	return Header{
		Created: "2026-01-02T03:04:05Z",
		Meter:   meter.Info{Kind: "hub", Model: "test", Ports: 1},
		Channels: []meter.Channel{
			{Port: 1, Rail: meter.Rail5V, VoltLSB: 0.00125, CurrentLSB: 0.0005},
			{Port: 1, Rail: meter.Rail12V},
		},
		RateHz: 1000,
		Tool:   "idlewatt test",
	}
}

// block makes n samples of channel ch from start; values are LSB multiples
// on channel 0 so they survive the int16 encoding exactly.
func block(ch int, start uint64, n int) *meter.Block {
	b := &meter.Block{Channel: ch, Start: start, V: make([]units.Volts, n), I: make([]units.Amps, n)}
	for k := range n {
		x := start + uint64(k)
		if ch == 0 {
			b.V[k] = units.Volts(float32(float64(4000+x%7) * float64(float32(0.00125))))
			b.I[k] = units.Amps(float32(float64(int(x%900)-100) * float64(float32(0.0005))))
		} else {
			b.V[k] = units.Volts(float32(12 + 0.001*float64(x%13)))
			b.I[k] = units.Amps(float32(0.1 + 1e-5*float64(x)))
		}
	}
	return b
}

// item is a deep copy of a Record, comparable with reflect.DeepEqual.
type item struct {
	Kind    Kind
	Block   meter.Block
	Gap     meter.Gap
	Mark    meter.MarkEcho
	Event   meter.Event
	IO      []IOEvent
	State   StateEvent
	Stats   meter.Stats
	Summary Summary
}

func copyRecord(r Record) item {
	it := item{Kind: r.Kind, Gap: r.Gap, Mark: r.Mark, Event: r.Event, State: r.State, Stats: r.Stats}
	if r.Block != nil {
		it.Block = meter.Block{Channel: r.Block.Channel, Start: r.Block.Start,
			V: append([]units.Volts(nil), r.Block.V...), I: append([]units.Amps(nil), r.Block.I...)}
	}
	if r.Summary != nil {
		s := *r.Summary
		s.MinW, s.MaxW, s.MeanW = append([]float32(nil), s.MinW...), append([]float32(nil), s.MaxW...), append([]float32(nil), s.MeanW...)
		s.StdW, s.Count = append([]float32(nil), s.StdW...), append([]uint32(nil), s.Count...)
		it.Summary = s
	}
	if r.IO != nil {
		it.IO = append([]IOEvent(nil), r.IO...)
	}
	return it
}

// readAll reads every record and returns the final error (nil after a clean
// end chunk).
func readAll(r *Reader) ([]item, error) {
	var out []item
	for {
		rec, err := r.Next()
		if err == io.EOF {
			return out, nil
		}
		if err != nil {
			return out, err
		}
		out = append(out, copyRecord(rec))
	}
}

func isPrefix(got, want []item) bool {
	return len(got) <= len(want) && (len(got) == 0 || reflect.DeepEqual(got, want[:len(got)]))
}

func readBytes(b []byte) ([]item, error) {
	r, err := NewReader(bytes.NewReader(b))
	if err != nil {
		return nil, err
	}
	return readAll(r)
}

// writeEverything writes one record of every kind, deterministically, in
// the current format.
func writeEverything(t testing.TB, out io.Writer) { t.Helper(); writeEverythingV(t, out, VersionMajor) }

func writeEverythingV(t testing.TB, out io.Writer, ver int) {
	t.Helper()
	w, err := NewWriter(out, testHeader(), Options{FlushEvery: time.Hour, SummaryPer: 4, Version: ver})
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
	must(w.Samples(block(0, 0, 6)))
	must(w.Samples(block(1, 0, 6)))
	must(w.Gap(meter.Gap{Channel: -1, Start: 6, Count: 3, Reason: "crc"}))
	must(w.Samples(block(0, 9, 3)))
	must(w.Mark(meter.MarkEcho{ID: 7, HostSent: 100, HostRecv: 250, MeterIndex: 9, Synthetic: true}))
	must(w.Event(meter.Event{Kind: meter.EventDevSlp, Port: 1, Index: 10, Value: 1, HostRecv: 300}))
	must(w.IO(IOEvent{Port: 1, Op: OpWrite, Offset: 4096, Size: 512, Issue: 400, Complete: 500},
		IOEvent{Port: 1, Op: OpRead, Offset: -1, Size: 4096, Issue: 450, Complete: 600, Err: true}))
	must(w.State(StateEvent{Host: 700, Port: 1, Kind: StatePhase, Value: "idle"}))
	must(w.Stats(meter.Stats{Frames: 1, CRCErrors: 2, Resyncs: 3, BytesDiscarded: 4, SamplesLost: 5}))
	must(w.Close())
}

// TestRoundTripEveryKind pins format 1's record sequence (format 2 differs
// only in its summaries: TestLevels).
func TestRoundTripEveryKind(t *testing.T) {
	var buf bytes.Buffer
	writeEverythingV(t, &buf, 1)
	r, err := NewReader(bytes.NewReader(buf.Bytes()))
	if err != nil {
		t.Fatal(err)
	}
	if h := r.Header(); !reflect.DeepEqual(h, testHeader()) {
		t.Errorf("header = %+v, want %+v", h, testHeader())
	}
	got, err := readAll(r)
	if err != nil {
		t.Fatal(err)
	}
	if !r.Complete() {
		t.Error("Complete() = false after the end chunk")
	}
	b0, b1, b9 := block(0, 0, 6), block(1, 0, 6), block(0, 9, 3)
	want := []item{
		{Kind: KindSamples, Block: *b0},
		{Kind: KindSamples, Block: *b1},
		{Kind: KindGap, Gap: meter.Gap{Channel: -1, Start: 6, Count: 3, Reason: "crc"}},
		{Kind: KindMark, Mark: meter.MarkEcho{ID: 7, HostSent: 100, HostRecv: 250, MeterIndex: 9, Synthetic: true}},
		{Kind: KindEvent, Event: meter.Event{Kind: meter.EventDevSlp, Port: 1, Index: 10, Value: 1, HostRecv: 300}},
		// The I/O batch written before the state event precedes it: State
		// closes the pending batch (a reader in file order sees a probe
		// read before the note made after it).
		{Kind: KindIO, IO: []IOEvent{
			{Port: 1, Op: OpWrite, Offset: 4096, Size: 512, Issue: 400, Complete: 500},
			{Port: 1, Op: OpRead, Offset: -1, Size: 4096, Issue: 450, Complete: 600, Err: true}}},
		{Kind: KindState, State: StateEvent{Host: 700, Port: 1, Kind: StatePhase, Value: "idle"}},
		{Kind: KindStats, Stats: meter.Stats{Frames: 1, CRCErrors: 2, Resyncs: 3, BytesDiscarded: 4, SamplesLost: 5}},
		{Kind: KindSamples, Block: *b9},
		{Kind: KindSummary, Summary: summaryOf(0, b0, b9)},
		{Kind: KindSummary, Summary: summaryOf(1, b1)},
	}
	if len(got) != len(want) {
		t.Fatalf("%d records, want %d:\n%+v", len(got), len(want), got)
	}
	for k := range want {
		if !reflect.DeepEqual(got[k], want[k]) {
			t.Errorf("record %d:\n got %+v\nwant %+v", k, got[k], want[k])
		}
	}
	if _, err := r.Next(); err != io.EOF {
		t.Errorf("Next after end = %v, want io.EOF", err)
	}
}

// summaryOf computes, the slow obvious way, the summary points (Per 4) of
// blocks that form one contiguous run of windows.
func summaryOf(ch int, bs ...*meter.Block) Summary {
	type acc struct {
		min, max float32
		sum      float64
		n        int
	}
	wins := map[uint64]*acc{}
	var first, last uint64 = 1 << 63, 0
	for _, b := range bs {
		for k := range b.V {
			p := float32(b.V[k]) * float32(b.I[k])
			w := (b.Start + uint64(k)) / 4
			first, last = min(first, w), max(last, w)
			a := wins[w]
			if a == nil {
				a = &acc{min: p, max: p}
				wins[w] = a
			}
			a.min, a.max, a.sum, a.n = min(a.min, p), max(a.max, p), a.sum+float64(p), a.n+1
		}
	}
	s := Summary{Channel: ch, Start: first * 4, Per: 4}
	for w := first; w <= last; w++ {
		a := wins[w]
		s.MinW, s.MaxW, s.MeanW = append(s.MinW, a.min), append(s.MaxW, a.max), append(s.MeanW, float32(a.sum/float64(a.n)))
	}
	return s
}

func TestCompactEncodingIsSmallerAndExact(t *testing.T) {
	size := func(h Header, opt Options) (int, []item) {
		var buf bytes.Buffer
		opt.FlushEvery = time.Hour
		w, err := NewWriter(&buf, h, opt)
		if err != nil {
			t.Fatal(err)
		}
		if err := w.Samples(block(0, 0, 10000)); err != nil {
			t.Fatal(err)
		}
		if err := w.Close(); err != nil {
			t.Fatal(err)
		}
		items, err := readBytes(buf.Bytes())
		if err != nil {
			t.Fatal(err)
		}
		return buf.Len(), items
	}
	nCompact, compact := size(testHeader(), Options{})
	nFloat, float := size(testHeader(), Options{Float32Only: true})
	if nCompact > nFloat*6/10 {
		t.Errorf("compact capture %d bytes, float32 %d: expected about half", nCompact, nFloat)
	}
	if !reflect.DeepEqual(compact, float) {
		t.Error("int16 and float32 encodings read back different records")
	}
}

func TestCreateRefusesToOverwrite(t *testing.T) {
	path := filepath.Join(t.TempDir(), "c.iwcap")
	if err := os.WriteFile(path, []byte("precious"), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := Create(path, testHeader(), Options{}); !errors.Is(err, os.ErrExist) {
		t.Fatalf("Create over an existing file: %v, want ErrExist", err)
	}
	if b, _ := os.ReadFile(path); string(b) != "precious" {
		t.Fatalf("existing file changed to %q", b)
	}
	w, err := Create(path, testHeader(), Options{Overwrite: true})
	if err != nil {
		t.Fatalf("Create with Overwrite: %v", err)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	r, err := Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	if _, err := r.Next(); err != io.EOF || !r.Complete() {
		t.Fatalf("empty capture: Next = %v, Complete = %v", err, r.Complete())
	}
}

func TestWriterRejectsBadInput(t *testing.T) {
	w, err := NewWriter(io.Discard, testHeader(), Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer w.Close()
	if err := w.Samples(&meter.Block{Channel: 2, V: make([]units.Volts, 1), I: make([]units.Amps, 1)}); err == nil {
		t.Error("samples for channel 2 of 2 accepted")
	}
	if err := w.Samples(&meter.Block{Channel: 0, V: make([]units.Volts, 2), I: make([]units.Amps, 1)}); err == nil {
		t.Error("block with 2 voltages and 1 current accepted")
	}
	if err := w.Gap(meter.Gap{Channel: -2}); err == nil {
		t.Error("gap for channel -2 accepted")
	}
	w.Close()
	if err := w.Mark(meter.MarkEcho{}); !errors.Is(err, ErrClosed) {
		t.Errorf("Mark after Close: %v, want ErrClosed", err)
	}
}

// TestConcurrentWriters has a meter goroutine per channel and workload
// goroutines writing I/O and state events at once; run it with -race.
func TestConcurrentWriters(t *testing.T) {
	var buf syncBuffer
	w, err := NewWriter(&buf, testHeader(), Options{FlushEvery: time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	const blocks, per, workers, ios = 200, 50, 4, 300
	var wg sync.WaitGroup
	for ch := range 2 {
		wg.Go(func() {
			for k := range blocks {
				if err := w.Samples(block(ch, uint64(k*per), per)); err != nil {
					t.Error(err)
					return
				}
			}
		})
	}
	for g := range workers {
		wg.Go(func() {
			for k := range ios {
				if err := w.IO(IOEvent{Port: g, Op: OpRead, Offset: int64(k)}); err != nil {
					t.Error(err)
					return
				}
				if k%100 == 0 {
					w.State(StateEvent{Port: g, Kind: StateNote, Value: fmt.Sprint(k)})
					w.Flush()
				}
			}
		})
	}
	wg.Wait()
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	items, err := readBytes(buf.Bytes())
	if err != nil {
		t.Fatal(err)
	}
	next := [2]uint64{}
	lastIO := map[int]int64{}
	states := 0
	for _, it := range items {
		switch it.Kind {
		case KindSamples:
			b := it.Block
			if b.Start != next[b.Channel] {
				t.Fatalf("channel %d: block starts at %d, want %d", b.Channel, b.Start, next[b.Channel])
			}
			if want := block(b.Channel, b.Start, b.Len()); !reflect.DeepEqual(b, *want) {
				t.Fatalf("channel %d block at %d differs", b.Channel, b.Start)
			}
			next[b.Channel] += uint64(b.Len())
		case KindIO:
			for _, e := range it.IO {
				if prev, ok := lastIO[e.Port]; ok && e.Offset != prev+1 {
					t.Fatalf("worker %d: I/O %d after %d", e.Port, e.Offset, prev)
				}
				lastIO[e.Port] = e.Offset
			}
		case KindState:
			states++
		}
	}
	if next != [2]uint64{blocks * per, blocks * per} {
		t.Errorf("samples read back %v, want %d per channel", next, blocks*per)
	}
	for g := range workers {
		if lastIO[g] != ios-1 {
			t.Errorf("worker %d: last I/O %d, want %d", g, lastIO[g], ios-1)
		}
	}
	if states != workers*ios/100 {
		t.Errorf("%d state events, want %d", states, workers*ios/100)
	}
}

type syncBuffer struct {
	mu sync.Mutex
	bytes.Buffer
}

func (b *syncBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.Buffer.Write(p)
}

func TestSamplesDoesNotAllocate(t *testing.T) {
	w, err := NewWriter(io.Discard, testHeader(), Options{FlushEvery: time.Hour})
	if err != nil {
		t.Fatal(err)
	}
	defer w.Close()
	b0, b1 := block(0, 0, 100), block(1, 0, 100) // int16 and float32 encodings
	feed := func() {
		for _, b := range []*meter.Block{b0, b1} {
			if err := w.Samples(b); err != nil {
				t.Fatal(err)
			}
			b.Start += 100
		}
	}
	for range 50000 { // grow buffers through several runs and flushes
		feed()
	}
	if n := testing.AllocsPerRun(5000, feed); n != 0 {
		t.Errorf("Samples allocates %.2f times per call in steady state", n)
	}
}

func TestSummaryBreaksAtGaps(t *testing.T) {
	var buf bytes.Buffer
	w, err := NewWriter(&buf, testHeader(), Options{FlushEvery: time.Hour, SummaryPer: 10, Version: 1})
	if err != nil {
		t.Fatal(err)
	}
	w.Samples(block(1, 5, 20))  // windows 0 (partial), 1, 2 (partial)
	w.Samples(block(1, 100, 5)) // window 10: not contiguous
	w.Close()
	items, err := readBytes(buf.Bytes())
	if err != nil {
		t.Fatal(err)
	}
	var sums []Summary
	for _, it := range items {
		if it.Kind == KindSummary {
			sums = append(sums, it.Summary)
		}
	}
	want := []Summary{summaryOfPer(10, block(1, 5, 20)), summaryOfPer(10, block(1, 100, 5))}
	if !reflect.DeepEqual(sums, want) {
		t.Fatalf("summaries\n got %+v\nwant %+v", sums, want)
	}
}

func summaryOfPer(per uint64, b *meter.Block) Summary {
	s := Summary{Channel: b.Channel, Start: b.Start / per * per, Per: uint32(per)}
	for w := b.Start / per; w <= (b.Start+uint64(b.Len())-1)/per; w++ {
		var mn, mx float32
		var sum float64
		n := 0
		for k := range b.V {
			if (b.Start+uint64(k))/per != w {
				continue
			}
			p := float32(b.V[k]) * float32(b.I[k])
			if n == 0 {
				mn, mx = p, p
			}
			mn, mx, sum, n = min(mn, p), max(mx, p), sum+float64(p), n+1
		}
		s.MinW, s.MaxW, s.MeanW = append(s.MinW, mn), append(s.MaxW, mx), append(s.MeanW, float32(sum/float64(n)))
	}
	return s
}

func TestSkipSamples(t *testing.T) {
	path := filepath.Join(t.TempDir(), "c.iwcap")
	f, _ := os.Create(path)
	writeEverything(t, f)
	f.Close()
	full, _ := readFile(t, path, false)
	skipped, err := readFile(t, path, true)
	if err != nil {
		t.Fatal(err)
	}
	var want []item
	for _, it := range full {
		if it.Kind != KindSamples {
			want = append(want, it)
		}
	}
	if !reflect.DeepEqual(skipped, want) {
		t.Fatalf("SkipSamples read\n%+v\nwant\n%+v", skipped, want)
	}
	// A cut inside a skipped chunk is still reported.
	b, _ := os.ReadFile(path)
	os.WriteFile(path, b[:preambleLen+300], 0o644)
	if _, err := readFile(t, path, true); !errors.Is(err, ErrTruncated) {
		t.Fatalf("cut capture with SkipSamples: %v, want ErrTruncated", err)
	}
}

func readFile(t *testing.T, path string, skip bool) ([]item, error) {
	t.Helper()
	r, err := Open(path)
	if err != nil {
		return nil, err
	}
	defer r.Close()
	r.SkipSamples(skip)
	return readAll(r)
}

// TestCrashKeepsFlushedData copies the file of a live writer, as kill -9 or
// a power cut would leave it, and reads the copy.
func TestCrashKeepsFlushedData(t *testing.T) {
	path := filepath.Join(t.TempDir(), "c.iwcap")
	w, err := Create(path, testHeader(), Options{FlushEvery: time.Hour})
	if err != nil {
		t.Fatal(err)
	}
	defer w.Close()
	w.Samples(block(1, 0, 100))
	w.Mark(meter.MarkEcho{ID: 1})
	if err := w.Flush(); err != nil {
		t.Fatal(err)
	}
	w.Samples(block(1, 100, 100)) // buffered, never flushed: lost in the crash
	crashed, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	items, err := readBytes(crashed)
	var de *DamageError
	if !errors.As(err, &de) || !de.Cut || !errors.Is(err, ErrTruncated) || errors.Is(err, ErrCorrupt) {
		t.Fatalf("crashed capture: %v, want a cut (ErrTruncated, not ErrCorrupt)", err)
	}
	if de.Offset != int64(len(crashed)) {
		t.Errorf("cut reported at byte %d, file has %d", de.Offset, len(crashed))
	}
	// Runs are encoded at flush time, so the mark precedes the samples.
	if len(items) != 2 || items[0].Kind != KindMark || items[1].Kind != KindSamples || items[1].Block.Len() != 100 {
		t.Fatalf("crashed capture read back %d records: %+v", len(items), items)
	}
	// A crash in the middle of a write leaves part of a chunk.
	items2, err := readBytes(append(crashed, 'I', 'W', chunkSamples, 1, 0xff))
	if !errors.Is(err, ErrTruncated) || !reflect.DeepEqual(items2, items) {
		t.Fatalf("half-written chunk: %v, %d records, want ErrTruncated and %d", err, len(items2), len(items))
	}
}

// fullDisk accepts limit bytes, then fails like a full disk.
type fullDisk struct {
	bytes.Buffer
	limit int
}

func (d *fullDisk) Write(p []byte) (int, error) {
	room := d.limit - d.Len()
	if len(p) <= room {
		return d.Buffer.Write(p)
	}
	d.Buffer.Write(p[:max(room, 0)])
	return max(room, 0), &os.PathError{Op: "write", Path: "disk", Err: syscall.ENOSPC}
}

func TestFullDisk(t *testing.T) {
	d := &fullDisk{limit: 20000}
	w, err := NewWriter(d, testHeader(), Options{FlushEvery: time.Hour})
	if err != nil {
		t.Fatal(err)
	}
	var werr error
	var flushed uint64 // samples durably written before the failure
	for k := uint64(0); werr == nil && k < 1000; k++ {
		if werr = w.Samples(block(1, k*100, 100)); werr == nil {
			if werr = w.Flush(); werr == nil {
				flushed = (k + 1) * 100
			}
		}
	}
	if !errors.Is(werr, ErrDiskFull) || !errors.Is(werr, syscall.ENOSPC) {
		t.Fatalf("writing to a full disk: %v, want ErrDiskFull and ENOSPC", werr)
	}
	if err := w.Samples(block(1, 0, 1)); !errors.Is(err, ErrDiskFull) {
		t.Errorf("after the failure Samples returns %v, want the disk-full error again", err)
	}
	if err := w.Close(); !errors.Is(err, ErrDiskFull) {
		t.Errorf("Close after disk full: %v", err)
	}
	items, err := readBytes(d.Bytes())
	if !errors.Is(err, ErrTruncated) {
		t.Fatalf("reading a capture cut by a full disk: %v, want ErrTruncated", err)
	}
	var got uint64
	for _, it := range items {
		if it.Kind == KindSamples {
			got += uint64(it.Block.Len())
		}
	}
	if got != flushed {
		t.Errorf("read back %d samples, %d were flushed before the disk filled", got, flushed)
	}
}

// TestFullDiskDevice uses /dev/full, where every write fails with ENOSPC.
func TestFullDiskDevice(t *testing.T) {
	f, err := os.OpenFile("/dev/full", os.O_WRONLY, 0)
	if err != nil {
		t.Skip("no /dev/full:", err)
	}
	defer f.Close()
	_, err = NewWriter(f, testHeader(), Options{})
	if !errors.Is(err, ErrDiskFull) {
		t.Fatalf("NewWriter on /dev/full: %v, want ErrDiskFull", err)
	}
}

// TestTruncatedAtEveryOffset reads every prefix of a small capture.
func TestTruncatedAtEveryOffset(t *testing.T) {
	var buf bytes.Buffer
	writeEverything(t, &buf)
	all := buf.Bytes()
	want, err := readBytes(all)
	if err != nil {
		t.Fatal(err)
	}
	for n := range len(all) {
		got, err := readBytes(all[:n])
		if !errors.Is(err, ErrTruncated) {
			t.Fatalf("prefix of %d bytes: error %v, want ErrTruncated", n, err)
		}
		if errors.Is(err, ErrCorrupt) {
			t.Fatalf("prefix of %d bytes: %v reported as corruption, not a cut", n, err)
		}
		if !isPrefix(got, want) {
			t.Fatalf("prefix of %d bytes: records are not a prefix of the full capture", n)
		}
	}
}

// TestBitFlipsDetected flips every bit of a small capture. Only the
// preamble's minor-version and reserved bytes (10–15) are unprotected. Every
// other flip is detected — refused at open (preamble, header chunk) or
// recorded in the Account — and costs at most the one chunk it hit: the
// records read are those of the intact capture with at most one missing,
// plus the "damaged" gaps the reader makes up for the hole.
//
// Here one bit of every byte is flipped (bit k of byte k mod 8, so every bit
// position and every field is hit); TestBitFlipsDetectedLong
// (IDLEWATT_LONG=1) flips every bit, eight times the work.
func TestBitFlipsDetected(t *testing.T) { bitFlipsDetected(t, false) }

func TestBitFlipsDetectedLong(t *testing.T) {
	testlong.Skip(t)
	bitFlipsDetected(t, true)
}

func bitFlipsDetected(t *testing.T, everyBit bool) {
	var buf bytes.Buffer
	writeEverything(t, &buf)
	all := buf.Bytes()
	want, _ := readBytes(all)
	b := make([]byte, len(all))
	for i := range len(all) * 8 {
		if off := i / 8; off >= 10 && off < preambleLen {
			continue
		}
		if !everyBit && i%8 != (i/8)%8 {
			continue
		}
		copy(b, all)
		b[i/8] ^= 1 << (i % 8)
		r, err := NewReader(bytes.NewReader(b))
		if err != nil {
			if !errors.Is(err, ErrTruncated) && !errors.Is(err, ErrNotCapture) && !errors.Is(err, ErrVersion) {
				t.Fatalf("flip at byte %d: unexpected error %v", i/8, err)
			}
			continue
		}
		got, err := readAll(r)
		acc := r.Account()
		if err == nil && acc.DamageRegions == 0 && len(acc.Corrected) == 0 {
			t.Fatalf("flip of bit %d at byte %d not detected", i%8, i/8)
		}
		if err != nil && !errors.Is(err, ErrTruncated) {
			t.Fatalf("flip at byte %d: unexpected error %v", i/8, err)
		}
		var kept []item
		for _, it := range got {
			if it.Kind == KindGap && it.Gap.Reason == GapDamaged {
				continue
			}
			kept = append(kept, it)
		}
		if missing, ok := subsequence(kept, want); !ok || missing > 1 {
			t.Fatalf("flip at byte %d: %d records missing (ok %v); want at most the damaged chunk's one", i/8, missing, ok)
		}
	}
}

// subsequence reports whether got is want with some records left out, and
// how many.
func subsequence(got, want []item) (int, bool) {
	j := 0
	for _, g := range got {
		for j < len(want) && !reflect.DeepEqual(g, want[j]) {
			j++
		}
		if j == len(want) {
			return 0, false
		}
		j++
	}
	return len(want) - len(got), true
}

func TestNotACapture(t *testing.T) {
	for _, in := range []string{"hello world, this is not a capture", "\x89IWX"} {
		if _, err := NewReader(bytes.NewReader([]byte(in))); !errors.Is(err, ErrNotCapture) {
			t.Errorf("%q: %v, want ErrNotCapture", in, err)
		}
	}
	var buf bytes.Buffer
	writeEverything(t, &buf)
	b := buf.Bytes()
	b[8] = 3 // major version 3
	_, err := NewReader(bytes.NewReader(b))
	if !errors.Is(err, ErrVersion) || !strings.HasPrefix(fmt.Sprint(err), "capture format 3: this idlewatt reads 1 and 2") {
		t.Errorf("major version 3: %v, want ErrVersion saying the rule", err)
	}
	// A reader of format 1 only (an idlewatt before format 2) refuses a
	// format 2 file with the rule's words, and still reads format 1.
	defer func(m int) { readMajor = m }(readMajor)
	readMajor = 1
	buf.Reset()
	writeEverything(t, &buf)
	_, err = NewReader(bytes.NewReader(buf.Bytes()))
	if !errors.Is(err, ErrVersion) || !strings.HasPrefix(fmt.Sprint(err), "capture format 2: this idlewatt reads 1 ") {
		t.Errorf("format 2 read by a format 1 reader: %v", err)
	}
	buf.Reset()
	writeEverythingV(t, &buf, 1)
	if _, err := readBytes(buf.Bytes()); err != nil {
		t.Errorf("format 1 read by a format 1 reader: %v", err)
	}
}

func TestUnknownChunks(t *testing.T) {
	var buf bytes.Buffer
	w, _ := NewWriter(&buf, testHeader(), Options{})
	w.mu.Lock()
	s := w.begin(0x7e, 0) // a future, skippable chunk
	w.pend = append(w.pend, "future"...)
	w.end(s)
	w.mu.Unlock()
	w.Mark(meter.MarkEcho{ID: 3})
	w.mu.Lock()
	s = w.begin(0x7f, flagCritical) // a future chunk old readers must not skip
	w.end(s)
	w.mu.Unlock()
	w.Close()
	items, err := readBytes(buf.Bytes())
	if !errors.Is(err, ErrVersion) {
		t.Fatalf("critical unknown chunk: %v, want ErrVersion", err)
	}
	if len(items) != 1 || items[0].Mark.ID != 3 {
		t.Fatalf("records around unknown chunks: %+v", items)
	}
}

func readCount(r *Reader) (int, error) {
	n := 0
	for {
		rec, err := r.Next()
		if err == io.EOF {
			return n, nil
		}
		if err != nil {
			return n, err
		}
		if rec.Kind == KindSamples {
			n += rec.Block.Len()
		}
	}
}

// TestCRCVariant pins CRC-32C by its published check value.
func TestCRCVariant(t *testing.T) {
	if got := crc32.Checksum([]byte("123456789"), castagnoli); got != 0xE3069283 {
		t.Fatalf("CRC-32C check value 0x%08X, want 0xE3069283", got)
	}
}

func TestRowsMergeChannels(t *testing.T) {
	var buf bytes.Buffer
	w, _ := NewWriter(&buf, testHeader(), Options{FlushEvery: time.Hour})
	w.Samples(block(0, 100, 3)) // 100..102
	w.Samples(block(1, 101, 1)) // 101 only
	w.Flush()
	w.Samples(block(0, 110, 1)) // after a gap of 7 on every channel
	w.Samples(block(1, 110, 1))
	w.Close()
	r, err := NewReader(bytes.NewReader(buf.Bytes()))
	if err != nil {
		t.Fatal(err)
	}
	rows := NewRows(r)
	type got struct {
		idx, gap uint64
		p0, p1   bool
	}
	var all []got
	for {
		row, err := rows.Next()
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		all = append(all, got{row.Index, row.Gap, row.Present[0], row.Present[1]})
		if row.Present[1] && row.V[1] != block(1, row.Index, 1).V[0] {
			t.Errorf("row %d: channel 1 V %v", row.Index, row.V[1])
		}
	}
	want := []got{{100, 0, true, false}, {101, 0, true, true}, {102, 0, true, false}, {103, 7, false, false}, {110, 0, true, true}}
	if !reflect.DeepEqual(all, want) {
		t.Fatalf("rows %+v, want %+v", all, want)
	}
}

// A capture whose name is taken from under the recording (rm, or a
// rename over it by a program that ignores the lock) makes Close fail with
// ErrReplaced: the recording must not claim samples that are no longer
// under its name.
func TestCloseSaysCaptureReplaced(t *testing.T) {
	for _, how := range []string{"removed", "replaced"} {
		t.Run(how, func(t *testing.T) {
			p := filepath.Join(t.TempDir(), "c.iwcap")
			w, err := Create(p, testHeader(), Options{})
			if err != nil {
				t.Fatal(err)
			}
			if err := w.Samples(&meter.Block{Channel: 0, Start: 0, V: []units.Volts{5}, I: []units.Amps{0.1}}); err != nil {
				t.Fatal(err)
			}
			if how == "removed" {
				err = os.Remove(p)
			} else {
				err = os.WriteFile(p+".new", []byte("other"), 0o644)
				if err == nil {
					err = os.Rename(p+".new", p)
				}
			}
			if err != nil {
				t.Fatal(err)
			}
			if err := w.Close(); !errors.Is(err, ErrReplaced) || !strings.Contains(err.Error(), how) {
				t.Fatalf("Close = %v, want ErrReplaced saying it was %s", err, how)
			}
		})
	}
}

// A capture being written is locked: a second Create onto it, with or
// without Overwrite, is refused (outfile.ErrBusy) and the first keeps its
// file; once the first is closed, Overwrite replaces it.
func TestCreateRefusesCaptureBeingWritten(t *testing.T) {
	p := filepath.Join(t.TempDir(), "c.iwcap")
	w, err := Create(p, testHeader(), Options{})
	if err != nil {
		t.Fatal(err)
	}
	for _, ow := range []bool{false, true} {
		if _, err := Create(p, testHeader(), Options{Overwrite: ow}); !errors.Is(err, outfile.ErrBusy) {
			t.Errorf("second Create (overwrite %v): %v, want ErrBusy", ow, err)
		}
	}
	if err := w.Samples(&meter.Block{Channel: 0, Start: 0, V: []units.Volts{5}, I: []units.Amps{0.1}}); err != nil {
		t.Fatal(err)
	}
	if err := w.Close(); err != nil {
		t.Fatalf("the first capture: %v", err)
	}
	w2, err := Create(p, testHeader(), Options{Overwrite: true})
	if err != nil {
		t.Fatalf("after Close: %v", err)
	}
	w2.Close()
}
