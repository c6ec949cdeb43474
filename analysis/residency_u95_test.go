package analysis

import (
	"math"
	"testing"
	"time"

	"github.com/idlewatt/idlewatt/states/detect"
	"github.com/idlewatt/idlewatt/states/powerstate"
	"github.com/idlewatt/idlewatt/units"
)

// A state whose level was learned but which no span entered is not known
// to be 0: excursions into it shorter than half the window hide at its
// neighbours' boundaries, so its interval must be wider than 0 (it was
// exactly 0 before: the blind campaign's partial at 0.4–2.9 % truth read
// 0 ± 0).
func TestUnenteredStateIntervalHoldsHiddenExcursions(t *testing.T) {
	s := &StateReport{
		Levels:       detect.Levels{Idle: 0.06, Partial: 0.02, Slumber: 0.003},
		MeasuredS:    10,
		Residency:    map[string]float64{"idle": 0.4, "slumber": 0.6},
		Spans:        map[string]int{"idle": 5, "slumber": 5},
		ResidencyU95: map[string]float64{},
		PowerU95W:    map[string]units.Watts{},
	}
	spans := []detect.Span{}
	for i := 0; i < 5; i++ {
		spans = append(spans, detect.Span{State: powerstate.Idle, Samples: 100, MeanW: 0.06},
			detect.Span{State: powerstate.Slumber, Samples: 100, MeanW: 0.003})
	}
	// No noise: the misread term is 0, only the hidden excursions remain.
	cn := classNoise{smooth: 2 * time.Millisecond, period: 100 * time.Microsecond}
	s.uncertainty(spans, cn, nil)
	// partial sits between idle and slumber: 2·5 + 2·5 boundaries, W/2 = 1 ms each.
	want := 1.96 * (20 * 0.001 / 10) / math.Sqrt(3)
	if got := s.ResidencyU95["partial"]; math.Abs(got-want) > 1e-12 {
		t.Fatalf("partial u95 = %g, want %g (20 boundaries × W/2 ÷ T, rectangular)", got, want)
	}
	if got := s.ResidencyU95["devslp"]; got != 0 {
		t.Fatalf("devslp has no level: u95 = %g, want 0", got)
	}
}

// Samples clearly in one state's band inside another state's spans move
// the truth away from the measured residency by up to their count: the
// interval must grow by max(out, in)·P/T for each state, linearly, and
// states.json must say how many.
func TestMisplacedSamplesWidenTheInterval(t *testing.T) {
	base := func() *StateReport {
		return &StateReport{
			Levels:       detect.Levels{Idle: 0.40, Partial: 0.30},
			MeasuredS:    1,
			Residency:    map[string]float64{"idle": 0.5, "partial": 0.5},
			Spans:        map[string]int{"idle": 1, "partial": 1},
			ResidencyU95: map[string]float64{},
			PowerU95W:    map[string]units.Watts{},
		}
	}
	spans := func(hidden int32) []detect.Span {
		p := detect.Span{State: powerstate.Partial, Samples: 5000, MeanW: 0.30}
		p.Clear[powerstate.Partial] = 5000 - hidden
		p.Clear[powerstate.Idle] = hidden
		i := detect.Span{State: powerstate.Idle, Samples: 5000, MeanW: 0.40}
		i.Clear[powerstate.Idle] = 5000
		return []detect.Span{i, p}
	}
	cn := classNoise{smooth: 2 * time.Millisecond, period: 100 * time.Microsecond}
	ref := base()
	ref.uncertainty(spans(0), cn, nil)
	got := base()
	got.uncertainty(spans(180), cn, nil)
	want := 180 * 100e-6 / 1.0
	for _, st := range []string{"idle", "partial"} {
		if d := got.ResidencyU95[st] - ref.ResidencyU95[st]; math.Abs(d-want) > 1e-12 {
			t.Errorf("%s: interval grew by %g, want %g (180 samples × 100 µs ÷ 1 s)", st, d, want)
		}
	}
	if m := got.Misplaced; m["idle"] != (MisplacedCount{In: 180}) || m["partial"] != (MisplacedCount{Out: 180}) {
		t.Errorf("misplaced = %+v, want idle in 180, partial out 180", m)
	}
	if ref.Misplaced != nil {
		t.Errorf("no misplaced samples, yet misplaced = %+v", ref.Misplaced)
	}
}

// Excursions the dwell absorbed (detect.Classifier.Hidden) count like
// clear misplaced samples, each state taking the larger of the two
// counts: 180 hidden idle samples in partial spans of which Clear saw 60
// widen both intervals by 180 samples, not 60.
func TestHiddenExcursionsWidenTheInterval(t *testing.T) {
	mk := func() *StateReport {
		return &StateReport{
			Levels: detect.Levels{Idle: 0.40, Partial: 0.30}, MeasuredS: 1,
			Residency: map[string]float64{"idle": 0.5, "partial": 0.5}, Spans: map[string]int{"idle": 1, "partial": 1},
			ResidencyU95: map[string]float64{}, PowerU95W: map[string]units.Watts{},
		}
	}
	p := detect.Span{State: powerstate.Partial, Samples: 5000, MeanW: 0.30}
	p.Clear[powerstate.Partial], p.Clear[powerstate.Idle] = 4940, 60
	i := detect.Span{State: powerstate.Idle, Samples: 5000, MeanW: 0.40}
	i.Clear[powerstate.Idle] = 5000
	spans := []detect.Span{i, p}
	cn := classNoise{smooth: 2 * time.Millisecond, period: 100 * time.Microsecond}
	ref := mk()
	ref.uncertainty(spans, cn, nil)
	cn.hidden[powerstate.Partial][powerstate.Idle] = 180
	got := mk()
	got.uncertainty(spans, cn, nil)
	want := (180 - 60) * 100e-6 / 1.0
	for _, st := range []string{"idle", "partial"} {
		if d := got.ResidencyU95[st] - ref.ResidencyU95[st]; math.Abs(d-want) > 1e-12 {
			t.Errorf("%s: interval grew by %g, want %g (180 hidden − 60 clear samples × 100 µs ÷ 1 s)", st, d, want)
		}
	}
	if m := got.Misplaced; m["idle"] != (MisplacedCount{In: 180}) || m["partial"] != (MisplacedCount{Out: 180}) {
		t.Errorf("misplaced = %+v, want idle in 180, partial out 180", m)
	}
}
