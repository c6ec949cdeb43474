package drivesim

import (
	"bytes"
	"errors"
	"os"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/idlewatt/idlewatt/hostclock"
	"github.com/idlewatt/idlewatt/states/powerstate"
	"github.com/idlewatt/idlewatt/workload"
)

// fakeClock maps every host reading to a settable emulator time.
type fakeClock struct {
	mu sync.Mutex
	t  time.Duration
}

func (c *fakeClock) now(hostclock.Time) time.Duration { c.mu.Lock(); defer c.mu.Unlock(); return c.t }
func (c *fakeClock) set(t time.Duration)              { c.mu.Lock(); c.t = t; c.mu.Unlock() }

func TestTargetWaitsForTheWakeAndDoesTheIO(t *testing.T) {
	p, _ := Lookup("jmf667h-128-a19", nil)
	p.GCEveryS = 0
	m, _ := New(p, Options{KeepTruth: true, Policy: PolicyMedPowerDIPM})
	clk := &fakeClock{}
	var slept []time.Duration
	path := filepath.Join(t.TempDir(), "media")
	tg, err := OpenTarget(path, m, TargetOptions{Size: 1 << 20, Clock: clk.now, Sleep: func(d time.Duration) { slept = append(slept, d); clk.set(clk.now(0) + d) }})
	if err != nil {
		t.Fatal(err)
	}
	defer tg.Close()
	if tg.Size() != 1<<20 {
		t.Fatalf("size %d", tg.Size())
	}
	clk.set(time.Second) // Slumber by now
	cp := compile(p, Options{})
	xfer := func(op workload.Op, n int) time.Duration { return time.Duration(cp.xferNs(op, n)) }
	exit := time.Duration(p.SlumberExitMs * 1e6)
	data := bytes.Repeat([]byte("idlewatt"), 512)
	if n, err := tg.WriteAt(data, 8192); err != nil || n != len(data) {
		t.Fatalf("WriteAt: %d %v", n, err)
	}
	// One sleep: the Slumber exit and the write's transfer, so the call
	// returns (the host's completion) when the model's transfer ends.
	if want := exit + xfer(workload.OpWrite, len(data)); len(slept) != 1 || slept[0] != want {
		t.Fatalf("slept %v, want one service time %v (Slumber exit %v ms + transfer)", slept, want, p.SlumberExitMs)
	}
	done := clk.now(0)
	got := make([]byte, len(data))
	if n, err := tg.ReadAt(got, 8192); err != nil || n != len(data) || !bytes.Equal(got, data) {
		t.Fatalf("ReadAt: %d %v", n, err)
	}
	if want := xfer(workload.OpRead, len(data)); len(slept) != 2 || slept[1] != want {
		t.Fatalf("an awake drive: slept %v, want only the read's transfer %v", slept, want)
	}
	done2 := clk.now(0)
	m.Advance(done2 + time.Millisecond)
	if s := stateAt(t, m, done-time.Microsecond); s != powerstate.Active {
		t.Fatalf("just before the write's completion the model is %v, want active (the transfer)", s)
	}
	if s := stateAt(t, m, done2+time.Microsecond); s == powerstate.Active {
		t.Fatal("the model is still active after the host's completion of the read")
	}
	clk.set(2 * time.Second)
	if err := tg.Sync(); err != nil {
		t.Fatal(err)
	}
	if _, err := tg.ReadAt(got, 1<<20-10); err == nil {
		t.Fatal("read past the end accepted")
	}
	// The hooks: Before reports the service time without sleeping.
	clk.set(3 * time.Second)
	w, err := tg.Before(workload.OpRead, 0, 4096)
	if err != nil || w != exit+xfer(workload.OpRead, 4096) {
		t.Fatalf("Before = %v, %v", w, err)
	}
	tg.After(workload.OpRead, 0, 4096)
	m.SetPower(4*time.Second, false)
	clk.set(4 * time.Second)
	if _, err := tg.ReadAt(got, 0); !errors.Is(err, ErrPoweredOff) {
		t.Fatalf("read from a powered-off drive: %v", err)
	}
	m.Advance(5 * time.Second)
	if s := stateAt(t, m, time.Second); s != powerstate.Wake {
		t.Fatalf("the write did not wake the model: %v", s)
	}
}

func TestOpenTargetRejectsNonRegular(t *testing.T) {
	p, _ := Lookup("jmf667h-128-a19", nil)
	m, _ := New(p, Options{})
	dir := t.TempDir()
	if _, err := OpenTarget(dir, m, TargetOptions{}); err == nil {
		t.Fatal("directory accepted as backing file")
	}
	if _, err := OpenTarget(filepath.Join(dir, "f"), nil, TargetOptions{}); err == nil {
		t.Fatal("nil model accepted")
	}
	if _, err := OpenTarget(filepath.Join(dir, "f"), m, TargetOptions{Size: -1}); err == nil {
		t.Fatal("negative size accepted")
	}
	if _, err := os.Stat(filepath.Join(dir, "f")); err != nil {
		t.Fatal(err)
	}
}

func TestTargetConcurrentUse(t *testing.T) {
	p, _ := Lookup("jmf667h-256-a19", nil)
	m, _ := New(p, Options{Policy: PolicyMinPower})
	tg, err := OpenTarget(filepath.Join(t.TempDir(), "media"), m, TargetOptions{Size: 1 << 20, Sleep: func(time.Duration) {}})
	if err != nil {
		t.Fatal(err)
	}
	defer tg.Close()
	var wg sync.WaitGroup
	stop := make(chan struct{})
	wg.Add(1)
	go func() { // the emulator
		defer wg.Done()
		for {
			select {
			case <-stop:
				return
			default:
				renderChunk(m)
			}
		}
	}()
	var io sync.WaitGroup
	for g := range 4 {
		io.Add(1)
		go func() {
			defer io.Done()
			b := make([]byte, 4096)
			for i := range 200 {
				if _, err := tg.WriteAt(b, int64((g*200+i)%256)*4096); err != nil {
					t.Error(err)
					return
				}
			}
		}()
	}
	io.Wait()
	close(stop)
	wg.Wait()
}
