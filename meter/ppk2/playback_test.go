package ppk2_test

import (
	"context"
	"math"
	"os"
	"path/filepath"
	"testing"

	"github.com/idlewatt/idlewatt/internal/conntest"
	"github.com/idlewatt/idlewatt/internal/serialport"
	"github.com/idlewatt/idlewatt/internal/testutil"
	"github.com/idlewatt/idlewatt/meter"
	"github.com/idlewatt/idlewatt/meter/ppk2"
	"github.com/idlewatt/idlewatt/meter/ppk2/ppk2emu"
)

// cancelAfter cancels its stream once n samples have arrived.
type cancelAfter struct {
	sink
	n      int
	cancel func()
}

func (s *cancelAfter) Samples(b *meter.Block) error {
	err := s.sink.Samples(b)
	if s.sink.n >= s.n {
		s.cancel()
	}
	return err
}

// ppk2Session is one conversation: open (stop, drain, metadata, regulator,
// source mode, DUT on), DUT off and on, a stream of at least 100 samples
// at 10 kS/s, close; then a second open on the same line, whose drain
// reads what the device still sent after the stop.
func ppk2Session(t *testing.T, rw interface {
	Read([]byte) (int, error)
	Write([]byte) (int, error)
}) (mean float64) {
	t.Helper()
	p, err := ppk2.New(rw, ppk2.Options{Supply: 3.3})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	if err := p.SetPortPower(ctx, 1, false); err != nil {
		t.Fatal(err)
	}
	if err := p.SetPortPower(ctx, 1, true); err != nil {
		t.Fatal(err)
	}
	s := &cancelAfter{n: 100, cancel: cancel}
	if err := p.Stream(ctx, meter.StreamConfig{Rate: 10_000}, s); err != nil {
		t.Fatal(err)
	}
	var sum float64
	var n int
	for _, i := range s.i {
		sum += i
		n++
	}
	p.Close()
	again, err := ppk2.New(rw, ppk2.Options{Supply: 3.3})
	if err != nil {
		t.Fatal(err)
	}
	again.Close()
	return sum / float64(n)
}

// TestPlayback plays a recorded conversation with the emulated PPK2
// (fixtures/conn/ppk2.txt, written by -update from the emulator over a
// pty) to the driver with no emulator: it must write exactly what it
// wrote then, byte for byte, read everything it was sent, and decode the
// recorded samples to the emulated DUT's 12.5 mA.
func TestPlayback(t *testing.T) {
	path := filepath.Join("..", "..", "fixtures", "conn", "ppk2.txt")
	if *testutil.Update {
		emu, err := ppk2emu.New(ppk2emu.Options{Drive: meter.ConstantDrive{V5: 3.3, I5: 0.0125}})
		if err != nil {
			t.Skipf("no pty: %v", err)
		}
		defer emu.Close()
		port, err := serialport.Open(emu.Path(), 115200)
		if err != nil {
			t.Fatal(err)
		}
		rec := conntest.Record(port)
		ppk2Session(t, rec)
		port.Close()
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, rec.Script().Marshal(), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	s, err := conntest.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (go test -update ./meter/ppk2 records it)", err)
	}
	p := conntest.NewPlayback(s)
	mean := ppk2Session(t, p)
	if math.Abs(mean-0.0125) > 0.0125*0.01 {
		t.Errorf("mean %v A, want the emulated 12.5 mA ± 1 %%", mean)
	}
	p.Close()
	if err := p.Verify(); err != nil {
		t.Error(err)
	}
}
