package chart

import (
	"math"
	"testing"
)

func TestDecimatorFixedSpan(t *testing.T) {
	d, err := NewDecimator(DecimatorOpts{Buckets: 10, Span: 1})
	if err != nil {
		t.Fatal(err)
	}
	// 1000 samples over 1 s: a ramp 0..999 mW, one spike.
	for i := 0; i < 1000; i++ {
		w := float64(i) / 1000
		if i == 555 {
			w = 5
		}
		d.Add((float64(i)+0.5)/1000, w) // mid-sample times: no edge ambiguity
	}
	d.Add(1.5, 1) // outside the span
	e := d.Envelope()
	if e.Len() != 10 {
		t.Fatalf("rows = %d, want 10", e.Len())
	}
	if d.Dropped() != 1 {
		t.Errorf("Dropped = %d, want 1", d.Dropped())
	}
	if got := e.Max[5]; got != 5 {
		t.Errorf("bucket 5 max = %g, want the 5 W spike", got)
	}
	if got, want := e.Min[3], 0.3; math.Abs(got-want) > 1e-12 {
		t.Errorf("bucket 3 min = %g, want %g", got, want)
	}
	if got, want := e.Mean[2], 0.2495; math.Abs(got-want) > 1e-9 {
		t.Errorf("bucket 2 mean = %g, want %g", got, want)
	}
	if got, want := e.T[0], 0.05; math.Abs(got-want) > 1e-12 {
		t.Errorf("T[0] = %g, want bucket centre %g", got, want)
	}
}

// AddUniform must agree with Add sample by sample: it is only a faster path.
func TestDecimatorUniformMatchesAdd(t *testing.T) {
	a, _ := NewDecimator(DecimatorOpts{Buckets: 64})
	b, _ := NewDecimator(DecimatorOpts{Buckets: 64})
	const dt = 1e-4
	w := make([]float64, 1000)
	for blk := 0; blk < 50; blk++ {
		t0 := float64(blk*len(w)) * dt
		for i := range w {
			w[i] = math.Sin(float64(blk*len(w)+i) / 300)
			a.Add(t0+float64(i)*dt, w[i])
		}
		b.AddUniform(t0, dt, w)
	}
	ea, eb := a.Envelope(), b.Envelope()
	if ea.Len() != eb.Len() || ea.Len() < 32 || ea.Len() > 64 {
		t.Fatalf("rows %d vs %d, want equal and in [32, 64]", ea.Len(), eb.Len())
	}
	for i := range ea.T {
		if ea.Min[i] != eb.Min[i] || ea.Max[i] != eb.Max[i] || math.Abs(ea.Mean[i]-eb.Mean[i]) > 1e-12 {
			t.Fatalf("row %d: Add %g/%g/%g, AddUniform %g/%g/%g", i, ea.Min[i], ea.Max[i], ea.Mean[i], eb.Min[i], eb.Max[i], eb.Mean[i])
		}
	}
}

// A growing decimator must keep the exact mean of everything it was fed.
func TestDecimatorGrowKeepsEnergy(t *testing.T) {
	d, _ := NewDecimator(DecimatorOpts{Buckets: 100, InitialWidth: 1e-3})
	var sum float64
	n := 0
	for i := 0; i < 100000; i++ { // 10 s at 10 kS/s: 10 doublings
		w := 0.2 + 0.1*float64(i%7)
		d.Add(float64(i)*1e-4, w)
		sum += w
		n++
	}
	e := d.Envelope()
	if e.Len() < 50 || e.Len() > 100 {
		t.Fatalf("rows = %d, want 50..100", e.Len())
	}
	// Rows are equally wide, so row means weighted by row samples give the
	// overall mean; every row here has the same count except maybe the last.
	var got float64
	w := d.Width()
	for i := range e.T {
		lo := e.T[i] - w/2
		hi := math.Min(e.T[i]+w/2, 10)
		got += e.Mean[i] * (hi - lo) / 10
	}
	if want := sum / float64(n); math.Abs(got-want) > 1e-3 {
		t.Errorf("time-weighted mean %g, want %g", got, want)
	}
	if math.Abs(w*float64(e.Len())-10) > w {
		t.Errorf("width %g × rows %d does not cover 10 s", w, e.Len())
	}
}

func TestDecimatorGaps(t *testing.T) {
	d, _ := NewDecimator(DecimatorOpts{Buckets: 10, Span: 10})
	for i := 0; i < 100; i++ {
		x := float64(i) / 10
		if x >= 4 && x < 6 { // two empty buckets
			continue
		}
		d.Add(x, 1)
	}
	d.Add(8.55, math.NaN()) // a break inside bucket 8
	e := d.Envelope()
	var nanAt []float64
	for i := range e.T {
		if math.IsNaN(e.Mean[i]) {
			nanAt = append(nanAt, e.T[i])
		}
	}
	want := []float64{4.5, 5.5, 9}
	if len(nanAt) != len(want) {
		t.Fatalf("NaN rows at %v, want %v", nanAt, want)
	}
	for i := range want {
		if math.Abs(nanAt[i]-want[i]) > 1e-9 {
			t.Fatalf("NaN rows at %v, want %v", nanAt, want)
		}
	}
	if err := e.validate(); err != nil {
		t.Fatal(err)
	}
}

func TestDecimatorSummary(t *testing.T) {
	d, _ := NewDecimator(DecimatorOpts{Buckets: 4, Span: 4})
	d.AddSummary(0.1, 0.1, 0.9, 0.5, 100)
	d.AddSummary(0.6, 0.2, 0.3, 0.25, 300)
	d.AddSummary(2.2, 0, 0, math.NaN(), 10) // a gap summary
	d.AddSummary(3.5, 1, 1, 1, 1)
	e := d.Envelope()
	if e.Len() != 4 {
		t.Fatalf("rows = %d, want 4", e.Len())
	}
	if got, want := e.Mean[0], (0.5*100+0.25*300)/400; math.Abs(got-want) > 1e-12 {
		t.Errorf("weighted mean %g, want %g", got, want)
	}
	if e.Min[0] != 0.1 || e.Max[0] != 0.9 {
		t.Errorf("bucket 0 min/max %g/%g, want 0.1/0.9", e.Min[0], e.Max[0])
	}
	if !math.IsNaN(e.Mean[1]) || !math.IsNaN(e.Mean[2]) {
		t.Errorf("buckets 1, 2 should be gaps: %v", e.Mean)
	}
}

func TestDecimatorBadOptions(t *testing.T) {
	for _, o := range []DecimatorOpts{
		{Buckets: 1}, {Buckets: -5}, {Start: math.NaN()}, {Span: math.Inf(1)}, {InitialWidth: -1},
	} {
		if _, err := NewDecimator(o); err == nil {
			t.Errorf("NewDecimator(%+v): no error", o)
		}
	}
}

func TestDecimatorNoAllocs(t *testing.T) {
	d, _ := NewDecimator(DecimatorOpts{Buckets: 2000, Span: 3600})
	w := make([]float64, 1000)
	for i := range w {
		w[i] = float64(i) * 1e-3
	}
	t0 := 0.0
	allocs := testing.AllocsPerRun(200, func() {
		d.AddUniform(t0, 1e-4, w)
		d.Add(t0, 0.5)
		d.AddSummary(t0, 0.1, 0.2, 0.15, 10)
		t0 += 0.1
	})
	if allocs != 0 {
		t.Errorf("%v allocations per block, want 0", allocs)
	}
}

// Zoomed in until buckets are narrower than the samples, the envelope has
// no NaN rows between samples (the line stays a line), but a missing
// sample still breaks it.
func TestDecimatorZoomedKeepsLine(t *testing.T) {
	d, err := NewDecimator(DecimatorOpts{Buckets: 2000, Start: 1, Span: 0.01}) // 5 µs buckets
	if err != nil {
		t.Fatal(err)
	}
	w := make([]float64, 100)
	for i := range w {
		w[i] = float64(i % 7)
	}
	d.AddUniform(1, 1e-4, w[:50])       // 100 µs samples, 1.000–1.0049 s
	d.AddUniform(1+51e-4, 1e-4, w[51:]) // one sample missing at 1.0050 s
	e := d.Envelope()
	nan := 0
	for k, m := range e.Mean {
		if m != m {
			nan++
			if e.T[k] < 1.0049 || e.T[k] > 1.0051 {
				t.Errorf("NaN row at %.6f s, between samples", e.T[k])
			}
		}
	}
	if nan == 0 {
		t.Error("the missing sample at 1.0050 s does not break the line")
	}
	if n := e.Len() - nan; n != 99 {
		t.Errorf("%d data rows, want 99 (one per sample)", n)
	}
}

// Summary points further apart than the buckets also make a line.
func TestDecimatorSummariesKeepLine(t *testing.T) {
	d, err := NewDecimator(DecimatorOpts{Buckets: 1000, Start: 0, Span: 10}) // 10 ms buckets
	if err != nil {
		t.Fatal(err)
	}
	for k := 0; k < 100; k++ { // one point per 0.1 s
		if k == 50 {
			continue // a missing point: a real gap
		}
		d.AddSummary(0.05+0.1*float64(k), 1, 2, 1.5, 1000)
	}
	e := d.Envelope()
	nan := 0
	for k, m := range e.Mean {
		if m != m {
			nan++
			if e.T[k] < 4.95 || e.T[k] > 5.15 {
				t.Errorf("NaN row at %.3f s, between summary points", e.T[k])
			}
		}
	}
	if nan == 0 || e.Len()-nan != 99 {
		t.Errorf("%d rows, %d NaN: want 99 data rows and a break at 5 s", e.Len(), nan)
	}
}
