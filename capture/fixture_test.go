package capture

import (
	"bytes"
	"errors"
	"io"
	"os"
	"reflect"
	"testing"
	"time"

	"github.com/idlewatt/idlewatt/hostclock"
	"github.com/idlewatt/idlewatt/internal/testutil"
	"github.com/idlewatt/idlewatt/meter"
	"github.com/idlewatt/idlewatt/units"
)

var update = testutil.Update // -update: rewrite fixtures/capture/tiny.iwcap

const tinyPath = "../fixtures/capture/tiny.iwcap"

// tinyHeader and tinyRecords are the example in docs/capture-format.md
// (§Example); change them together.
func tinyHeader() Header {
	return Header{
		Created: "2026-01-01T00:00:00Z",
		Meter:   meter.Info{Kind: "hub", Model: "demo"},
		Channels: []meter.Channel{
			{Port: 1, Rail: meter.Rail5V, VoltLSB: 0.00125, CurrentLSB: 0.001},
			{Port: 1, Rail: meter.Rail12V},
		},
		RateHz: 1000,
		Tool:   "idlewatt",
	}
}

// The order is the file's: a run of samples is encoded when it is flushed
// or broken (here p1.12v's by its gap, p1.5v's at Close).
func tinyRecords() []item {
	return []item{
		{Kind: KindMark, Mark: meter.MarkEcho{ID: 1, HostSent: 1000, HostRecv: 3000, MeterIndex: 2}},
		{Kind: KindEvent, Event: meter.Event{Kind: meter.EventDevSlp, Port: 1, Index: 3, Value: 1, HostRecv: 4000}},
		{Kind: KindState, State: StateEvent{Host: 5000, Port: 1, Kind: StatePhase, Value: "idle"}},
		{Kind: KindStats, Stats: meter.Stats{Frames: 9, CRCErrors: 1, SamplesLost: 2}},
		{Kind: KindSamples, Block: meter.Block{Channel: 1, Start: 0,
			V: []units.Volts{12, 12}, I: []units.Amps{0.125, 0.125}}},
		{Kind: KindGap, Gap: meter.Gap{Channel: 1, Start: 2, Count: 2, Reason: "crc"}},
		{Kind: KindSamples, Block: meter.Block{Channel: 0, Start: 0,
			V: []units.Volts{5, 5, 5, 5}, I: []units.Amps{0.25, 0.5, 0.25, 0.5}}},
		{Kind: KindSummary, Summary: Summary{Channel: 0, Start: 0, Per: 4,
			MinW: []float32{1.25}, MaxW: []float32{2.5}, MeanW: []float32{1.875}}},
		{Kind: KindSummary, Summary: Summary{Channel: 1, Start: 0, Per: 4,
			MinW: []float32{1.5}, MaxW: []float32{1.5}, MeanW: []float32{1.5}}},
		{Kind: KindIO, IO: []IOEvent{{Port: 1, Op: OpWrite, Offset: 8192, Size: 4096, Issue: 6000, Complete: 7000}}},
	}
}

// writeTiny writes the example capture through the public API.
func writeTiny(t *testing.T) []byte {
	var buf bytes.Buffer
	w, err := NewWriter(&buf, tinyHeader(), Options{FlushEvery: time.Hour, SummaryPer: 4, Version: 1})
	if err != nil {
		t.Fatal(err)
	}
	w.now = func() hostclock.Time { return 9000 }
	for _, err := range []error{
		w.Samples(&meter.Block{Channel: 0, V: []units.Volts{5, 5, 5, 5}, I: []units.Amps{0.25, 0.5, 0.25, 0.5}}),
		w.Samples(&meter.Block{Channel: 1, V: []units.Volts{12, 12}, I: []units.Amps{0.125, 0.125}}),
		w.Mark(meter.MarkEcho{ID: 1, HostSent: 1000, HostRecv: 3000, MeterIndex: 2}),
		w.Event(meter.Event{Kind: meter.EventDevSlp, Port: 1, Index: 3, Value: 1, HostRecv: 4000}),
		w.State(StateEvent{Host: 5000, Port: 1, Kind: StatePhase, Value: "idle"}),
		w.Stats(meter.Stats{Frames: 9, CRCErrors: 1, SamplesLost: 2}),
		w.Gap(meter.Gap{Channel: 1, Start: 2, Count: 2, Reason: "crc"}),
		w.IO(IOEvent{Port: 1, Op: OpWrite, Offset: 8192, Size: 4096, Issue: 6000, Complete: 7000}),
		w.Close(),
	} {
		if err != nil {
			t.Fatal(err)
		}
	}
	return buf.Bytes()
}

// TestTinyFixture pins the format: the checked-in bytes (hexdumped in the
// doc) must read back as the documented records, and today's writer must
// still produce them byte for byte. Regenerate with go test -run Tiny -update.
func TestTinyFixture(t *testing.T) {
	b := writeTiny(t)
	if *update {
		if err := os.WriteFile(tinyPath, b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	fixture, err := os.ReadFile(tinyPath)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(b, fixture) {
		t.Errorf("writer output differs from %s (%d vs %d bytes); if the format changed on purpose, run with -update and fix the doc", tinyPath, len(b), len(fixture))
	}
	r, err := NewReader(bytes.NewReader(fixture))
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(r.Header(), tinyHeader()) {
		t.Errorf("header %+v, want %+v", r.Header(), tinyHeader())
	}
	got, err := readAll(r)
	if err != nil {
		t.Fatal(err)
	}
	want := tinyRecords()
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("records\n got %+v\nwant %+v", got, want)
	}
	if !r.Complete() {
		t.Error("fixture is not complete")
	}
}

func FuzzReader(f *testing.F) {
	if b, err := os.ReadFile(tinyPath); err == nil {
		f.Add(b)
		f.Add(b[:len(b)/2])
		mid := bytes.Clone(b)
		mid[len(mid)/2] ^= 0x40
		f.Add(mid)
	}
	var buf bytes.Buffer
	writeEverything(f, &buf)
	f.Add(buf.Bytes())
	var ext bytes.Buffer // a stats-extended chunk (1.1)
	if w, err := NewWriter(&ext, testHeader(), Options{}); err == nil {
		w.Stats(meter.Stats{Frames: 3, Duplicates: 1, Restarts: 1, BadLines: 2, FirstBadLine: 4, FirstBadByte: 99}) //nolint:errcheck // a seed
		w.Close()                                                                                                   //nolint:errcheck // a seed
		f.Add(ext.Bytes())
	}
	f.Add([]byte{})
	f.Add(fileMagic[:])
	f.Fuzz(func(t *testing.T, data []byte) {
		r, err := NewReader(bytes.NewReader(data))
		if err != nil {
			if !errors.Is(err, ErrNotCapture) && !errors.Is(err, ErrVersion) && !errors.Is(err, ErrTruncated) && !errors.Is(err, ErrInvalid) {
				t.Fatalf("NewReader: unclassified error %v", err)
			}
			return
		}
		// Every chunk takes at least 20 bytes and yields at most one record
		// per channel plus two (a gap for -1 after damage: one per channel).
		for range (len(data) + 1) * (len(r.Header().Channels) + 2) {
			rec, err := r.Next()
			if err == io.EOF {
				if !r.Complete() {
					t.Fatal("io.EOF without the end chunk")
				}
				return
			}
			if err != nil {
				if !errors.Is(err, ErrTruncated) && !errors.Is(err, ErrVersion) {
					t.Fatalf("Next: unclassified error %v", err)
				}
				if _, err2 := r.Next(); err2 == nil || err2.Error() != err.Error() {
					t.Fatalf("error not sticky: %v then %v", err, err2)
				}
				return
			}
			if (rec.Kind == KindSamples || rec.Kind == KindRejected) && len(rec.Block.V) != len(rec.Block.I) {
				t.Fatal("block with mismatched V and I")
			}
		}
		t.Fatal("Next did not finish")
	})
}
