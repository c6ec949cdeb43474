package files

import (
	"bytes"
	"context"
	"errors"
	"math"
	"testing"

	"github.com/idlewatt/idlewatt/meter"
)

// checkSink is what the fuzzers replay into: it checks, as the capture
// writer and analysis rely on, that each index comes once, in order, as a
// sample or a gap, and that values are finite and within the bounds.
type checkSink struct {
	t    *testing.T
	next uint64
	n    int
}

func (c *checkSink) at(start, count uint64) {
	if start < c.next {
		c.t.Fatalf("index %d after %d", start, c.next)
	}
	c.next = start + count
}

func (c *checkSink) Samples(b *meter.Block) error {
	if len(b.V) != len(b.I) || len(b.I) == 0 {
		c.t.Fatalf("block of %d V and %d I", len(b.V), len(b.I))
	}
	c.at(b.Start, uint64(len(b.I)))
	for k := range b.I {
		v, i := float64(b.V[k]), float64(b.I[k])
		if math.IsNaN(v) || math.IsNaN(i) || math.Abs(v) > maxVolts || math.Abs(i) > maxAmps {
			c.t.Fatalf("sample %d: %g V %g A", b.Start+uint64(k), v, i)
		}
	}
	c.n += len(b.I)
	return nil
}
func (c *checkSink) Gap(g meter.Gap) error {
	if g.Count == 0 {
		c.t.Fatal("empty gap")
	}
	c.at(g.Start, g.Count)
	return nil
}
func (c *checkSink) Mark(meter.MarkEcho) error { return nil }
func (c *checkSink) Event(e meter.Event) error {
	if e.Kind != meter.EventLogic || e.Index > c.next+1<<40 {
		c.t.Fatalf("event %+v", e)
	}
	return nil
}

// fuzzFile opens b as format with o and replays it: never a panic, a
// failure is a *ParseError (with a line and offset inside the file) or an
// options error.
func fuzzFile(t *testing.T, format *Format, b []byte, o Options) {
	f, err := format.Open(bytes.NewReader(b), int64(len(b)), o)
	if err == nil {
		err = f.Replay(context.Background(), &checkSink{t: t})
	}
	if err == nil || errors.Is(err, ErrOptions) {
		return
	}
	var pe *ParseError
	if !errors.As(err, &pe) {
		t.Fatalf("%v is not a ParseError", err)
	}
	if pe.Offset < 0 || pe.Offset > int64(len(b)) || pe.Line < 0 {
		t.Fatalf("%v: offset outside the %d-byte file", err, len(b))
	}
}

func FuzzPPK2CSV(f *testing.F) {
	for _, name := range []string{"separate-lines-1k.csv", "current-only-1k.csv"} {
		b := readFixture(f, "ppk2csv/"+name)
		f.Add(b[:min(len(b), 4000)], false)
	}
	f.Add([]byte("Timestamp(ms),Current(uA),D0-D7\n0,1.000,0000000-\n0.01,2.5,X0000001\n0.03,3,11111111\n"), true)
	f.Add([]byte("Current(uA)\n1\n2\n"), false)
	f.Fuzz(func(t *testing.T, b []byte, d7 bool) {
		fuzzFile(t, ppk2CSVFormat, b, Options{Voltage: 5, Rate: 1000, D7First: d7})
		fuzzFile(t, ppk2CSVFormat, b, Options{Voltage: 3.3})
	})
}

func FuzzOtiiCSV(f *testing.F) {
	b := readFixture(f, "otii/arc-main-wallclock.csv")
	f.Add(b[:3000])
	f.Add([]byte("Timestamp (s),Main Current (mA),Main Voltage (V),GPI1\n0,1,5,0\n0.001,,5,1\n0.003,2,,0\n"))
	f.Add([]byte("\"Wall-clock time (UTC)\",\"Arc Main Current (A)\"\n\"1709294400.5\",\"0.1\"\n\"1709294400.75\",\"0.2\"\n"))
	f.Fuzz(func(t *testing.T, b []byte) {
		fuzzFile(t, otiiCSVFormat, b, Options{Voltage: 5})
		fuzzFile(t, otiiCSVFormat, b, Options{})
	})
}

func FuzzJLSFile(f *testing.F) {
	f.Add(readFixture(f, "jls/tiny.jls"))
	f.Fuzz(func(t *testing.T, b []byte) {
		fuzzFile(t, jlsFormat, b, Options{})
		fuzzFile(t, jlsFormat, b, Options{Voltage: 5})
	})
}
