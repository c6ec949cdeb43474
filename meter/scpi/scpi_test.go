package scpi_test

import (
	"context"
	"errors"
	"io"
	"math"
	"strings"
	"testing"
	"time"

	"github.com/idlewatt/idlewatt/internal/serialport"
	"github.com/idlewatt/idlewatt/meter"
	"github.com/idlewatt/idlewatt/meter/scpi"
	"github.com/idlewatt/idlewatt/meter/scpi/scpiemu"
)

func TestDetect(t *testing.T) {
	for idn, want := range map[string]string{
		"Keysight Technologies,N6705C,MY1,D.01":     "n6705",
		"KEITHLEY INSTRUMENTS,MODEL 2450,04,1.7":    "k2450",
		"KEITHLEY INSTRUMENTS,MODEL 2280S-32-6,1,2": "k2280s",
		"RIGOL TECHNOLOGIES,DP832,DP8C1,00.01":      "dp800",
		"Siglent Technologies,SDM3065X,SDM3,3.01":   "sdm",
	} {
		f, err := scpi.Detect(idn)
		if err != nil || f.Name != want {
			t.Errorf("%q → %q %v, want %s", idn, f.Name, err, want)
		}
	}
	if _, err := scpi.Detect("ACME,Frobnicator"); err == nil {
		t.Error("unknown instrument accepted")
	}
}

func TestParse(t *testing.T) {
	for s, want := range map[string]float64{"+1.25000E-02": 0.0125, " -3.5e-6A\r": -3.5e-6, "1.0,2.0": 1} {
		if x, err := scpi.ParseReading(s); err != nil || x != want {
			t.Errorf("%q → %v %v", s, x, err)
		}
	}
	for _, s := range []string{"9.91E37", "nan", "", `-113,"Undefined header"x`} {
		if _, err := scpi.ParseReading(s); err == nil {
			t.Errorf("%q accepted", s)
		}
	}
	code, msg, err := scpi.ParseError(`-113,"Undefined header"`)
	if code != -113 || msg != "Undefined header" || err != nil {
		t.Errorf("%d %q %v", code, msg, err)
	}
}

type sink struct {
	cancel func()
	n      int
	i, v   float64
	gaps   []meter.Gap
}

func (s *sink) Samples(b *meter.Block) error {
	s.n++
	s.i, s.v = float64(b.I[0]), float64(b.V[0])
	if s.n == 5 {
		s.cancel()
	}
	return nil
}
func (s *sink) Gap(g meter.Gap) error   { s.gaps = append(s.gaps, g); return nil }
func (*sink) Mark(meter.MarkEcho) error { return nil }
func (*sink) Event(meter.Event) error   { return nil }

// replyTimeout is the reply timeout of the tests that expect every query
// answered: a guard, not a timing check (the emulator answers in
// milliseconds; a shorter timeout failed on a loaded machine).
const replyTimeout = 5 * time.Second

// startEmu starts an emulated instrument for the test, closed when it ends;
// without a pty the test is skipped.
func startEmu(tb testing.TB, o scpiemu.Options) *scpiemu.Emulator {
	tb.Helper()
	emu, err := scpiemu.New(o)
	if err != nil {
		tb.Skipf("no pty: %v", err)
	}
	tb.Cleanup(func() { emu.Close() })
	return emu
}

func TestAgainstEmulator(t *testing.T) {
	emu := startEmu(t, scpiemu.Options{})
	in, err := scpi.Open(emu.Path(), scpi.Options{Timeout: replyTimeout})
	if err != nil {
		t.Fatal(err)
	}
	defer in.Close()
	if in.Family().Name != "n6705" {
		t.Fatalf("family %q", in.Family().Name)
	}
	ctx, cancel := context.WithCancel(context.Background())
	s := &sink{cancel: cancel}
	if err := in.Stream(ctx, meter.StreamConfig{}, s); err != nil {
		t.Fatal(err)
	}
	// A tick may be ready with the cancel: one more poll can follow it.
	if s.n < 5 || s.n > 6 || math.Abs(s.i-0.0125) > 1e-12 || s.v != 5 {
		t.Fatalf("%d samples, last %v A %v V", s.n, s.i, s.v)
	}
	// The port is held until Close: only then can it be opened again.
	if _, err := scpi.Open(emu.Path(), scpi.Options{}); !errors.Is(err, serialport.ErrInUse) {
		t.Fatalf("second open while the first is open: %v", err)
	}
	in.Close()
	// A command the instrument does not know: no reply, -113 in the queue.
	// Each failed poll waits out the timeout: a second (the default), ten
	// times what the emulator's answers take on a loaded machine.
	bad, err := scpi.Open(emu.Path(), scpi.Options{Timeout: time.Second, Override: &scpi.Family{MeasCurr: "MEAS:BOGUS?"}})
	if err != nil {
		t.Fatal(err)
	}
	defer bad.Close()
	s = &sink{cancel: func() {}}
	err = bad.Stream(context.Background(), meter.StreamConfig{}, s)
	var failed []meter.Gap // the failed polls; the periods they overran are "late"
	for _, g := range s.gaps {
		if g.Reason != "late" {
			failed = append(failed, g)
		}
	}
	if !errors.Is(err, scpi.ErrInstrument) || !strings.Contains(err.Error(), "-113") || len(failed) != 2 ||
		failed[0].Count != 1 || !strings.Contains(failed[0].Reason, "MEAS:BOGUS?") {
		t.Fatalf("err %v gaps %+v", err, s.gaps)
	}
	if _, err := scpi.New(struct {
		io.Reader
		io.Writer
	}{strings.NewReader(""), io.Discard}, scpi.Options{}); err == nil {
		t.Fatal("New on nothing succeeded")
	}
}

func FuzzParse(f *testing.F) {
	f.Add("+1.25000E-02")
	f.Add(`-113,"Undefined header"`)
	f.Add("9.91E37")
	f.Fuzz(func(t *testing.T, s string) {
		if x, err := scpi.ParseReading(s); err == nil && (math.IsNaN(x) || math.IsInf(x, 0) || math.Abs(x) >= 9.9e37) {
			t.Fatalf("%q → %v", s, x)
		}
		_, _, _ = scpi.ParseError(s)
		if _, err := scpi.Detect(s); err == nil && s == "" {
			t.Fatal("empty IDN detected")
		}
	})
}

// TestStaleReplyBeforeOpen: replies a previous session left unread on the
// line (here two readings; in the field the rest of an array fetch) are not
// taken for the answer to *IDN?.
func TestStaleReplyBeforeOpen(t *testing.T) {
	emu := startEmu(t, scpiemu.Options{})
	raw, err := serialport.Open(emu.Path(), 115200)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := raw.Write([]byte("MEAS:CURR? (@1)\nMEAS:CURR? (@1)\n")); err != nil {
		t.Fatal(err)
	}
	time.Sleep(200 * time.Millisecond) // the emulator answers; nobody reads
	raw.Close()
	in, err := scpi.Open(emu.Path(), scpi.Options{Timeout: replyTimeout})
	if err != nil {
		t.Fatalf("open after a session left two replies unread: %v", err)
	}
	defer in.Close()
	if in.Family().Name != "n6705" {
		t.Fatalf("family %q", in.Family().Name)
	}
}

// TestStaleArrayAfterOpenDrain: a session that asked for an array and
// closed before the instrument answered (killed mid-fetch) leaves a block
// that arrives after Open's drain has found the line quiet. It is the
// first thing read after *IDN?; Open must discard it and ask again, not
// report an "unknown instrument" made of float32 bytes.
func TestStaleArrayAfterOpenDrain(t *testing.T) {
	emu := startEmu(t, scpiemu.Options{FetchDelay: 10 * time.Millisecond})
	for _, form := range []string{"FORM REAL", "FORM ASC"} {
		raw, err := serialport.Open(emu.Path(), 115200)
		if err != nil {
			t.Fatal(err)
		}
		// 2048 points of 102.4 µs: the reply comes about 220 ms later.
		if _, err := raw.Write([]byte(form + "\nSENS:SWE:TINT 0.0001024,(@1)\nSENS:SWE:POIN 2048,(@1)\nMEAS:ARR:CURR? (@1)\n")); err != nil {
			t.Fatal(err)
		}
		time.Sleep(20 * time.Millisecond)
		raw.Close()
		// A query's timeout, not a wait: 5 s so that an emulator starved on a
		// loaded machine (load 17: no reply within 1 s) still answers.
		in, err := scpi.Open(emu.Path(), scpi.Options{Timeout: 5 * time.Second})
		if err != nil {
			t.Fatalf("%s: open while a fetch's reply is on its way: %v", form, err)
		}
		if in.Family().Name != "n6705" {
			t.Errorf("%s: family %q", form, in.Family().Name)
		}
		in.Close()
	}
}
