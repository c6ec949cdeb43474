package record_test

import (
	"context"
	"path/filepath"
	"testing"
	"time"

	"github.com/idlewatt/idlewatt/capture"
	"github.com/idlewatt/idlewatt/capture/record"
	"github.com/idlewatt/idlewatt/hostclock"
	"github.com/idlewatt/idlewatt/meter"
	"github.com/idlewatt/idlewatt/meter/hub"
	"github.com/idlewatt/idlewatt/meter/hub/hubemu"
)

// seeAll is an observer that also takes I/O and marks.
type seeAll struct {
	count
	io, marks int
}

func (s *seeAll) IO(evs []capture.IOEvent) { s.io += len(evs) }
func (s *seeAll) Mark(meter.MarkEcho)      { s.marks++ }

// Tee hands every call to each observer, and the optional I/O and mark
// calls to those that take them: a plain observer beside a live view still
// sees its blocks.
func TestTeeObservers(t *testing.T) {
	if record.Tee() != nil || record.Tee(nil, nil) != nil {
		t.Fatal("Tee of nothing is not nil")
	}
	one := &count{}
	if record.Tee(nil, one) != record.Observer(one) {
		t.Fatal("Tee of one observer is not that observer")
	}
	emu, err := hubemu.New(hubemu.Options{Ports: 1})
	if err != nil {
		t.Fatal(err)
	}
	defer emu.Close()
	m, err := hub.Open(emu.Path(), hub.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer m.Close()
	plain, all := &count{}, &seeAll{}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	rec, err := record.Start(ctx, m, record.Options{Path: filepath.Join(t.TempDir(), "c.iwcap"), Stream: meter.StreamConfig{Rate: 1000},
		Header: capture.Header{Tool: "test"}, Observer: record.Tee(plain, nil, all)})
	if err != nil {
		t.Fatal(err)
	}
	now := hostclock.Now()
	if err := rec.IO(capture.IOEvent{Port: 1, Op: capture.OpRead, Size: 4096, Issue: now, Complete: now + 1000},
		capture.IOEvent{Port: 1, Op: capture.OpWrite, Size: 512, Issue: now, Complete: now + 2000}); err != nil {
		t.Fatal(err)
	}
	// Wait (bounded) for two marks' echoes; the assertion is on counts.
	for deadline := time.Now().Add(10 * time.Second); rec.Progress().Marks < 2 && time.Now().Before(deadline); {
		time.Sleep(50 * time.Millisecond)
	}
	cancel()
	<-rec.Done()
	res := rec.Close()
	if !plain.started || !all.started || plain.samples == 0 || plain.samples != all.samples {
		t.Errorf("samples: plain %d (started %v), all %d (started %v)", plain.samples, plain.started, all.samples, all.started)
	}
	if all.io != 2 {
		t.Errorf("the I/O observer saw %d I/O events, want 2", all.io)
	}
	if res.Marks < 2 || uint64(all.marks) != res.Marks {
		t.Errorf("the mark observer saw %d marks, the capture holds %d (want ≥ 2)", all.marks, res.Marks)
	}
}
