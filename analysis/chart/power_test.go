package chart

import (
	"math/rand/v2"
	"testing"
)

func TestPowerStackedGolden(t *testing.T) {
	f, err := PowerOverTime(synthTraces(t), PowerOpts{
		Title: "Power over time", Subtitle: "synthetic: PCMark-7-like bursts, idle, Slumber, DevSlp",
		Size: Size{6, 4.5},
	})
	if err != nil {
		t.Fatal(err)
	}
	checkGolden(t, "power_stacked", f)
}

func TestPowerOverlayGolden(t *testing.T) {
	f, err := PowerOverTime(synthTraces(t), PowerOpts{
		Title: "Power over time", Layout: Overlay, Size: Size{6, 3.5},
	})
	if err != nil {
		t.Fatal(err)
	}
	checkGolden(t, "power_overlay", f)
}

// A zoom into 0.2 s of a 2 kS/s trace with more chart points than samples
// (what `plot --from --to` gives): a line, not dots; only the states in
// view in the legend; no min–max entry where the band has no width; the
// time labels stay clear of each other.
func TestPowerZoomGolden(t *testing.T) {
	d := synthDrives[0]
	dec, err := NewDecimator(DecimatorOpts{Buckets: 2000, Start: 9.9, Span: 0.2})
	if err != nil {
		t.Fatal(err)
	}
	r := rand.New(rand.NewPCG(d.seed, 42))
	const dt = 1 / 2000.0
	buf := make([]float64, 400)
	for i := range buf {
		buf[i] = d.power(9.9+float64(i)*dt, r)
	}
	dec.AddUniform(9.9, dt, buf)
	tr := Trace{Name: d.name, Power: dec.Envelope(),
		States: []StateSpan{{0, 10, "idle"}, {10, 12.5, "active"}, {46, 60, "devslp"}},
		IO:     []Interval{{10.01, 10.05}},
		Notes:  []Annotation{{10, "workload:pcmark7:all"}, {10.002, "trace 1"}, {10.004, "trace 2"}, {10.01, "first I/O"}}}
	f, err := PowerOverTime([]Trace{tr}, PowerOpts{Title: "Zoomed: 9.9–10.1 s", From: 9.9, To: 10.1, Size: Size{6, 3}})
	if err != nil {
		t.Fatal(err)
	}
	checkGolden(t, "power_zoom", f)
}

// The log axis (plot --log) with mW: DevSlp and active power both readable.
func TestPowerLogGolden(t *testing.T) {
	f, err := PowerOverTime(synthTraces(t)[:1], PowerOpts{Title: "Power over Time: JMF667H 128 GB", Subtitle: "log scale, mW", LogY: true, Unit: UnitMW, Size: Size{6, 3}})
	if err != nil {
		t.Fatal(err)
	}
	checkGolden(t, "power_log", f)
}
