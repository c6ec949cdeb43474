package record_test

import (
	"context"
	"errors"
	"io"
	"path/filepath"
	"testing"
	"time"

	"github.com/idlewatt/idlewatt/capture"
	"github.com/idlewatt/idlewatt/capture/record"
	"github.com/idlewatt/idlewatt/meter"
	"github.com/idlewatt/idlewatt/meter/hub"
	"github.com/idlewatt/idlewatt/meter/hub/hubemu"
)

// count tallies what an observer saw.
type count struct {
	started        bool
	samples, stats int
}

func (c *count) Start(capture.Header)     { c.started = true }
func (c *count) Samples(b *meter.Block)   { c.samples += b.Len() }
func (c *count) Gap(meter.Gap)            {}
func (c *count) Stats(meter.Stats)        { c.stats++ }
func (c *count) State(capture.StateEvent) {}
func (c *count) Event(meter.Event)        {}

// readBack counts the capture's samples and marks.
func readBack(t *testing.T, path string) (samples, marks int, h capture.Header) {
	t.Helper()
	r, err := capture.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	for {
		rec, err := r.Next()
		if errors.Is(err, io.EOF) {
			return samples, marks, r.Header()
		}
		if err != nil {
			t.Fatal(err)
		}
		switch rec.Kind {
		case capture.KindSamples:
			samples += rec.Block.Len()
		case capture.KindMark:
			marks++
		}
	}
}

// A live emulated hub: marks go out every MarkInterval and come back, the
// counts match the capture, and each port's power is the emulator's.
func TestRecordLive(t *testing.T) {
	emu, err := hubemu.New(hubemu.Options{Ports: 2})
	if err != nil {
		t.Fatal(err)
	}
	defer emu.Close()
	m, err := hub.Open(emu.Path(), hub.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer m.Close()
	path := filepath.Join(t.TempDir(), "c.iwcap")
	obs := &count{}
	ctx, cancel := context.WithTimeout(context.Background(), 4*record.MarkInterval+200*time.Millisecond)
	defer cancel()
	rec, err := record.Start(ctx, m, record.Options{Path: path, Stream: meter.StreamConfig{Rate: 1000, Ports: []int{2}},
		Header: capture.Header{Tool: "test"}, Observer: obs})
	if err != nil {
		t.Fatal(err)
	}
	if got := rec.Header().Channels; len(got) != 2 || got[0].Port != 2 {
		t.Fatalf("channels %v, want port 2's two rails", got)
	}
	time.Sleep(3 * record.MarkInterval)
	pr := rec.Progress()
	if len(pr.Ports) != 1 || !pr.Ports[0].OK || pr.Ports[0].W < 0.39 || pr.Ports[0].W > 0.41 {
		t.Errorf("progress ports %+v, want port 2 at 0.4 W (5 V × 80 mA)", pr.Ports)
	}
	<-rec.Done()
	res := rec.Close()
	if res.StreamErr != nil || res.WriteErr != nil {
		t.Fatal(res.StreamErr, res.WriteErr)
	}
	samples, marks, h := readBack(t, path)
	if uint64(samples) != res.Samples || res.Samples == 0 || samples != obs.samples {
		t.Errorf("samples: capture %d, totals %d, observer %d", samples, res.Samples, obs.samples)
	}
	if marks < 2 || uint64(marks) != res.Marks {
		t.Errorf("marks: capture %d, totals %d; want ≥ 2 in %v", marks, res.Marks, 4*record.MarkInterval)
	}
	if !obs.started || obs.stats < 2 {
		t.Errorf("observer: started %v, %d stats", obs.started, obs.stats)
	}
	if h.Tool != "test" || h.RateHz != 1000 {
		t.Errorf("header tool %q rate %g", h.Tool, h.RateHz)
	}
	if again := rec.Close(); again.Samples != 0 {
		t.Errorf("second Close: %+v", again)
	}
}

// A replay streams to its end: no marks, and the errors of Start say their stage.
func TestRecordReplayAndErrors(t *testing.T) {
	open := func() meter.Meter {
		m, err := hub.OpenReplay("../../fixtures/hostile/hub-100ms.bin")
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { m.Close() })
		return m
	}
	dir := t.TempDir()
	rec, err := record.Start(context.Background(), open(), record.Options{Path: filepath.Join(dir, "a.iwcap"), Replayed: true})
	if err != nil {
		t.Fatal(err)
	}
	<-rec.Done()
	res := rec.Close()
	if res.StreamErr != nil || res.WriteErr != nil || res.Samples != 400 || res.Marks != 0 {
		t.Errorf("replay: %+v", res)
	}
	_, err = record.Start(context.Background(), open(), record.Options{Path: filepath.Join(dir, "b.iwcap"), Stream: meter.StreamConfig{Rate: 12345}})
	var re *record.ResolveError
	if !errors.Is(err, record.ErrResolve) || !errors.As(err, &re) || !errors.Is(err, meter.ErrUnsupported) {
		t.Errorf("unsupported rate: %v", err)
	}
	_, err = record.Start(context.Background(), open(), record.Options{Path: filepath.Join(dir, "a.iwcap")})
	if !errors.Is(err, record.ErrCreate) {
		t.Errorf("existing capture: %v", err)
	}
}
