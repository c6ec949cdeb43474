package chart

import (
	"bytes"
	"fmt"

	"encoding/binary"
	"encoding/xml"
	"errors"
	"github.com/idlewatt/idlewatt/units"
	"gonum.org/v1/plot/vg"
	"io"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestSaveChoosesFormatByExtension(t *testing.T) {
	f, err := BarChart([]Bar{{"a", 1, 0}}, BarOpts{Title: "T", Axis: "Power (W)", Size: Size{3, 1.5}})
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	png := filepath.Join(dir, "x.PNG")
	svg := filepath.Join(dir, "x.svg")
	if err := f.Save(png); err != nil {
		t.Fatal(err)
	}
	if err := f.Save(svg); err != nil {
		t.Fatal(err)
	}
	b, _ := os.ReadFile(png)
	if !bytes.HasPrefix(b, []byte("\x89PNG\r\n\x1a\n")) {
		t.Errorf("%s is not a PNG", png)
	}
	// 3 × 1.5 in at 96 DPI.
	if w, h := binary.BigEndian.Uint32(b[16:]), binary.BigEndian.Uint32(b[20:]); w != 288 || h != 144 {
		t.Errorf("PNG is %d×%d, want 288×144", w, h)
	}
	s, _ := os.ReadFile(svg)
	if err := xml.Unmarshal(s, new(struct{ XMLName xml.Name })); err != nil || !bytes.Contains(s, []byte("<svg")) {
		t.Errorf("%s is not SVG XML: %v", svg, err)
	}
	if err := f.Save(filepath.Join(dir, "x.jpg")); !errors.Is(err, ErrFormat) {
		t.Errorf("Save(.jpg) = %v, want ErrFormat", err)
	}
	if ents, _ := os.ReadDir(dir); len(ents) != 2 {
		t.Errorf("directory holds %d files, want 2 (no temporaries left)", len(ents))
	}
}

func TestSVGHasText(t *testing.T) {
	f, err := PowerOverTime(synthTraces(t), PowerOpts{Title: "Power over time"})
	if err != nil {
		t.Fatal(err)
	}
	var buf bytes.Buffer
	if err := f.Write(&buf, "svg"); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"Power over time", "JMF667H 128 GB", "DEVSLP asserted", "Time (s)", "Power (W)", "DevSlp"} {
		if !strings.Contains(buf.String(), want) {
			t.Errorf("SVG lacks %q", want)
		}
	}
}

func TestUnitAuto(t *testing.T) {
	tr := Trace{Power: Envelope{T: []float64{0, 1}, Min: []float64{0.003, 0.004}, Max: []float64{0.005, 0.006}, Mean: []float64{0.004, 0.005}}}
	var buf bytes.Buffer
	f, err := PowerOverTime([]Trace{tr}, PowerOpts{Unit: UnitAuto})
	if err != nil {
		t.Fatal(err)
	}
	if err := f.Write(&buf, "svg"); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(buf.String(), "Power (mW)") {
		t.Error("UnitAuto with all values < 1 W should label the axis in mW")
	}
}

func TestBadInputIsAnError(t *testing.T) {
	nan := math.NaN()
	good := Envelope{T: []float64{0, 1}, Min: []float64{1, 1}, Max: []float64{1, 1}, Mean: []float64{1, 1}}
	cases := map[string]func() error{
		"no traces": func() error { _, err := PowerOverTime(nil, PowerOpts{}); return wantNoData(err) },
		"all gaps": func() error {
			_, err := PowerOverTime([]Trace{{Power: Envelope{T: []float64{0}, Min: []float64{nan}, Max: []float64{nan}, Mean: []float64{nan}}}}, PowerOpts{})
			return wantNoData(err)
		},
		"ragged envelope": func() error {
			_, err := PowerOverTime([]Trace{{Name: "d", Power: Envelope{T: []float64{0, 1}, Min: []float64{1}, Max: []float64{1, 1}, Mean: []float64{1, 1}}}}, PowerOpts{})
			return wantErr(err, `"d"`)
		},
		"time goes back": func() error {
			_, err := PowerOverTime([]Trace{{Power: Envelope{T: []float64{1, 0}, Min: []float64{1, 1}, Max: []float64{1, 1}, Mean: []float64{1, 1}}}}, PowerOpts{})
			return wantErr(err, "T[1]")
		},
		"NaN option": func() error {
			_, err := PowerOverTime([]Trace{{Power: good}}, PowerOpts{From: nan})
			return wantErr(err, "finite")
		},
		"NaN bar":      func() error { _, err := BarChart([]Bar{{"x", nan, 0}}, BarOpts{}); return wantErr(err, `"x"`) },
		"negative err": func() error { _, err := BarChart([]Bar{{"x", 1, -1}}, BarOpts{}); return wantErr(err, `"x"`) },
		"no bars":      func() error { _, err := BarChart(nil, BarOpts{}); return wantNoData(err) },
		"IOPS ragged": func() error {
			_, err := IOPSConsistency([]IOPSSeries{{Name: "s", T: []float64{0}}}, IOPSOpts{})
			return wantErr(err, `"s"`)
		},
		"IOPS negative": func() error {
			_, err := IOPSConsistency([]IOPSSeries{{Name: "s", T: []float64{0}, IOPS: []float64{-1}}}, IOPSOpts{})
			return wantErr(err, "point 0")
		},
		"empty hist": func() error {
			h, _ := NewHist(0, 1, 10, false)
			_, err := Histogram([]Distribution{{Name: "d", Hist: h}}, DistOpts{})
			return wantNoData(err)
		},
		"nil hist": func() error {
			_, err := CDF([]Distribution{{Name: "d", Hist: nil}}, DistOpts{})
			return wantErr(err, `"d"`)
		},
		"bad hist": func() error { _, err := NewHist(0, 1, 10, true); return wantErr(err, "lo > 0") },
		"DevSlp NaN floor": func() error {
			_, err := DevSlpCycleChart(DevSlpCycle{Power: good, Floor: 0, Limit: 0.005, Assert: nan}, DevSlpOpts{})
			if err != nil {
				return err // NaN times are allowed: that line is left out
			}
			// No floor (NaN), or one a little below 0 W (the mean of noisy
			// readings of a µW floor: campaign seed 1 drive 176, −7 µW),
			// is drawn without its line; a negative limit is refused.
			for _, f := range []DevSlpCycle{{Floor: units.Watts(nan)}, {Floor: -7e-6, FloorLo: -1.07e-4, FloorHi: 0.93e-4}} {
				f.Power, f.Limit = good, 0.015
				if _, err = DevSlpCycleChart(f, DevSlpOpts{}); err != nil {
					return fmt.Errorf("floor %g W: %w", f.Floor, err)
				}
			}
			_, err = DevSlpCycleChart(DevSlpCycle{Power: good, Floor: 0.001, Limit: -1}, DevSlpOpts{})
			return wantErr(err, "limit")
		},
	}
	for name, fn := range cases {
		if err := fn(); err != nil {
			t.Errorf("%s: %v", name, err)
		}
	}
}

func wantNoData(err error) error {
	if !errors.Is(err, ErrNoData) {
		return errors.New("got " + errString(err) + ", want ErrNoData")
	}
	return nil
}

func wantErr(err error, sub string) error {
	if err == nil || !strings.Contains(err.Error(), sub) {
		return errors.New("got " + errString(err) + ", want an error mentioning " + sub)
	}
	return nil
}

func errString(err error) string {
	if err == nil {
		return "nil"
	}
	return err.Error()
}

// FuzzPowerOverTime throws arbitrary envelopes, intervals and states at the
// decimator and the chart: they must return an error or draw, never panic.
func FuzzPowerOverTime(f *testing.F) {
	f.Add([]byte{0, 1, 2, 3, 4, 5, 6, 7, 8, 9}, uint8(0))
	f.Add(bytes.Repeat([]byte{0xff, 0x7f}, 40), uint8(1))
	f.Add(bytes.Repeat([]byte{0x00, 0x00, 0xf8, 0x7f}, 20), uint8(2)) // NaN payloads
	f.Fuzz(fuzzBody)
}

func fuzzBody(t *testing.T, data []byte, mode uint8) {
	{
		fl := func(i int) float64 {
			if len(data) < 8 {
				return float64(i)
			}
			j := (i * 3) % (len(data) - 7)
			return math.Float64frombits(binary.LittleEndian.Uint64(data[j:]))
		}
		d, err := NewDecimator(DecimatorOpts{Buckets: 2 + int(mode)%50, Span: float64(mode % 3), InitialWidth: 1e-3})
		if err != nil {
			t.Fatal(err)
		}
		n := len(data) / 2
		for i := 0; i < n; i++ {
			switch i % 4 {
			case 0:
				d.Add(fl(i), fl(i+1))
			case 1:
				d.AddSummary(fl(i), fl(i+1), fl(i+2), fl(i+3), int(data[i%len(data)])-10)
			case 2:
				d.Gap(fl(i), fl(i+1))
			default:
				d.AddUniform(fl(i), fl(i+1), []float64{fl(i + 2), fl(i + 3), 0.5})
			}
		}
		env := d.Envelope()
		if err := env.Validate(); err != nil {
			t.Fatalf("decimator produced an invalid envelope: %v", err)
		}
		raw := Envelope{}
		for i := 0; i < n/4; i++ {
			raw.T = append(raw.T, fl(i))
			raw.Min = append(raw.Min, fl(i+1))
			raw.Max = append(raw.Max, fl(i+2))
			raw.Mean = append(raw.Mean, fl(i+3))
		}
		var iv []Interval
		var st []StateSpan
		var notes []Annotation
		for i := 0; i < n/8; i++ {
			iv = append(iv, Interval{Start: fl(i), End: fl(i + 5)})
			st = append(st, StateSpan{Start: fl(i + 1), End: fl(i + 2), State: string(data[i : i+1])})
			notes = append(notes, Annotation{T: fl(i + 3), Text: "x"})
		}
		trs := []Trace{{Power: env, IO: iv, States: st, Notes: notes}, {Power: raw}}
		o := PowerOpts{Layout: Layout(mode % 2), Unit: PowerUnit(mode % 3), From: fl(1), To: fl(2), YMax: fl(3), LogY: mode%4 == 3, Size: Size{2, 2}, DPI: 30}
		if fig, err := PowerOverTime(trs, o); err == nil {
			_ = fig.Write(io.Discard, "png")
		}
		if fig, err := DevSlpCycleChart(DevSlpCycle{Power: env, Assert: fl(1), Deassert: fl(2), FloorReached: fl(3), FirstIO: fl(4)}, DevSlpOpts{LogY: mode%2 == 0, Size: Size{2, 2}, DPI: 30}); err == nil {
			_ = fig.Write(io.Discard, "png")
		}
	}
}

// Event labels in the DevSlp chart's strip never overlap within a row, and
// the strip reserves as many rows as it draws.
func TestLabelStripRows(t *testing.T) {
	var notes []Annotation
	for i, s := range []string{"idle:after-workload", "devslp", "devslp-cycle:1", "DEVSLP", "devslp-cycle:2", "DEVSLP", "devslp-cycle:3", "DEVSLP"} {
		notes = append(notes, Annotation{T: 37.7 + 0.5*float64(i), Text: s})
	}
	notes = append(notes, Annotation{T: 38.7001, Text: "devslp-cycle:1"}) // the same event on a second drive
	l := newLabelStrip(notes, nil)
	tr := func(x float64) vg.Length { return vg.Length(x / 43 * 700) }
	ps, rows := l.layout(tr, 0, 700)
	if len(ps) != 8 {
		t.Errorf("%d labels, want 8 (one per event)", len(ps))
	}
	sty := l.style()
	for i, a := range ps {
		if a.row < 0 {
			t.Errorf("label %q not placed", a.text)
		}
		for _, b := range ps[i+1:] {
			if a.row == b.row && a.x0 < b.x0+sty.Width(b.text) && b.x0 < a.x0+sty.Width(a.text) {
				t.Errorf("%q and %q overlap in row %d", a.text, b.text, a.row)
			}
		}
	}
	if h := l.height(0, 43, 700); h < vg.Length(rows)*l.rowHeight() {
		t.Errorf("strip %v tall for %d rows of %v", h, rows, l.rowHeight())
	}
}

// The min–max legend swatch shows each colour a band is drawn in, and only
// those: a drive with a flat envelope has no band and no part in it.
func TestBandColorsPerDrive(t *testing.T) {
	band := Envelope{T: []float64{0, 1}, Min: []float64{0.1, 0.1}, Max: []float64{0.5, 0.1}, Mean: []float64{0.2, 0.1}}
	flat := Envelope{T: []float64{0, 1}, Min: []float64{0.1, 0.1}, Max: []float64{0.1, 0.1}, Mean: []float64{0.1, 0.1}}
	cs := bandColors([]Trace{{Power: band}, {Power: flat}, {Power: band}})
	if len(cs) != 2 || cs[0] != tint(seriesColor(0), 70) || cs[1] != tint(seriesColor(2), 70) {
		t.Errorf("band colours %v, want drive 1's and drive 3's tints", cs)
	}
}

// The CDF legend prints the report's quantiles as report.md does (p99
// 1.1074 W, not 1.107 W), and none it was not given.
func TestQuantileTextAsReport(t *testing.T) {
	if got := quantileText(0.99, 1.10742, "W"); got != "p99 1.1074 W" {
		t.Errorf("got %q", got)
	}
	if got := quantileText(0.5, 0.39984, "mW"); got != "p50 399.8 mW" {
		t.Errorf("got %q", got)
	}
}
