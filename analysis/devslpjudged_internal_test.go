package analysis

import (
	"math"
	"testing"

	"github.com/idlewatt/idlewatt/analysis/judge"
	"github.com/idlewatt/idlewatt/hostclock"
	"github.com/idlewatt/idlewatt/states/detect"
	"github.com/idlewatt/idlewatt/states/powerstate"
	"github.com/idlewatt/idlewatt/units"
)

// judgedDevSlp cuts a Slumber span at a judged cycle's entry and rise: the
// middle is DevSlp at the cycle's floor, the rest keeps the span's energy
// and samples; a floor at Slumber's own level is not DevSlp; a span wholly
// inside the cycle keeps its own mean; a busy span is left alone.
func TestJudgedDevSlpCutsAtTheFits(t *testing.T) {
	const period = 100e3 // ns: 10 kS/s
	ms := func(x float64) hostclock.Time { return hostclock.Time(x * 1e6) }
	lv := detect.Levels{Idle: 0.05, Partial: 0.02, Slumber: 0.004}
	// 0–1000 ms Slumber at a mean of 3 mW: 300–800 ms truly DevSlp at 0.5 mW,
	// the rest at (3·1000 − 0.5·500)/500 = 5.5 mW.
	spans := []detect.Span{
		{State: powerstate.Active, Start: ms(-10), End: ms(0), Samples: 100, MeanW: 1, MinW: 0.9, MaxW: 1.1},
		{State: powerstate.Slumber, Start: ms(0), End: ms(1000), Samples: 10000, MeanW: 0.003, MinW: 0, MaxW: 0.01},
	}
	c := judge.Cycle{EntryAt: ms(300), RiseAt: ms(800), FloorW: 0.0005, FloorU95W: 0.0001}
	out := judgedDevSlp(spans, []judge.Cycle{c}, lv, period)
	if len(out) != 4 || out[0].State != powerstate.Active || out[1].State != powerstate.Slumber || out[2].State != powerstate.DevSlp || out[3].State != powerstate.Slumber {
		t.Fatalf("spans %+v", out)
	}
	if out[2].Start != ms(300) || out[2].End != ms(800) || out[2].Samples != 5000 || out[2].MeanW != 0.0005 {
		t.Errorf("DevSlp part %+v, want 300–800 ms, 5000 samples at 0.5 mW", out[2])
	}
	var e, n float64
	for _, sp := range out[1:] {
		e += float64(sp.MeanW) * float64(sp.Samples)
		n += float64(sp.Samples)
	}
	if n != 10000 || math.Abs(e-0.003*10000) > 1e-9 || math.Abs(float64(out[1].MeanW)-0.0055) > 1e-12 {
		t.Errorf("samples %v, energy %v (want 30 mW·samples), the rest at %v W", n, e, out[1].MeanW)
	}
	// A floor at Slumber's level: not DevSlp.
	c2 := c
	c2.FloorW = 0.0039
	if out := judgedDevSlp(spans, []judge.Cycle{c2}, lv, period); len(out) != 2 || out[1].State != powerstate.Slumber {
		t.Errorf("a floor at Slumber's level relabelled: %+v", out)
	}
	// The span wholly inside the cycle: DevSlp at its own mean.
	c3 := c
	c3.EntryAt, c3.RiseAt = ms(-5), ms(1200)
	if out := judgedDevSlp(spans, []judge.Cycle{c3}, lv, period); len(out) != 2 || out[0].State != powerstate.Active || out[1].State != powerstate.DevSlp || out[1].MeanW != units.Watts(0.003) {
		t.Errorf("a span inside the cycle: %+v", out)
	}
}
