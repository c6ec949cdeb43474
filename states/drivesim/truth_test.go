package drivesim

import (
	"bytes"
	"errors"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/idlewatt/idlewatt/states/powerstate"
	"github.com/idlewatt/idlewatt/workload"
)

func TestTruthWriterStreamsWhatTruthKeeps(t *testing.T) {
	p, _ := Lookup("jmf667h-256-a19", nil)
	var buf bytes.Buffer
	m, _ := New(p, Options{Seed: 4, KeepTruth: true, TruthOut: &buf, Port: 2, Policy: PolicyMinPower})
	m.IO(100*ms, workload.OpWrite, 1<<20)
	m.IODone(104*ms, workload.OpWrite, 1<<20)
	m.Advance(time.Second)
	if err := m.Finish(time.Second); err != nil {
		t.Fatal(err)
	}
	m.IO(1500*ms, workload.OpRead, 4096) // after a Finish the file continues
	m.IODone(1501*ms, workload.OpRead, 4096)
	if err := m.Finish(3 * time.Second); err != nil {
		t.Fatal(err)
	}
	h, got, err := ReadTruth(&buf)
	if err != nil {
		t.Fatal(err)
	}
	if h.Profile != p.Name || h.Seed != 4 || h.Port != 2 {
		t.Fatalf("header %+v", h)
	}
	want := m.Truth()
	// The file splits the segment open at the first Finish; merge it back.
	var merged []Segment
	for _, s := range got {
		if n := len(merged); n > 0 && merged[n-1].End == s.Start && merged[n-1].State == s.State && merged[n-1].P5 == s.P5 && merged[n-1].GC == s.GC && merged[n-1].IO == s.IO {
			merged[n-1].End = s.End
			continue
		}
		merged = append(merged, s)
	}
	if len(merged) != len(want) {
		t.Fatalf("file has %d segments, Truth %d", len(merged), len(want))
	}
	for i := range want {
		w, g := want[i], merged[i]
		if w.State != g.State || w.Start != g.Start || w.End != g.End || w.P5 != g.P5 || w.GC != g.GC || w.IO != g.IO {
			t.Fatalf("segment %d: file %+v, Truth %+v", i, g, w)
		}
	}
	if want[len(want)-1].End != 3*time.Second {
		t.Fatalf("truth ends at %v", want[len(want)-1].End)
	}
}

func TestReadTruthErrorsNameLine(t *testing.T) {
	hdr := `{"schema":"idlewatt.drivesim.truth/v1","profile":"x","seed":1}` + "\n"
	cases := []struct{ src, want string }{
		{"", "empty"},
		{`{"schema":"other"}` + "\n", "line 1: schema"},
		{hdr + `{"state":"idle","start_s":0,"end_s":1,"p5_w":0.4,"p12_w":0}` + "\n" + `{"state":"nap","start_s":1,"end_s":2}`, "line 3: unknown drive state"},
		{hdr + `{"state":"idle","start_s":2,"end_s":1}`, "line 2: end_s"},
		{hdr + `{"state":"idle","start_s":0,"end_s":2}` + "\n" + `{"state":"idle","start_s":1,"end_s":3}`, "line 3: start_s"},
		{hdr + `{"state":"idle",`, "line 2:"},
	}
	for _, c := range cases {
		_, _, err := ReadTruth(strings.NewReader(c.src))
		if !errors.Is(err, ErrTruthFormat) || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%q: got %v, want %q", c.src, err, c.want)
		}
	}
}

func FuzzReadTruth(f *testing.F) {
	var buf bytes.Buffer
	tw := NewTruthWriter(&buf, TruthHeader{Profile: "x", Seed: 1})
	tw.Write(Segment{Start: 0, End: time.Second, State: powerstate.Idle, P5: 0.4})
	tw.Write(Segment{Start: time.Second, End: 2 * time.Second, State: powerstate.Slumber, P5: 0.07, GC: true, IO: true})
	tw.WriteIO(IOSpan{Start: time.Second, End: 1500 * time.Millisecond})
	tw.Flush()
	f.Add(buf.Bytes())
	f.Add([]byte(`{"schema":"idlewatt.drivesim.truth/v1"}` + "\n" + `{"io_start_s":2,"io_end_s":1}`))
	f.Add([]byte(`{"schema":"idlewatt.drivesim.truth/v1"}` + "\n" + `{"state":"devslp","start_s":1e300,"end_s":1e301}`))
	f.Add([]byte("\n\n\n"))
	f.Fuzz(func(t *testing.T, b []byte) {
		_, segs, ios, err := ReadTruthIO(bytes.NewReader(b))
		if err != nil {
			if !errors.Is(err, ErrTruthFormat) {
				t.Fatalf("error not wrapping ErrTruthFormat: %v", err)
			}
			return
		}
		for i, s := range ios {
			if s.End < s.Start {
				t.Fatalf("io span %d accepted: %+v", i, s)
			}
		}
		for i, s := range segs {
			if s.End < s.Start || !slices.Contains(powerstate.Simulated, s.State) {
				t.Fatalf("segment %d accepted: %+v", i, s)
			}
		}
		// What was read writes back to something that reads the same.
		var out bytes.Buffer
		w := NewTruthWriter(&out, TruthHeader{})
		for _, s := range segs {
			w.Write(s)
		}
		if err := w.Flush(); err != nil {
			t.Fatal(err)
		}
		_, again, err := ReadTruth(&out)
		if err != nil || len(again) != len(segs) {
			t.Fatalf("round trip: %d segments, %v", len(again), err)
		}
	})
}

// A completion the model learns of late (it has rendered past it) keeps
// the host's time in the outstanding spans, and the truth file holds them.
func TestIOSpansKeepTheHostsTimes(t *testing.T) {
	p, _ := Lookup("jmf667h-128-a19", nil)
	p.GCEveryS = 0
	var buf bytes.Buffer
	m, _ := New(p, Options{KeepTruth: true, TruthOut: &buf, Policy: PolicyMaxPerformance})
	ms := time.Millisecond
	m.IO(100*ms, workload.OpRead, 4096)
	m.Advance(200 * ms) // the emulator rendered on while the host was preempted
	m.IODone(101*ms, workload.OpRead, 4096)
	m.IO(300*ms, workload.OpRead, 4096)
	m.IO(300*ms, workload.OpRead, 4096) // two outstanding: one span
	m.IODone(302*ms, workload.OpRead, 4096)
	m.IODone(303*ms, workload.OpRead, 4096)
	want := []IOSpan{{100 * ms, 101 * ms}, {300 * ms, 303 * ms}}
	if got := m.IOSpans(); len(got) != 2 || got[0] != want[0] || got[1] != want[1] {
		t.Fatalf("spans %v, want %v", got, want)
	}
	if err := m.Finish(time.Second); err != nil {
		t.Fatal(err)
	}
	_, segs, ios, err := ReadTruthIO(&buf)
	if err != nil {
		t.Fatal(err)
	}
	if len(ios) != 2 || ios[0] != want[0] || ios[1] != want[1] {
		t.Fatalf("file spans %v, want %v", ios, want)
	}
	// The segments hold the model's own view: outstanding until it learned.
	var io time.Duration
	for _, s := range segs {
		if s.IO && s.Start < 250*ms {
			io += s.End - s.Start
		}
	}
	if io < 99*ms {
		t.Fatalf("model-view outstanding time %v, want ≈ 100 ms (it learned of the completion at 200 ms)", io)
	}
}
