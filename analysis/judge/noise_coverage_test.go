package judge

import (
	"fmt"
	"math"
	"math/rand/v2"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/idlewatt/idlewatt/analysis/internal/noisegen"
	"github.com/idlewatt/idlewatt/hostclock"
	"github.com/idlewatt/idlewatt/internal/stat"
	"github.com/idlewatt/idlewatt/internal/testlong"
	"github.com/idlewatt/idlewatt/units"
)

// The DevSlp estimators under real meter noise: each noise family of
// noisegen (its own generator, not the simulator's) on drives drawn from
// ranges, each cycle's and each drive's pooled intervals checked against
// the truth the cycle was built from.

// noisyDrive is one drawn drive: its levels and latencies.
type noisyDrive struct {
	slumber, floor  float64 // W
	entryMs, riseMs float64
	steps           bool // level steps before the pin (the Steps family)
}

// cycleTruth is what a cycle was built with.
type cycleTruth struct {
	pre, floor, entryMs, riseMs, exitMs float64
}

const noisyRate = 10000 // S/s, the hub's

// drawNoisyDrive draws a drive for meter m: Slumber 4–70 mW, a floor of
// 0.1 mW to a third of Slumber (at most 5 mW; under one LSB for the LSB
// family), entry 0 (half the drives) or 0–5 ms, power rise 0–2 ms.
func drawNoisyDrive(rng *rand.Rand, m *noisegen.Meter) noisyDrive {
	u := func(a, b float64) float64 { return a + (b-a)*rng.Float64() }
	d := noisyDrive{slumber: u(0.004, 0.07), riseMs: u(0, 2), steps: m.Family == noisegen.Steps}
	d.floor = u(0.0001, math.Min(0.005, d.slumber/3))
	if m.Family == noisegen.LSB {
		d.floor = u(0.2, 0.95) * m.LSBA * m.Volts
	}
	if rng.IntN(2) == 1 {
		d.entryMs = u(0, 5)
	}
	return d
}

// noisyCycle renders one cycle of d through meter m at 10 kS/s: Slumber
// with a 0.6 W, 20 ms GC burst every 300 ms (and, for the Steps family,
// level steps 20–300 mW up for 5–100 ms after 10–150 ms at rest, a third of
// the time on average) for 500–520 ms; the pin's true edge anywhere
// within a sample, stamped to the nearest; the floor from edge + entry; the release 400 ms later; from
// release + rise a 1.2 W, 2 ms wake spike, then 0.2 W until the read
// completes 5–20 ms later and 1 ms more; Slumber again for 300 ms.
func noisyCycle(rng *rand.Rand, m *noisegen.Meter, d noisyDrive, k int) (Timing, []Sample, cycleTruth) {
	const period = hostclock.Time(time.Second / noisyRate)
	// 500–520 ms: the cycles are not locked to the mains phase.
	a := hostclock.Time(500*time.Millisecond) + hostclock.Time(rng.Int64N(int64(20*time.Millisecond)))
	r := a + hostclock.Time(400*time.Millisecond)
	stamp := func(t hostclock.Time) hostclock.Time { return (t + period/2) / period * period }
	tm := Timing{Cycle: k, Start: 0, Assert: stamp(a), Deassert: stamp(r), End: stamp(r) + hostclock.Time(300*time.Millisecond)}
	entry := a + hostclock.Time(d.entryMs*1e6)
	rise := r + hostclock.Time(d.riseMs*1e6)
	tm.ProbeIssue = tm.Deassert + period
	tm.ProbeComplete = rise + hostclock.Time((5+15*rng.Float64())*1e6)
	type step struct {
		from, to hostclock.Time
		w        float64
	}
	var steps []step
	if d.steps {
		for t := hostclock.Time(0); ; {
			t += hostclock.Time((10 + 140*rng.Float64()) * 1e6) // at rest
			dur := hostclock.Time((5 + 95*rng.Float64()) * 1e6)
			if t+dur >= a {
				break
			}
			steps = append(steps, step{t, t + dur, 0.02 + 0.28*rng.Float64()})
			t += dur
		}
	}
	n := int(tm.End / period)
	truth := make([]float64, n)
	ts := make([]hostclock.Time, n)
	for i := range truth {
		t := hostclock.Time(i) * period
		ts[i] = t
		w := d.slumber
		switch {
		case t < a && (t/hostclock.Time(time.Millisecond))%300 < 20:
			w = 0.6
		case t >= entry && t < rise:
			w = d.floor
		case t >= rise && t < rise+hostclock.Time(2*time.Millisecond):
			w = 1.2
		case t >= rise && t < tm.ProbeComplete+hostclock.Time(time.Millisecond):
			w = 0.2
		}
		for _, s := range steps {
			if t >= s.from && t < s.to && w == d.slumber {
				w += s.w
			}
		}
		truth[i] = w
	}
	read := m.Read(rng, truth)
	out := make([]Sample, n)
	for i := range out {
		out[i] = Sample{T: ts[i], W: read[i]}
	}
	tr := cycleTruth{pre: d.slumber, floor: d.floor, entryMs: d.entryMs, riseMs: d.riseMs, exitMs: float64(tm.ProbeComplete-r) / 1e6}
	return tm, out, tr
}

// coverage tallies one quantity's intervals against the truth.
type coverage struct {
	held, n int
	errs    []float64
	worst   string
	worstZ  float64
}

// add counts x ± u (W or ms, NaN when absent) against truth.
func (c *coverage) add(x, u float64, truth float64, what string) {
	present := func(v float64) bool { return !math.IsNaN(v) && !math.IsInf(v, 0) }
	if !present(x) {
		return
	}
	c.n++
	e := float64(x) - truth
	c.errs = append(c.errs, e)
	if present(u) && math.Abs(e) <= float64(u) {
		c.held++
		return
	}
	if z := math.Abs(e) / math.Max(float64(u), 1e-300); !present(u) || z > c.worstZ {
		c.worstZ, c.worst = z, fmt.Sprintf("%s: %.4g ± %.3g, truth %.4g", what, float64(x), float64(u), truth)
	}
}

func (c *coverage) frac() float64 { return float64(c.held) / float64(max(c.n, 1)) }

// medianErr is the median error (the bias a reader sees on a typical
// drive; the mean is dominated by low-SNR cycles whose wide intervals
// cover their large errors).
func (c *coverage) medianErr() float64 { return stat.Median(c.errs) }

func unitOf(q string) string {
	if strings.HasPrefix(q, "floor") || strings.HasPrefix(q, "pre-cycle") {
		return "W"
	}
	return "ms"
}

var devslpQuantities = []string{"floor", "floor pooled", "pre-cycle", "pre-cycle pooled", "entry", "entry pooled", "rise", "rise pooled", "exit"}

// TestDevSlpIntervalsUnderMeterNoise: per noise family, drives drawn as
// drawNoisyDrive, 3 cycles each through a meter drawn by noisegen.Draw with
// a calibration error within stated limits (gain 0.05–0.5 %, offset
// 0.5–5 µA); every interval (per cycle and pooled) holds the truth in
// ≥ 90 % per family and ≥ 93 % over all families, no cycle of these
// drives (which all enter) FAILs, and the mean errors are small against
// the intervals.
func TestDevSlpIntervalsUnderMeterNoise(t *testing.T) {
	drives := testlong.CoverageDrives(24, 3)
	cr := DefaultCriteria()
	cr.LimitW, cr.DETOMs = 1, 400
	all := map[string]*coverage{}
	for _, q := range devslpQuantities {
		all[q] = &coverage{}
	}
	fails := 0
	var lines []string
	for f := noisegen.Family(0); f < noisegen.NumFamilies; f++ {
		fam := map[string]*coverage{}
		for _, q := range devslpQuantities {
			fam[q] = &coverage{}
		}
		rng := rand.New(rand.NewPCG(uint64(f)+100, 17))
		for dn := range drives {
			m := noisegen.Draw(rng, f, noisyRate, 5).WithCalibration(rng, 0.0005+0.0045*rng.Float64(), 0.5e-6+4.5e-6*rng.Float64())
			d := drawNoisyDrive(rng, m)
			// A clock fit of 0–50 µs: the exit's interval must hold the
			// release's stamp to the nearest sample (±50 µs) by itself.
			jo := JudgeOptions{Criteria: cr, ClockU95Ms: units.Milliseconds(0.05 * rng.Float64()),
				Rails: []stat.Rail{{NominalV: 5, CurrentLSB: m.LSBA, CurrentGainErr: m.GainLimit, CurrentOffsetA: m.OffLimitA}}}
			var cycles []Cycle
			var tr cycleTruth
			for k := 1; k <= 3; k++ {
				tm, s, ctr := noisyCycle(rng, m, d, k)
				tr = ctr
				c := Judge(tm, s, jo)
				what := fmt.Sprintf("%s drive %d cycle %d (%v; slumber %.2f mW, floor %.3f mW)", f, dn, k, m, d.slumber*1e3, d.floor*1e3)
				if c.Outcome == Fail {
					fails++
					t.Errorf("%s: FAIL %v", what, c.Reasons)
				}
				for name, v := range map[string]struct {
					x, u  float64
					truth float64
				}{"floor": {float64(c.FloorW), float64(c.FloorU95W), ctr.floor}, "pre-cycle": {float64(c.PreCycleW), float64(c.PreCycleU95W), ctr.pre},
					"entry": {float64(c.EntryMs), float64(c.EntryU95Ms), ctr.entryMs}, "rise": {float64(c.RiseMs), float64(c.RiseU95Ms), ctr.riseMs}, "exit": {float64(c.ExitMs), float64(c.ExitU95Ms), ctr.exitMs}} {
					fam[name].add(v.x, v.u, v.truth, what)
					all[name].add(v.x, v.u, v.truth, what)
				}
				cycles = append(cycles, c)
			}
			v := Summarise(cycles, cr, "yes", "")
			what := fmt.Sprintf("%s drive %d (%v; slumber %.2f mW, floor %.3f mW)", f, dn, m, d.slumber*1e3, d.floor*1e3)
			for name, q := range map[string]struct {
				x, u  float64
				truth float64
			}{"floor pooled": {float64(v.FloorW), float64(v.FloorU95W), tr.floor}, "pre-cycle pooled": {float64(v.PreCycleW), float64(v.PreCycleU95W), tr.pre},
				"entry pooled": {float64(v.EntryMs), float64(v.EntryU95Ms), tr.entryMs}, "rise pooled": {float64(v.RiseMs), float64(v.RiseU95Ms), tr.riseMs}} {
				fam[name].add(q.x, q.u, q.truth, what)
				all[name].add(q.x, q.u, q.truth, what)
			}
		}
		var parts []string
		for _, q := range devslpQuantities {
			c := fam[q]
			parts = append(parts, fmt.Sprintf("%s %d/%d", q, c.held, c.n))
			if c.n >= 10 && c.frac() < 0.9 {
				t.Errorf("%s: %s interval held the truth in %d of %d (want ≥ 90 %%); worst %s", f, q, c.held, c.n, c.worst)
			}
		}
		lines = append(lines, fmt.Sprintf("%-10s %s", f, strings.Join(parts, ", ")))
	}
	sort.Strings(lines)
	for _, l := range lines {
		t.Log(l)
	}
	for _, q := range devslpQuantities {
		c := all[q]
		t.Logf("all families: %s held %d of %d (%.1f %%), median error %.3g (%s)", q, c.held, c.n, 100*c.frac(), c.medianErr(), unitOf(q))
		if c.frac() < 0.93 {
			t.Errorf("all families: %s interval held the truth in %d of %d (want ≥ 93 %%); worst %s", q, c.held, c.n, c.worst)
		}
	}
	if fails > 0 {
		t.Errorf("%d false FAILs", fails)
	}
}

// TestEnteringDrivesNotFailedUnderAR1 is issue 25's case: a 6 mW Slumber
// and a 2 mW floor under AR(1) sensor noise of 1–10 ms and 1–3 mA. The
// pre-cycle level is that Slumber within its interval and unbiased (the
// first-difference σ and the lower quartile read it 3–16 mW low, and the
// drive was failed as ignoring DEVSLP: 8 of 10 such drives were not
// PASS), and no cycle FAILs; under 5–15 mW of noise a 4 mW fall may well
// be INCONCLUSIVE, which is what the noise allows.
func TestEnteringDrivesNotFailedUnderAR1(t *testing.T) {
	rng := rand.New(rand.NewPCG(25, 4))
	cr := DefaultCriteria()
	cr.DETOMs = 400
	d := noisyDrive{slumber: 0.006, floor: 0.002}
	var errs []float64
	outcomes := map[Outcome]int{}
	held, n := 0, 0
	for k := range 10 {
		m := noisegen.Draw(rng, noisegen.AR1, noisyRate, 5)
		m.TauS[0] = math.Exp(math.Log(1e-3) + rng.Float64()*math.Log(10))
		var cycles []Cycle
		for c := 1; c <= 4; c++ {
			tm, s, tr := noisyCycle(rng, m, d, c)
			cy := Judge(tm, s, JudgeOptions{Criteria: cr, ClockU95Ms: 0.05})
			if cy.Outcome == Fail {
				t.Errorf("drive %d (%v) cycle %d: FAIL %v", k, m, c, cy.Reasons)
			}
			n++
			errs = append(errs, float64(cy.PreCycleW)-tr.pre)
			if math.Abs(float64(cy.PreCycleW)-tr.pre) <= float64(cy.PreCycleU95W) {
				held++
			}
			cycles = append(cycles, cy)
		}
		v := Summarise(cycles, cr, "yes", "")
		outcomes[v.Outcome]++
	}
	med := stat.Median(errs)
	t.Logf("outcomes %v; pre-cycle interval held %d of %d, median error %+.2f mW", outcomes, held, n, med*1e3)
	if math.Abs(med) > 0.0005 {
		t.Errorf("pre-cycle level median error %+.2f mW: biased", med*1e3)
	}
	if float64(held) < 0.9*float64(n) {
		t.Errorf("pre-cycle interval held %d of %d", held, n)
	}
}
