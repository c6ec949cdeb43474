package capture

import (
	"bytes"
	"errors"
	"io"
	"os"
	"path/filepath"
	"reflect"
	"testing"
	"time"

	"github.com/idlewatt/idlewatt/hostclock"
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
