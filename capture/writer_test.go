package capture

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/idlewatt/idlewatt/internal/outfile"
	"github.com/idlewatt/idlewatt/meter"
	"github.com/idlewatt/idlewatt/units"
)

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
