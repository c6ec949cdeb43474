package hubemu

import (
	"bytes"
	"testing"
	"time"

	"github.com/idlewatt/idlewatt/meter"
	"github.com/idlewatt/idlewatt/meter/hub"
)

func TestEmuTimeAppliesOffsetAndDrift(t *testing.T) {
	o := Options{ClockOffset: 3 * time.Millisecond, DriftPPM: 100}
	if got, want := emuTime(o, 10*time.Second), 3*time.Millisecond+10*time.Second+time.Millisecond; got != want {
		t.Fatalf("emuTime(10 s) = %v, want %v", got, want)
	}
}

func TestWriteFastIsDeterministicAndSelfDescribing(t *testing.T) {
	o := Options{Ports: 3, Rate: 2000, Seed: 9, Faults: Faults{CorruptRate: 1e-3}}
	var a, b bytes.Buffer
	if err := WriteFast(&a, o, time.Second); err != nil {
		t.Fatal(err)
	}
	WriteFast(&b, o, time.Second) //nolint:errcheck // same options
	if !bytes.Equal(a.Bytes(), b.Bytes()) {
		t.Fatal("same seed, different bytes")
	}
	info, st, err := hub.DecodeStream(bytes.NewReader(a.Bytes()), discard{})
	if err != nil || info.Ports != 3 || len(info.Rates) != 1 || info.Rates[0] != 2000 {
		t.Fatalf("decode: %v, info %+v", err, info)
	}
	if st.CRCErrors == 0 || st.Frames < 60 {
		t.Fatalf("stats %+v: want most of 103 frames and some CRC errors", st)
	}
}

func TestWriteFastRefusesWhatTheLinkCannotCarry(t *testing.T) {
	o := Options{Ports: 4, Rate: 10000, Link: hub.LinkUART921600}
	if err := WriteFast(&bytes.Buffer{}, o, time.Second); err == nil {
		t.Fatal("4 ports at 10 kHz over a UART accepted")
	}
	if err := WriteFast(&bytes.Buffer{}, Options{Ports: 9}, time.Second); err == nil {
		t.Fatal("9 ports accepted")
	}
}

type discard struct{}

func (discard) Samples(*meter.Block) error { return nil }
func (discard) Gap(meter.Gap) error        { return nil }
func (discard) Mark(meter.MarkEcho) error  { return nil }
func (discard) Event(meter.Event) error    { return nil }

// START with RESUME while streaming the same rate and ports keeps the
// stream and its index; with other settings it is refused.
func TestStartResumeKeepsCounting(t *testing.T) {
	o := Options{Ports: 2}
	if err := o.validate(); err != nil {
		t.Fatal(err)
	}
	g, _ := newGen(o)
	start := hub.Start{Rate: 1000, PortMask: 3}
	g.handle(&hub.Frame{Type: hub.TypeStart, Seq: 1, Payload: start.Append(nil)}, 0)
	if !g.streaming {
		t.Fatal("START did not start streaming")
	}
	g.render(2 * time.Second)
	before := g.next
	g.out = g.out[:0]
	rs := start
	rs.Flags = hub.StartResume
	g.handle(&hub.Frame{Type: hub.TypeStart, Seq: 2, Payload: rs.Append(nil)}, 3*time.Second)
	if g.next < before || g.index(3*time.Second) != 3000 {
		t.Fatalf("resume reset the index: next %d (was %d), index %d", g.next, before, g.index(3*time.Second))
	}
	if !bytes.Contains(g.out, []byte{byte(hub.TypeAck), 2}) {
		t.Fatalf("no ACK of the resumed START in % x", g.out[len(g.out)-20:])
	}
	g.out = g.out[:0]
	rs.Rate = 2000
	g.handle(&hub.Frame{Type: hub.TypeStart, Seq: 3, Payload: rs.Append(nil)}, 4*time.Second)
	if !bytes.Contains(g.out, []byte{byte(hub.TypeNak), 3}) {
		t.Fatal("RESUME with another rate was not refused")
	}
}

// A tick that races Close used to see the closed pty as unplugged and open
// a new one, whose read loop kept Close waiting for ever (1 hub in 6 under
// load in the accuracy campaign).
func TestCloseRacingATick(t *testing.T) {
	for i := range 300 {
		e, err := New(Options{Ports: 1, Tick: 50 * time.Microsecond})
		if err != nil {
			t.Skip(err)
		}
		time.Sleep(time.Duration(i%7) * 30 * time.Microsecond)
		done := make(chan struct{})
		go func() { e.Close(); close(done) }()
		select {
		case <-done:
		case <-time.After(time.Minute): // a hang guard: Close takes milliseconds
			t.Fatalf("round %d: Close still waiting after a minute", i)
		}
	}
}

// TestWriteFastTinyFaultRates: a fault rate so small that 1-p rounds to 1
// (denormal 1e-320) injects nothing; it used to divide by log(1) = 0 and
// panic with an index of -2^63.
func TestWriteFastTinyFaultRates(t *testing.T) {
	clean := Options{Ports: 2, Rate: 1000, Seed: 1}
	var want bytes.Buffer
	if err := WriteFast(&want, clean, time.Second); err != nil {
		t.Fatal(err)
	}
	for _, f := range []Faults{{CorruptRate: 1e-320}, {DropRate: 1e-320}, {CorruptRate: 5e-324, DropRate: 1e-300}} {
		o := clean
		o.Faults = f
		var got bytes.Buffer
		if err := WriteFast(&got, o, time.Second); err != nil {
			t.Fatalf("%+v: %v", f, err)
		}
		if !bytes.Equal(got.Bytes(), want.Bytes()) {
			t.Errorf("%+v: %d bytes differ from the clean stream", f, got.Len())
		}
	}
}
