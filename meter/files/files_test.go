package files

import (
	"bytes"
	"context"
	"errors"
	"math"
	"os"
	"path/filepath"
	"testing"

	"github.com/idlewatt/idlewatt/meter"
	"github.com/idlewatt/idlewatt/units"
)

const fixtures = "../../fixtures"

// record is a sink that keeps everything a replay delivers, by index.
type record struct {
	v, i   map[uint64]float64
	order  []uint64 // indices in delivery order
	gaps   []meter.Gap
	events []meter.Event
}

func newRecord() *record { return &record{v: map[uint64]float64{}, i: map[uint64]float64{}} }

func (r *record) Samples(b *meter.Block) error {
	for k := range b.I {
		idx := b.Start + uint64(k)
		if _, dup := r.i[idx]; dup {
			return errors.New("index delivered twice")
		}
		r.v[idx], r.i[idx] = float64(b.V[k]), float64(b.I[k])
		r.order = append(r.order, idx)
	}
	return nil
}
func (r *record) Gap(g meter.Gap) error     { r.gaps = append(r.gaps, g); return nil }
func (r *record) Mark(meter.MarkEcho) error { return nil }
func (r *record) Event(e meter.Event) error { r.events = append(r.events, e); return nil }

// checkTiling: samples and gaps cover [0, end) once each, in order.
func (r *record) checkTiling(t *testing.T) uint64 {
	t.Helper()
	covered := map[uint64]bool{}
	for _, idx := range r.order {
		covered[idx] = true
	}
	for _, g := range r.gaps {
		for k := g.Start; k < g.Start+g.Count; k++ {
			if covered[k] {
				t.Fatalf("index %d is both a sample and in gap %+v", k, g)
			}
			covered[k] = true
		}
	}
	end := uint64(len(covered))
	for k := uint64(0); k < end; k++ {
		if !covered[k] {
			t.Fatalf("index %d is neither a sample nor a gap (%d indices covered)", k, end)
		}
	}
	for k := 1; k < len(r.order); k++ {
		if r.order[k] <= r.order[k-1] {
			t.Fatalf("samples out of order: %d after %d", r.order[k], r.order[k-1])
		}
	}
	return end
}

func openFile(t *testing.T, path string, o Options) File {
	t.Helper()
	f, err := Open(path, o)
	if err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	t.Cleanup(func() { f.Close() })
	return f
}

func replay(t *testing.T, f File) *record {
	t.Helper()
	r := newRecord()
	if err := f.Replay(context.Background(), r); err != nil {
		t.Fatal(err)
	}
	return r
}

// openBytes opens an in-memory file of a known format.
func openBytes(b []byte, o Options) (File, error) {
	format := Detect(b[:min(len(b), DetectBytes)])
	if format == nil {
		return nil, ErrUnknownFormat
	}
	return format.Open(bytes.NewReader(b), int64(len(b)), o)
}

// fixtureCurrent is the current of every fixture (fixtures/jls/README.md).
func fixtureCurrent(n int64) float64 {
	base := 0.002
	if (n/1000)%3 == 1 && n%1000 < 100 {
		base = 0.4
	}
	return float64(float32(base + 0.0001*float64((n*37)%11)))
}

func TestDetect(t *testing.T) {
	for path, want := range map[string]string{
		"jls/js220-like.jls":            "jls",
		"jls/levels-omit.jls":           "jls",
		"ppk2csv/all-columns-100k.csv":  "ppk2-csv",
		"ppk2csv/time-current-10k.csv":  "ppk2-csv",
		"ppk2csv/current-only-1k.csv":   "ppk2-csv",
		"ppk2csv/separate-lines-1k.csv": "ppk2-csv",
		"otii/arc-main-wallclock.csv":   "otii-csv",
		"capture/tiny.iwcap":            "",
		"linemeter/currentranger.txt":   "",
		"battery/idle-series.csv":       "",
	} {
		f := Sniff(filepath.Join(fixtures, path))
		got := ""
		if f != nil {
			got = f.Name
		}
		if got != want {
			t.Errorf("%s: detected %q, want %q", path, got, want)
		}
	}
	if _, err := Open(filepath.Join(fixtures, "capture/tiny.iwcap"), Options{}); !errors.Is(err, ErrUnknownFormat) {
		t.Errorf("a capture: %v, want ErrUnknownFormat", err)
	}
}

func TestLineBit(t *testing.T) {
	info := Info{Format: "jls", Lines: []string{"gpi[0]", "gpi[1]", "trigger_in"}}
	for name, want := range map[string]int{"gpi[1]": 1, "GPI1": 1, "gpi 0": 0, "TRIGGER_IN": 2, "": -1} {
		if got, err := LineBit(info, name); got != want || err != nil {
			t.Errorf("LineBit(%q) = %d, %v; want %d", name, got, err, want)
		}
	}
	if _, err := LineBit(info, "D3"); !errors.Is(err, ErrOptions) {
		t.Errorf("an unknown line: %v", err)
	}
}

func TestLineSink(t *testing.T) {
	r := newRecord()
	var spans [][2]uint64
	ls := &LineSink{Sink: r, DevSlp: 3, Marker: 0, Port: 2, OnMarker: func(a, b uint64) error {
		spans = append(spans, [2]uint64{a, b})
		return nil
	}}
	for _, e := range []struct {
		idx uint64
		v   int64
	}{{0, 0}, {10, 1}, {20, 1 | 8}, {30, 8}, {40, 9}, {50, 0}} {
		if err := ls.Event(meter.Event{Kind: meter.EventLogic, Port: 2, Index: e.idx, Value: e.v}); err != nil {
			t.Fatal(err)
		}
	}
	if err := ls.Event(meter.Event{Kind: meter.EventLogic, Index: 60, Value: 1}); err != nil {
		t.Fatal(err)
	}
	if err := ls.Finish(70); err != nil {
		t.Fatal(err)
	}
	var pins []string
	for _, e := range r.events {
		if e.Kind == meter.EventDevSlp {
			if e.Port != 2 {
				t.Errorf("pin event on port %d", e.Port)
			}
			pins = append(pins, string(rune('0'+e.Value))+"@"+itoa(e.Index))
		}
	}
	if got := join(pins); got != "0@0 1@20 0@50" {
		t.Errorf("pin events %s", got)
	}
	if len(spans) != 3 || spans[0] != [2]uint64{10, 30} || spans[1] != [2]uint64{40, 50} || spans[2] != [2]uint64{60, 70} {
		t.Errorf("marker spans %v", spans)
	}
}

func itoa(x uint64) string { return string(appendUint(nil, x)) }
func appendUint(b []byte, x uint64) []byte {
	if x >= 10 {
		b = appendUint(b, x/10)
	}
	return append(b, byte('0'+x%10))
}
func join(s []string) string {
	out := ""
	for i, x := range s {
		if i > 0 {
			out += " "
		}
		out += x
	}
	return out
}

// near compares a parsed current with its expectation to the resolution of
// the format that carried it.
func near(got, want, res float64) bool { return math.Abs(got-want) <= res }

func readFixture(t testing.TB, path string) []byte {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(fixtures, path))
	if err != nil {
		t.Fatal(err)
	}
	return b
}

var _ = units.Volts(0)
