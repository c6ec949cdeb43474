package chart

import (
	"math"
	"strings"
	"testing"

	"gonum.org/v1/plot/vg"
)

// Zoomed in past the sample interval most buckets are empty; the envelope
// must still join the samples (a line, not dots) and break only where a
// sample is missing.
func TestDecimatorZoomJoinsSamples(t *testing.T) {
	d, err := NewDecimator(DecimatorOpts{Buckets: 1000, Start: 0, Span: 0.01}) // 10 µs buckets
	if err != nil {
		t.Fatal(err)
	}
	const dt = 1e-4 // 10 kS/s: a sample every 10 buckets
	for i := 0; i < 100; i++ {
		if i == 50 || i == 51 {
			continue // two samples missing, no Gap call
		}
		d.Add(float64(i)*dt, 1+float64(i%3))
	}
	e := d.Envelope()
	breaks := 0
	for i, m := range e.Mean {
		if math.IsNaN(m) {
			breaks++
			if t0 := e.T[i]; t0 < 49*dt || t0 > 52*dt {
				t.Errorf("break at %g s, want one only between samples 49 and 52", t0)
			}
		}
	}
	if breaks != 1 {
		t.Errorf("%d NaN rows, want 1 (the missing samples), rows %d", breaks, e.Len())
	}
	if got := e.Len(); got != 98+1 {
		t.Errorf("%d rows, want 98 samples + 1 break", got)
	}
	// An explicit Gap still breaks even where samples are dense.
	d2, _ := NewDecimator(DecimatorOpts{Buckets: 100, Start: 0, Span: 1})
	d2.AddUniform(0, 1e-3, make([]float64, 400))
	d2.Gap(0.4, 0.6)
	d2.AddUniform(0.6, 1e-3, make([]float64, 400))
	nan := 0
	for _, m := range d2.Envelope().Mean {
		if math.IsNaN(m) {
			nan++
		}
	}
	if nan == 0 {
		t.Error("a marked gap was joined")
	}
}

func TestLegendOnlyWhatIsInView(t *testing.T) {
	spans := []StateSpan{{0, 10, "idle"}, {10, 10, "slumber"}, {20, 30, "devslp"}}
	if got := strings.Join(statesIn(0, 15, spans), ","); got != "idle" {
		t.Errorf("states in [0,15] = %q, want idle (slumber has no width, devslp is out of view)", got)
	}
	if got := strings.Join(statesIn(0, 40, spans), ","); got != "idle,devslp" {
		t.Errorf("states in [0,40] = %q", got)
	}
	io := []Trace{{IO: []Interval{{1, 2}}}}
	if !ioIn(0, 1.5, io) || ioIn(3, 4, io) {
		t.Error("I/O in view misjudged")
	}
	flat := Envelope{T: []float64{1, 2}, Min: []float64{0.4, 0.4}, Max: []float64{0.4001, 0.4}, Mean: []float64{0.4, 0.4}}
	if bandVisible(flat, 0, 3, 1, 3, 0, false) {
		t.Error("a band 0.1 mW tall on a 3 W axis counted as visible")
	}
	spike := Envelope{T: []float64{1, 2}, Min: []float64{0.4, 0.4}, Max: []float64{2, 0.4}, Mean: []float64{0.5, 0.4}}
	if !bandVisible(spike, 0, 3, 1, 3, 0, false) {
		t.Error("a spike to 2 W not counted as a visible band")
	}
	if bandVisible(spike, 1.5, 3, 1, 3, 0, false) {
		t.Error("a spike outside the view counted")
	}
}

func TestCDFLabelTakesTheReportsQuantiles(t *testing.T) {
	got := cdfLabel("d", []Quantile{{0.5, 0.39986}, {0.99, math.NaN()}}, "W")
	if want := "d (p50 0.3999 W, p99 —)"; got != want {
		t.Errorf("got %q, want %q", got, want)
	}
	if got := cdfLabel("d", []Quantile{{0.5, 0.0046}}, "mW"); got != "d (p50 4.6 mW)" {
		t.Errorf("mW: got %q", got)
	}
	if got := cdfLabel("d", nil, "W"); got != "d" {
		t.Errorf("no quantiles given, none printed: got %q", got)
	}
}

// Crowded events (the demo's 38–43 s) must not pile up: no two labels in
// one row may overlap.
func TestLabelStripNoOverlap(t *testing.T) {
	var notes []Annotation
	for i, s := range []string{"idle:after-workload", "devslp", "devslp-cycle:1", "DEVSLP", "devslp-cycle:2", "DEVSLP", "devslp-cycle:3", "DEVSLP"} {
		notes = append(notes, Annotation{T: 37.7 + 0.5*float64(i), Text: s})
	}
	l := newLabelStrip(notes, nil)
	tr := func(x float64) vg.Length { return vg.Length(x / 43 * 700) }
	ps, rows := l.layout(tr, 0, 700)
	if rows < 2 || rows > l.maxRows {
		t.Fatalf("%d rows", rows)
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
		if a.x0 < 0 || a.x0+sty.Width(a.text) > 700 {
			t.Errorf("%q runs off the strip", a.text)
		}
	}
}

func TestLabelStripOneLabelPerEvent(t *testing.T) {
	l := newLabelStrip([]Annotation{{10, "devslp-cycle:1"}, {10.001, "devslp-cycle:1"}, {20, "devslp-cycle:1"}}, nil)
	ps, _ := l.layout(func(x float64) vg.Length { return vg.Length(x * 10) }, 0, 400)
	if len(ps) != 2 {
		t.Errorf("%d labels, want 2: the same phase of two drives 1 ms apart is one event, the one 10 s later another", len(ps))
	}
}
