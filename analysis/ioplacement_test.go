package analysis

import (
	"math"
	"math/rand/v2"
	"sort"
	"testing"
	"time"

	"github.com/idlewatt/idlewatt/hostclock"
	"github.com/idlewatt/idlewatt/meter"
	"github.com/idlewatt/idlewatt/states/detect"
	"github.com/idlewatt/idlewatt/states/powerstate"
	"github.com/idlewatt/idlewatt/units"
)

// TestIOPlacementCoversTheClockLine: the I/O edges are host times put on
// the samples by the clock line, and a line through a few marks whose
// stamps scatter by milliseconds (a loaded host; campaign seed 11 hub 44:
// 5 marks, 8.9 ms RMS) is off by that much for every edge alike. A state
// entered after each of k reads then gains k times the line's error. Here
// marks scatter by 0.05 or 3 ms about the true line, 4–12 of them, the
// drive reads k = 1, 4 or 16 times at 2 or 10 kS/s; the error each state's
// time takes from the line is known exactly (the true line is known). The
// interval ioPlacement states holds it in ≥ 92 % of the draws of every
// setting, where a sample's placement alone (what the timing term gives an
// I/O edge) holds it in under 70 % once the scatter is 3 ms.
func TestIOPlacementCoversTheClockLine(t *testing.T) {
	rng := rand.New(rand.NewPCG(11, 44))
	for _, rate := range []float64{2000, 10000} {
		for _, nMarks := range []int{4, 12} {
			for _, jitterMs := range []float64{0.05, 3} {
				for _, k := range []int{1, 4, 16} {
					const draws = 400
					held, heldSample := 0, 0
					var widths []float64
					for range draws {
						err, u, ok := placementDraw(rng, rate, nMarks, jitterMs, k)
						if !ok {
							continue // four scattered marks may imply a drift the fit refuses
						}
						if math.Abs(err) <= u {
							held++
						}
						// A sample per edge, in quadrature (the timing term's P).
						if math.Abs(err) <= 1.96*math.Sqrt(float64(k)/12)/rate {
							heldSample++
						}
						widths = append(widths, u)
					}
					sort.Float64s(widths)
					if len(widths) < draws*8/10 {
						t.Fatalf("rate %g, %d marks, scatter %g ms: a line error in %d of %d draws", rate, nMarks, jitterMs, len(widths), draws)
					}
					if held < len(widths)*92/100 {
						t.Errorf("rate %g, %d marks, scatter %g ms, %d reads: interval held %d of %d", rate, nMarks, jitterMs, k, held, draws)
					}
					if jitterMs >= 1 && heldSample > len(widths)*70/100 {
						t.Errorf("rate %g, %d marks, scatter %g ms, %d reads: a sample per edge held %d of %d: the setting does not test the term", rate, nMarks, jitterMs, k, heldSample, draws)
					}
					// Not needlessly wide: the median half-width stays within
					// 5 × the line's offset error × k (Student t at 2 dof is 4.3).
					if med := widths[len(widths)/2]; med > 5*float64(k)*jitterMs*1e-3/math.Sqrt(float64(nMarks))*1.5 {
						t.Errorf("rate %g, %d marks, scatter %g ms, %d reads: median half-width %.3g s", rate, nMarks, jitterMs, k, med)
					}
				}
			}
		}
	}
}

// placementDraw fits a clock line through nMarks marks (one per 5 s
// window) whose midpoints scatter by jitterMs about the true line, places
// k reads with it, and returns the error the line puts into idle's time
// (idle follows each read), the 95 % half-width ioPlacement states, and
// false when the fit has no line error.
func placementDraw(rng *rand.Rand, rate float64, nMarks int, jitterMs float64, k int) (errS, u95 float64, ok bool) {
	const start = 1_000_000_000
	period := 1e9 / rate * (1 + 40e-6) // the meter runs 40 ppm slow
	trueHost := func(x float64) float64 { return start + period*x }
	window := 5 * time.Second
	f := NewClockFitter(units.Hertz(rate), window, 4096)
	per := uint64(rate * window.Seconds())
	for i := range nMarks {
		idx := uint64(i)*per + uint64(rng.Float64()*float64(per))
		m := trueHost(float64(idx)) + rng.NormFloat64()*jitterMs*1e6
		// The round trip holds the scatter (the fit keeps a mark within
		// half its round trip of the line): the echo's midpoint is off,
		// not its meter index.
		h := 30e3 + 5*jitterMs*1e6
		f.Add(meter.MarkEcho{MeterIndex: idx, HostSent: hostclock.Time(m - h), HostRecv: hostclock.Time(m + h)})
	}
	c := f.Fit(0)
	if c.Place.N < 3 {
		return 0, 0, false
	}
	// Spans on the fitted timeline: slumber, a read (host-stamped edges),
	// idle for 3–30 ms (its end a level edge, placed by the samples:
	// at its true sample index), slumber again.
	run := float64(nMarks) * float64(per)
	var spans []detect.Span
	prev := hostclock.Time(c.HostF(0))
	var trueIdle, fitIdle float64
	for j := range k {
		x0 := run * (float64(j) + 0.2 + 0.6*rng.Float64()) / float64(k)
		h0 := hostclock.Time(trueHost(x0))
		h1 := h0 + hostclock.Time((1+10*rng.Float64())*1e6)
		levelX := (float64(h1)-start)/period + rate*(3+27*rng.Float64())*1e-3
		levelH := hostclock.Time(c.HostF(levelX))
		trueIdle += levelX - (float64(h1)-start)/period
		fitIdle += levelX - c.Index(h1)
		spans = append(spans,
			detect.Span{State: powerstate.Slumber, Start: prev, End: h0},
			detect.Span{State: powerstate.Active, Start: h0, End: h1},
			detect.Span{State: powerstate.Idle, Start: h1, End: levelH})
		prev = levelH
	}
	spans = append(spans, detect.Span{State: powerstate.Slumber, Start: prev, End: prev + 1e9})
	u := ioPlacement(spans, &c)
	return (fitIdle - trueIdle) / rate, u["idle"], true
}

// TestLinePlacement: the line's error model is the least-squares one over
// the marks in use, and nothing for a refused drift (a nominal-rate line
// is not a fit through the marks) or fewer than three marks.
func TestLinePlacement(t *testing.T) {
	f := NewClockFitter(10000, 5*time.Second, 4096)
	res := []float64{0.2e6, -0.4e6, 0.4e6, -0.2e6} // ns off the line, sum 0
	for i, r := range res {
		idx := uint64(i) * 50000
		m := 1e9 + 1e5*float64(idx) + r
		f.Add(meter.MarkEcho{MeterIndex: idx, HostSent: hostclock.Time(m - 1e6), HostRecv: hostclock.Time(m + 1e6)})
	}
	c := f.Fit(0)
	p := c.Place
	if p.N != 4 || math.Abs(p.MeanIndex-75000) > 1e-6 || math.Abs(p.Sxx-1.25e10) > 1 {
		t.Fatalf("placement %+v clock %+v", p, c)
	}
	// The line absorbs part of the residuals; σ from what is left, over 2 dof.
	if !(p.SigmaNs > 0.2e6 && p.SigmaNs < 0.5e6) {
		t.Errorf("sigma %.3g ns", p.SigmaNs)
	}
	// One edge at the marks' mean: t(2) · σ/√N.
	if got, want := p.PlaceU([]float64{75000}, []float64{1}), 4.303*p.SigmaNs/2/1e9; math.Abs(got-want) > 1e-12 {
		t.Errorf("one edge: %.6g s, want %.6g", got, want)
	}
	// Both edges of one read at the same place cancel.
	if got := p.PlaceU([]float64{75000, 75000}, []float64{-1, 1}); got != 0 {
		t.Errorf("a read's own two edges: %g", got)
	}
	// k edges of one sign: k times one.
	one := p.PlaceU([]float64{75000}, []float64{1})
	if got := p.PlaceU([]float64{75000, 75000, 75000, 75000}, []float64{1, 1, 1, 1}); math.Abs(got-4*one) > 1e-15 {
		t.Errorf("four edges: %g, want %g", got, 4*one)
	}
	g := NewClockFitter(10000, 5*time.Second, 4096)
	for i := range 4 {
		idx := uint64(i) * 50000
		m := 1e9 + 1.01e5*float64(idx) // 1 % drift: refused
		g.Add(meter.MarkEcho{MeterIndex: idx, HostSent: hostclock.Time(m - 30e3), HostRecv: hostclock.Time(m + 30e3)})
	}
	if c := g.Fit(0); c.DriftRefusedPPM == 0 || c.Place.N != 0 {
		t.Errorf("refused drift: %+v", c)
	}
}
