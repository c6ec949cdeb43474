package importer

import (
	"context"
	"encoding/csv"
	"errors"
	"fmt"
	"io"
	"math"
	"math/rand"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/idlewatt/idlewatt/analysis"
	"github.com/idlewatt/idlewatt/capture"
	"github.com/idlewatt/idlewatt/meter"
	"github.com/idlewatt/idlewatt/meter/files"
	"github.com/idlewatt/idlewatt/units"
)

const fixtures = "../../fixtures"

func TestNotePrefixIsAnalysis(t *testing.T) {
	if NotePrefix != analysis.NoteImported {
		t.Fatalf("importer writes %q, analysis reports %q", NotePrefix, analysis.NoteImported)
	}
}

// captured is what a capture holds, by index.
type captured struct {
	h      capture.Header
	v, i   map[uint64]float32
	gaps   []meter.Gap
	pins   []string
	logic  []string
	io     []capture.IOEvent
	notes  []string
	marks  int
	events int
}

func readCapture(t *testing.T, path string) *captured {
	t.Helper()
	r, err := capture.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	c := &captured{h: r.Header(), v: map[uint64]float32{}, i: map[uint64]float32{}}
	for {
		rec, err := r.Next()
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		switch rec.Kind {
		case capture.KindSamples:
			for k := range rec.Block.I {
				idx := rec.Block.Start + uint64(k)
				c.v[idx], c.i[idx] = float32(rec.Block.V[k]), float32(rec.Block.I[k])
			}
		case capture.KindGap:
			c.gaps = append(c.gaps, rec.Gap)
		case capture.KindEvent:
			switch rec.Event.Kind {
			case meter.EventDevSlp:
				c.pins = append(c.pins, fmt.Sprintf("%d=%d", rec.Event.Index, rec.Event.Value))
			case meter.EventLogic:
				c.logic = append(c.logic, fmt.Sprintf("%d=%x", rec.Event.Index, rec.Event.Value))
			}
		case capture.KindIO:
			c.io = append(c.io, rec.IO...)
		case capture.KindState:
			if rec.State.Kind == capture.StateNote {
				c.notes = append(c.notes, rec.State.Value)
			}
		case capture.KindMark:
			c.marks++
		}
	}
	if !r.Complete() {
		t.Fatal("capture has no end chunk")
	}
	return c
}

func doImport(t *testing.T, in string, o Options) (*Result, string) {
	t.Helper()
	out := filepath.Join(t.TempDir(), "out.iwcap")
	res, err := Import(context.Background(), in, out, o)
	if err != nil {
		t.Fatalf("import %s: %v", in, err)
	}
	return res, out
}

// TestReportAgainstCSVSum: the report of an imported export gives the
// average power and energy that summing the export's rows gives (read here
// with encoding/csv, not with the importer's parser).
func TestReportAgainstCSVSum(t *testing.T) {
	for _, c := range []struct {
		file          string
		voltage       float64
		timeCol, iCol int
		vCol          int     // -1: the given voltage
		iScale        float64 // to A
		rate          float64
	}{
		{"ppk2csv/all-columns-100k.csv", 5, 0, 1, -1, 1e-6, 100000},
		{"ppk2csv/time-current-10k.csv", 3.3, 0, 1, -1, 1e-6, 10000},
		{"otii/arc-main-wallclock.csv", 0, 0, 1, 2, 1, 4000},
	} {
		t.Run(filepath.Base(c.file), func(t *testing.T) {
			in := filepath.Join(fixtures, c.file)
			_, out := doImport(t, in, Options{Options: files.Options{Voltage: units.Volts(c.voltage)}})
			rep, err := analysis.Analyze(out, analysis.DefaultOptions())
			if err != nil {
				t.Fatal(err)
			}
			f, err := os.Open(in)
			if err != nil {
				t.Fatal(err)
			}
			defer f.Close()
			rows, err := csv.NewReader(f).ReadAll()
			if err != nil {
				t.Fatal(err)
			}
			var sum float64
			n := 0
			for _, row := range rows[1:] {
				i, _ := strconv.ParseFloat(row[c.iCol], 64)
				v := c.voltage
				if c.vCol >= 0 {
					v, _ = strconv.ParseFloat(row[c.vCol], 64)
				}
				sum += v * i * c.iScale
				n++
			}
			wantAvg, wantE := sum/float64(n), sum/c.rate
			d := rep.Drives[0]
			if math.Abs(float64(d.AverageW)-wantAvg) > 1e-6*wantAvg || math.Abs(float64(d.EnergyJ)-wantE) > 1e-6*wantE {
				t.Errorf("report average %.9g W, energy %.9g J; rows give %.9g W, %.9g J", d.AverageW, d.EnergyJ, wantAvg, wantE)
			}
			if d.Samples.Count != uint64(n) {
				t.Errorf("report counts %d samples, the file has %d rows", d.Samples.Count, n)
			}
			var notes []string
			for _, x := range rep.Notes {
				if strings.HasPrefix(x, NotePrefix) {
					notes = append(notes, x)
				}
			}
			if len(notes) == 0 {
				t.Errorf("the report repeats none of the import notes: %q", rep.Notes)
			}
		})
	}
}

// TestReportAgainstJLS: the report of an imported JLS file gives the
// average and energy of the samples the upstream reader read
// (fixtures/jls/upstream-read.json: the sum of the current signal).
func TestReportAgainstJLS(t *testing.T) {
	in := filepath.Join(fixtures, "jls", "levels-omit.jls")
	_, out := doImport(t, in, Options{Options: files.Options{Voltage: 3.3}})
	rep, err := analysis.Analyze(out, analysis.DefaultOptions())
	if err != nil {
		t.Fatal(err)
	}
	// upstream-read.json: levels-omit current sum 328.59939981647767 A over
	// 20000 samples at 1 kS/s; at 3.3 V.
	const sum, n, rate = 328.59939981647767, 20000, 1000.0
	wantAvg, wantE := 3.3*sum/n, 3.3*sum/rate
	d := rep.Drives[0]
	if math.Abs(float64(d.AverageW)-wantAvg) > 1e-6*wantAvg || math.Abs(float64(d.EnergyJ)-wantE) > 1e-6*wantE {
		t.Errorf("report %.9g W, %.9g J; upstream read gives %.9g W, %.9g J", d.AverageW, d.EnergyJ, wantAvg, wantE)
	}
}

func TestImportJS220(t *testing.T) {
	in := filepath.Join(fixtures, "jls", "js220-like.jls")
	res, out := doImport(t, in, Options{Options: files.Options{DevSlpLine: "gpi[1]", MarkerLine: "GPI0"}, Name: "ssd", Tool: "test"})
	c := readCapture(t, out)
	if c.h.Meter.Kind != "joulescope" || c.h.RateHz != 1000 || c.h.Drives[0].Name != "ssd" || c.h.Created != "2024-03-01T12:00:00Z" {
		t.Errorf("header %+v", c.h)
	}
	if res.Samples != 10000-5-50 || res.Missing != 55 || res.Span != 10000 || res.IO != 3 {
		t.Errorf("result %+v", res)
	}
	if got := strings.Join(c.pins, " "); got != "0=0 6000=1 9000=0" {
		t.Errorf("DEVSLP events %s", got)
	}
	if len(c.io) != 3 || c.io[0].Issue != 1_000_000_000 || c.io[0].Complete != 1_100_000_000 || c.io[0].Op != 0 {
		t.Errorf("I/O spans %+v", c.io)
	}
	// Synthetic marks once a second and at the last sample.
	if c.marks != 11 {
		t.Errorf("%d marks", c.marks)
	}
	rep, err := analysis.Analyze(out, analysis.DefaultOptions())
	if err != nil {
		t.Fatal(err)
	}
	// First sample 5 (the voltage starts there), last 9999.
	if rep.Alignment.DriftPPM != 0 || math.Abs(float64(rep.Capture.DurationS-9.994)) > 1e-9 {
		t.Errorf("alignment %+v, duration %g", rep.Alignment, rep.Capture.DurationS)
	}
}

// TestSameSignalThreeFormats: the current of the upstream JLS fixture,
// written as a Power Profiler export (µA, 3 decimals) and as an Otii
// export (A, 9 digits), gives the same capture from all three importers:
// samples to the PPK2 export's 0.001 µA, the same lines and pin events.
func TestSameSignalThreeFormats(t *testing.T) {
	dir := t.TempDir()
	jlsPath := filepath.Join(fixtures, "jls", "levels-omit.jls")
	const n = 20000
	cur := func(k int) float32 {
		base := 0.002
		if (k/1000)%3 == 1 && k%1000 < 100 {
			base = 0.4
		}
		return float32(base + 0.0001*float64((k*37)%11))
	}
	lines := func(k int) (a, b int) {
		if k >= 6000 && k < 6500 {
			a = 1
		}
		if k >= 12000 {
			b = 1
		}
		return
	}
	var ppk, otii strings.Builder
	ppk.WriteString("Timestamp(ms),Current(uA),D0-D7\n")
	otii.WriteString(`"Timestamp (s)","Arc Main Current (A)","Arc GPI1","Arc GPI2"` + "\n")
	for k := 0; k < n; k++ {
		a, b := lines(k)
		fmt.Fprintf(&ppk, "%s,%.3f,%d%d000000\n", strconv.FormatFloat(1e6*float64(k)/1000/1000, 'g', -1, 64), float64(cur(k))*1e6, a, b)
		fmt.Fprintf(&otii, "\"%g\",\"%.9g\",\"%d\",\"%d\"\n", float64(k)/1000, cur(k), a, b)
	}
	ppkPath, otiiPath := filepath.Join(dir, "ppk.csv"), filepath.Join(dir, "otii.csv")
	os.WriteFile(ppkPath, []byte(ppk.String()), 0o644)
	os.WriteFile(otiiPath, []byte(otii.String()), 0o644)
	o := files.Options{Voltage: 3.3}
	caps := map[string]*captured{}
	for name, c := range map[string]struct{ path, devslp string }{
		"jls": {jlsPath, "gpi[1]"}, "ppk2": {ppkPath, "D1"}, "otii": {otiiPath, "GPI2"},
	} {
		oo := o
		oo.DevSlpLine = c.devslp
		_, out := doImport(t, c.path, Options{Options: oo})
		caps[name] = readCapture(t, out)
	}
	ref := caps["jls"]
	for name, c := range caps {
		if len(c.i) != n || c.h.RateHz != 1000 {
			t.Fatalf("%s: %d samples at %g S/s", name, len(c.i), float64(c.h.RateHz))
		}
		for k := uint64(0); k < n; k++ {
			if math.Abs(float64(c.i[k])-float64(ref.i[k])) > 0.6e-9+1e-7*float64(ref.i[k]) || c.v[k] != ref.v[k] {
				t.Fatalf("%s sample %d: %.9g A %g V, JLS %.9g A %g V", name, k, c.i[k], c.v[k], ref.i[k], ref.v[k])
			}
		}
		if got, want := strings.Join(c.pins, " "), strings.Join(ref.pins, " "); got != want || want != "0=0 12000=1" {
			t.Errorf("%s pin events %s, JLS %s", name, got, want)
		}
		if got, want := strings.Join(c.logic, " "), strings.Join(ref.logic, " "); got != want {
			t.Errorf("%s logic %s, JLS %s", name, got, want)
		}
	}
}

// TestCSVFormatsAgreeRandom: random signals at the Power Profiler's rates,
// with random rows missing, give the same capture through the PPK2 and the
// Otii importer (the two text formats; a JLS file can only come from the
// upstream writer, above).
func TestCSVFormatsAgreeRandom(t *testing.T) {
	rng := rand.New(rand.NewSource(7))
	rates := []float64{100000, 10000, 1000, 100, 10}
	for trial := 0; trial < 12; trial++ {
		rate := rates[rng.Intn(len(rates))]
		n := 500 + rng.Intn(3000)
		var ppk, otii strings.Builder
		ppk.WriteString("Timestamp(ms),Current(uA),D0-D7\n")
		otii.WriteString("Timestamp (s),Main Current (uA),GPI1\n")
		level := 0
		kept := 0
		for k := 0; k < n; k++ {
			if k > 0 && k < n-1 && rng.Float64() < 0.02 {
				continue // a lost sample
			}
			if rng.Float64() < 0.01 {
				level ^= 1
			}
			ua := math.Round(rng.Float64()*1e9*math.Pow(10, -rng.Float64()*6)) / 1000 // 0.001 µA … 1 A
			ms := 1e6 * float64(k) / rate / 1000
			fmt.Fprintf(&ppk, "%s,%.3f,%d0000000\n", strconv.FormatFloat(ms, 'g', -1, 64), ua, level)
			fmt.Fprintf(&otii, "%s,%.3f,%d\n", strconv.FormatFloat(ms/1000, 'g', -1, 64), ua, level)
			kept++
		}
		dir := t.TempDir()
		a, b := filepath.Join(dir, "p.csv"), filepath.Join(dir, "o.csv")
		os.WriteFile(a, []byte(ppk.String()), 0o644)
		os.WriteFile(b, []byte(otii.String()), 0o644)
		o := Options{Options: files.Options{Voltage: 5, DevSlpLine: "D0"}}
		_, pa := doImport(t, a, o)
		o.DevSlpLine = "GPI1"
		_, pb := doImport(t, b, o)
		ca, cb := readCapture(t, pa), readCapture(t, pb)
		if len(ca.i) != kept || len(cb.i) != kept || float64(ca.h.RateHz) != rate || float64(cb.h.RateHz) != rate {
			t.Fatalf("trial %d: %d and %d samples of %d, rates %g %g (want %g)", trial, len(ca.i), len(cb.i), kept, float64(ca.h.RateHz), float64(cb.h.RateHz), rate)
		}
		for k, x := range ca.i {
			if cb.i[k] != x || cb.v[k] != ca.v[k] {
				t.Fatalf("trial %d sample %d: %g vs %g", trial, k, x, cb.i[k])
			}
		}
		if fmt.Sprint(ca.gaps) != fmt.Sprint(cb.gaps) || strings.Join(ca.pins, " ") != strings.Join(cb.pins, " ") {
			t.Fatalf("trial %d: gaps %v / %v, pins %v / %v", trial, ca.gaps, cb.gaps, ca.pins, cb.pins)
		}
	}
}

func TestImportRefusals(t *testing.T) {
	dir := t.TempDir()
	in := filepath.Join(fixtures, "ppk2csv", "time-current-10k.csv")
	out := filepath.Join(dir, "x.iwcap")
	if _, err := Import(context.Background(), in, out, Options{}); !errors.Is(err, files.ErrOptions) {
		t.Errorf("no voltage: %v", err)
	}
	if _, err := os.Stat(out); !os.IsNotExist(err) {
		t.Errorf("a failed import left %s", out)
	}
	o := Options{Options: files.Options{Voltage: 5}}
	if _, err := Import(context.Background(), in, out, o); err != nil {
		t.Fatal(err)
	}
	before, _ := os.ReadFile(out)
	if _, err := Import(context.Background(), in, out, o); err == nil {
		t.Error("an existing capture was replaced without Overwrite")
	}
	// A malformed file with Overwrite: the old capture stays as it was.
	bad := filepath.Join(dir, "bad.csv")
	os.WriteFile(bad, []byte("Timestamp(ms),Current(uA)\n0,1.000\n1,x\n"), 0o644)
	o.Overwrite = true
	if _, err := Import(context.Background(), bad, out, o); !errors.Is(err, files.ErrMalformed) {
		t.Errorf("malformed: %v", err)
	}
	if after, _ := os.ReadFile(out); string(after) != string(before) {
		t.Error("a failed import with Overwrite changed the old capture")
	}
	if _, err := Import(context.Background(), in, in, o); err == nil {
		t.Error("import over its own input")
	}
	if _, err := Import(context.Background(), in, out, Options{Options: files.Options{Voltage: 5, DevSlpLine: "D3"}}); !errors.Is(err, files.ErrOptions) {
		t.Errorf("a line the export does not have: %v", err)
	}
	ctx, cancel := context.WithCancelCause(context.Background())
	stop := errors.New("stop")
	cancel(stop)
	if _, err := Import(ctx, in, filepath.Join(dir, "y.iwcap"), o); !errors.Is(err, stop) {
		t.Errorf("cancelled: %v", err)
	}
}
