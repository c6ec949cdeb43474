package analysis

import (
	"math"

	"github.com/idlewatt/idlewatt/analysis/judge"
	"github.com/idlewatt/idlewatt/analysis/series"
	"github.com/idlewatt/idlewatt/hostclock"
	"github.com/idlewatt/idlewatt/units"
)

// What the report layer draws: the series Analyze gathered while it read
// the capture. None of it is in report.json, so a Report read back from
// JSON has none.

// Traces are the drives' power-over-time series, one per drive with
// samples, in report order.
func (r *Report) Traces() []series.Trace { return r.traces }

// Distributions are the drives' power histograms for the histogram and
// CDF charts, each carrying its drive's P50W and P99W so a chart marks the
// report's own percentiles, not its re-binned estimate of them.
func (r *Report) Distributions() []series.Distribution {
	out := append([]series.Distribution(nil), r.dists...)
	for i := range out {
		for _, d := range r.Drives {
			if d.Name == out[i].Name {
				out[i].P50, out[i].P99 = float64(d.P50W), float64(d.P99W)
			}
		}
	}
	return out
}

// DevSlpChart is one drive's DevSlp cycle to draw: its first cycle that did
// not pass (else its first), with the fitted entry and rise.
type DevSlpChart struct {
	Port  int
	Cycle judge.Cycle // the cycle's figures and verdict, for the chart's titles
	// Series is the cycle's power in ms from DEVSLP assertion, bucketed to
	// 0.5 ms, with the pin edges, floor reached, first read, the floor with
	// its 95 % interval (the one the verdict was judged with) and the limit.
	Series series.DevSlpCycle
}

// DevSlpCharts are the DevSlp cycles to draw, one per drive with cycles.
func (r *Report) DevSlpCharts() []DevSlpChart {
	var out []DevSlpChart
	for _, nc := range r.devslpCharts {
		c := nc.c
		t0 := c.timing.Assert
		ms := func(t hostclock.Time) float64 {
			if t == 0 {
				return math.NaN()
			}
			return float64(t.Sub(t0)) / 1e6
		}
		var env series.DevSlpCycle
		// Half a millisecond per point keeps the wake spike and the floor
		// readable without drawing every sample.
		const bucket = 0.5
		cur := math.NaN()
		var mn, mx, sum float64
		var n int
		flush := func() {
			if n > 0 {
				p := &env.Power
				p.T = append(p.T, cur)
				p.Min, p.Max, p.Mean = append(p.Min, mn), append(p.Max, mx), append(p.Mean, sum/float64(n))
			}
		}
		for _, s := range c.samples {
			// A sample's time is never "unset": a meter file's host clock
			// is its sample index, so its first sample is at 0.
			b := math.Floor(float64(s.T.Sub(t0))/1e6/bucket) * bucket
			if b != cur {
				flush()
				cur, mn, mx, sum, n = b, s.W, s.W, 0, 0
			}
			mn, mx, sum, n = math.Min(mn, s.W), math.Max(mx, s.W), sum+s.W, n+1
		}
		flush()
		floor := math.NaN() // none: the cycle reached no floor
		if c.cycle.FloorW.Ok() {
			floor = float64(c.cycle.FloorW) // may be a little below 0 (noise)
		}
		cy := c.cycle
		// The floor's 95 % interval, the one the verdict was judged with.
		var flo, fhi units.Watts
		if c.cycle.FloorW.Ok() && cy.FloorU95W.Ok() {
			u := float64(cy.FloorU95W)
			flo, fhi = units.Watts(floor-u), units.Watts(floor+u)
		}
		env.Name, env.Assert, env.Deassert = nc.name, 0, ms(c.timing.Deassert)
		env.FloorReached, env.FirstIO = ms(cy.EntryAt), ms(c.timing.ProbeComplete)
		env.Floor, env.Limit, env.FloorLo, env.FloorHi = units.Watts(floor), c.limit, flo, fhi
		out = append(out, DevSlpChart{Port: nc.port, Cycle: cy, Series: env})
	}
	return out
}
