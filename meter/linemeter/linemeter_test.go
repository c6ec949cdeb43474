package linemeter

import (
	"context"
	"math"
	"strings"
	"testing"

	"github.com/idlewatt/idlewatt/meter"
)

type sink struct {
	v, i  []float64
	idx   []uint64
	marks int
}

func (s *sink) Samples(b *meter.Block) error {
	for k := range b.I {
		s.v, s.i = append(s.v, float64(b.V[k])), append(s.i, float64(b.I[k]))
		s.idx = append(s.idx, b.Start+uint64(k))
	}
	return nil
}
func (*sink) Gap(meter.Gap) error         { return nil }
func (s *sink) Mark(meter.MarkEcho) error { s.marks++; return nil }
func (*sink) Event(meter.Event) error     { return nil }

func TestParseColumns(t *testing.T) {
	c, err := ParseColumns("millis,loadV,current_mA")
	if err != nil || c.Time != 0 || c.TimeScale != 1e-3 || c.Voltage != 1 || c.VoltScale != 1 || c.Current != 2 || c.CurrentScale != 1e-3 {
		t.Fatalf("%+v %v", c, err)
	}
	c, err = ParseColumns("BusV,ShuntV_mV,LoadV,Current_mA")
	if err != nil || c.Voltage != 2 || c.Current != 3 || c.Time != -1 || c.Fields != 4 {
		t.Fatalf("%+v %v", c, err)
	}
	c, err = ParseColumns("t_us\tI_uA")
	if err != nil || c.Sep != "\t" || c.TimeScale != 1e-6 || c.CurrentScale != 1e-6 {
		t.Fatalf("%+v %v", c, err)
	}
	if _, err := ParseColumns("millis,loadV"); err == nil {
		t.Fatal("a map without current accepted")
	}
}

func TestINA226Fixture(t *testing.T) {
	c, _ := ParseColumns("millis,loadV,current_mA")
	m, err := Open("../../fixtures/linemeter/ina226.csv", Options{Columns: c})
	if err != nil {
		t.Fatal(err)
	}
	defer m.Close()
	s := &sink{}
	if err := m.Stream(context.Background(), meter.StreamConfig{}, s); err != nil {
		t.Fatal(err)
	}
	want := []float64{0.1205, 0.121, 0.1195, 0.118}
	if len(s.i) != len(want) || s.idx[3] != 3 || s.v[2] != 5.013 {
		t.Fatalf("I %v V %v", s.i, s.v)
	}
	for k := range want {
		if math.Abs(s.i[k]-want[k]) > 1e-12 {
			t.Fatalf("I %v, want %v", s.i, want)
		}
	}
	b := m.Bad()
	// The banner, the header, "oops" and the short line; the empty line
	// is not counted.
	if b.Count != 4 || b.FirstLine != 1 || !strings.Contains(b.String(), "INA226") {
		t.Fatalf("bad: %v", b)
	}
}

func TestCurrentRanger(t *testing.T) {
	m := New(strings.NewReader("USB LOGGING ENABLED\n0.0012\n1.5e-4\nnan\n"+strings.Repeat("x", 10000)+"\n0.0011\n"),
		Options{Columns: CurrentRanger, Voltage: 3.3})
	s := &sink{}
	if err := m.Stream(context.Background(), meter.StreamConfig{}, s); err != nil {
		t.Fatal(err)
	}
	if len(s.i) != 3 || s.i[1] != 1.5e-4 || s.v[0] != 3.3 || m.Bad().Count != 3 {
		t.Fatalf("I %v V %v bad %v", s.i, s.v, m.Bad())
	}
}

func FuzzParse(f *testing.F) {
	f.Add("millis,loadV,current_mA", []byte("1000,5.012,120.5"))
	f.Add("currentranger", []byte("1.5e-4"))
	f.Add("BusV ShuntV_mV LoadV Current_mA", []byte("5.0 1.2   4.99 nan"))
	f.Fuzz(func(t *testing.T, spec string, line []byte) {
		c, err := ParseColumns(spec)
		if err != nil {
			return
		}
		s, err := c.Parse(line)
		if err == nil && (math.IsNaN(s.I) || math.IsInf(s.I, 0)) {
			t.Fatalf("non-finite current %v from %q", s.I, line)
		}
		m := New(strings.NewReader(string(line)+"\n"+string(line)), Options{Columns: c})
		if err := m.Stream(context.Background(), meter.StreamConfig{}, &sink{}); err != nil {
			t.Fatal(err)
		}
	})
}
