package linemeter

import (
	"context"
	"errors"
	"math"
	"reflect"
	"strings"
	"testing"

	"github.com/idlewatt/idlewatt/meter"
	"github.com/idlewatt/idlewatt/units"
)

type sink struct {
	v, i  []float64
	idx   []uint64
	gaps  []meter.Gap
	marks int
}

func (s *sink) Samples(b *meter.Block) error {
	for k := range b.I {
		s.v, s.i = append(s.v, float64(b.V[k])), append(s.i, float64(b.I[k]))
		s.idx = append(s.idx, b.Start+uint64(k))
	}
	return nil
}
func (s *sink) Gap(g meter.Gap) error     { s.gaps = append(s.gaps, g); return nil }
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
	// "oops" (line 5) and the short line (line 8) keep their places: the
	// readings after them are samples 3 and 5, not 2 and 3.
	if len(s.i) != len(want) || !reflect.DeepEqual(s.idx, []uint64{0, 1, 3, 5}) || s.v[2] != 5.013 {
		t.Fatalf("I %v V %v indices %v", s.i, s.v, s.idx)
	}
	wantGaps := []meter.Gap{{Channel: 0, Start: 2, Count: 1, Reason: "bad-line"}, {Channel: 0, Start: 4, Count: 1, Reason: "bad-line"}}
	if !reflect.DeepEqual(s.gaps, wantGaps) {
		t.Fatalf("gaps %+v, want %+v", s.gaps, wantGaps)
	}
	for k := range want {
		if math.Abs(s.i[k]-want[k]) > 1e-12 {
			t.Fatalf("I %v, want %v", s.i, want)
		}
	}
	b := m.Bad()
	// The banner, the header, "oops" and the short line; the empty line
	// is not counted. Only the last two come after the first reading.
	if b.Count != 4 || b.FirstLine != 1 || b.Gaps != 2 || !strings.Contains(b.String(), "INA226") {
		t.Fatalf("bad: %v", b)
	}
	// Line numbers count every line, the empty one too; offsets are bytes.
	wantLines := []BadLine{{Line: 1, Offset: 0}, {Line: 2, Offset: 19}, {Line: 5, Offset: 77}, {Line: 8, Offset: 112}}
	for k, w := range wantLines {
		if k >= len(b.Lines) || b.Lines[k].Line != w.Line || b.Lines[k].Offset != w.Offset {
			t.Fatalf("bad lines %+v, want lines/offsets %+v", b.Lines, wantLines)
		}
	}
	st := m.Stats()
	if st.BadLines != 4 || st.FirstBadLine != 1 || st.FirstBadByte != 0 || st.SamplesLost != 2 || st.Frames != 4 {
		t.Fatalf("stats %+v", st)
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
	// "nan" and the 10000-byte line are samples 2 and 3; 0.0011 is 4.
	if !reflect.DeepEqual(s.idx, []uint64{0, 1, 4}) || gapSamples(s.gaps) != 2 || m.Bad().Gaps != 2 {
		t.Fatalf("indices %v gaps %+v", s.idx, s.gaps)
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
		got := &sink{}
		if err := m.Stream(context.Background(), meter.StreamConfig{}, got); err != nil {
			t.Fatal(err)
		}
		checkTiling(t, got)
		st, b := m.Stats(), m.Bad()
		if st.BadLines != b.Count || st.SamplesLost != b.Gaps || gapSamples(got.gaps) != b.Gaps || st.Frames != uint64(len(got.idx)) {
			t.Fatalf("stats %+v bad %v: %d samples, gaps %+v", st, b, len(got.idx), got.gaps)
		}
	})
}

func gapSamples(gs []meter.Gap) (n uint64) {
	for _, g := range gs {
		n += g.Count
	}
	return n
}

// TestBadLinesKeepTheTimeline: whatever lines arrive, the samples and the
// bad-line gaps tile 0…n without overlap, one index per line that is not a
// preamble or empty, and the counters agree with what was delivered.
func TestBadLinesKeepTheTimeline(t *testing.T) {
	in := "banner\n\n1.0\nbad\nbad\n2.0\n\n1e9\n3.0\nx\n"
	m := New(strings.NewReader(in), Options{Columns: CurrentRanger, Voltage: 5})
	s := &sink{}
	if err := m.Stream(context.Background(), meter.StreamConfig{}, s); err != nil {
		t.Fatal(err)
	}
	// 1.0 → 0, bad bad → 1–2, 2.0 → 3, 1e9 A (implausible) → 4, 3.0 → 5, x → 6.
	if !reflect.DeepEqual(s.idx, []uint64{0, 3, 5}) || gapSamples(s.gaps) != 4 {
		t.Fatalf("indices %v gaps %+v", s.idx, s.gaps)
	}
	checkTiling(t, s)
	b := m.Bad()
	if b.Count != 5 || b.Gaps != 4 || b.Lines[3].Line != 8 || !strings.Contains(b.Lines[3].Why, "outside") {
		t.Fatalf("bad %v", b)
	}
}

// checkTiling asserts samples and gaps cover 0…end once each.
func checkTiling(t *testing.T, s *sink) {
	t.Helper()
	seen := map[uint64]bool{}
	end := uint64(0)
	mark := func(i uint64) {
		if seen[i] {
			t.Fatalf("index %d twice: samples %v gaps %+v", i, s.idx, s.gaps)
		}
		seen[i] = true
		end = max(end, i+1)
	}
	for _, i := range s.idx {
		mark(i)
	}
	for _, g := range s.gaps {
		if g.Reason != "bad-line" || g.Count == 0 {
			t.Fatalf("gap %+v", g)
		}
		for i := g.Start; i < g.Start+g.Count; i++ {
			mark(i)
		}
	}
	if uint64(len(seen)) != end {
		t.Fatalf("indices 0…%d not all covered: samples %v gaps %+v", end, s.idx, s.gaps)
	}
}

func TestOpenRefusesNoVoltage(t *testing.T) {
	for _, v := range []units.Volts{0, -5, 1e6} {
		_, err := Open("../../fixtures/linemeter/currentranger.txt", Options{Columns: CurrentRanger, Voltage: v})
		if !errors.Is(err, meter.ErrCalibration) || !strings.Contains(err.Error(), "Options.Voltage") {
			t.Errorf("voltage %v: %v", v, err)
		}
	}
}
