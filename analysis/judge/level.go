package judge

import (
	"math"
	"sort"

	"github.com/idlewatt/idlewatt/internal/stat"
)

// levelU is a level's uncertainty in parts: the standard error of its
// statistical part with its degrees of freedom, and the standard
// uncertainty of the meter's (resolution, calibration), which does not
// shrink with more samples or more cycles.
type levelU struct {
	se, dof, sys float64
}

// u95 is the 95 % half-width of a level with uncertainty u.
func (u levelU) u95() float64 { return stat.Expanded(u.se*u.se, u.dof, u.sys) }

// instrumentU is the standard uncertainty of a level from the meter: its
// resolution, dithered by the readings' scatter sd about the level (a
// level under one LSB read without noise keeps its whole ±½-LSB bias), and
// its stated calibration, in quadrature.
func (jo JudgeOptions) instrumentU(level, sd float64) float64 {
	if len(jo.Rails) == 0 {
		return 0
	}
	res, _ := stat.ResolutionU(jo.Rails, level, stat.DitherSigma(sd, stat.QuantStep(jo.Rails)))
	cal, _ := stat.CalibrationU(jo.Rails, level)
	return math.Hypot(res, cal)
}

// levelOf is the mean of x with its uncertainty in parts: batch means with
// a batch length from the data's own autocorrelation (stat.MeanStdErr) and
// the meter's term.
//
// cycle, when not empty, is the noise model of the whole cycle (robust to
// its level steps): a floor of a few hundred ms holds only some tens of
// correlation times of noise correlated over 5–20 ms, too few for its own
// autocorrelation to show all of it (AR(1) of 7–14 ms: floors held the
// truth in 61 of 70 cycles); the standard error is the larger of the
// segment's own and its variance × the cycle's integrated autocorrelation
// time over N.
func (jo JudgeOptions) levelOf(x []float64, cycle stat.Noise) (stat.MeanSE, levelU) {
	m := seAtLeast(stat.MeanStdErr(x), x, cycle)
	return m, levelU{se: m.SE, dof: m.Dof, sys: jo.instrumentU(m.Mean, math.Sqrt(stat.Var(x)))}
}

// seAtLeast raises the standard error of m, the mean of x, to Var(x) ×
// the cycle's integrated autocorrelation time over N (see levelOf).
func seAtLeast(m stat.MeanSE, x []float64, cycle stat.Noise) stat.MeanSE {
	if cycle.Ok && m.N > 1 {
		if v := stat.Var(x) * cycle.TauInt / float64(m.N); v > m.SE*m.SE {
			m.SE = math.Sqrt(v)
			m.Dof = math.Min(m.Dof, math.Max(1, float64(m.N)/cycle.TauInt-1))
		}
	}
	return m
}

// restingLevel is the resting power over w[a:b]: the mean of the samples
// of its windows whose mean is within 4 standard deviations of a window
// mean of the lower quartile of the window means (a GC burst can cover
// half the windows; the quietest quarter is resting), with its standard
// error by batch means. A window is restWindow (not the noise's
// correlation length, which may be longer than the gaps between bursts);
// the standard deviation of its mean is the larger of
// the noise model's (stat.Noise.MeanVar: σ from the plateau of the robust
// variogram, which bursts do not inflate, and the correlation between
// samples) and the robust spread of neighbouring windows' differences —
// not σ/√n of white noise from first differences, which under AR(1) noise
// of 1–10 ms is σ·√(1 − ρ)/√n, a band far inside the noise, so that only
// the lowest windows were kept: 3–16 mW low, and drives that entered
// DevSlp were failed as ignoring it. false when no window fits.
func restingLevel(w []float64, a, b int, period float64, cycle stat.Noise, holdSW float64) (m stat.MeanSE, kept []float64, ok bool) {
	if a < 0 || b > len(w) || b-a < 2 {
		return m, nil, false
	}
	x := w[a:b]
	nm := cycle // the cycle's noise, robust to its steps
	if !nm.Ok {
		nm = stat.NoiseOf(x)
	}
	per := min(max(1, int(math.Round(restWindow/period))), len(x))
	var means []float64
	for i := 0; i+per <= len(x); i += per {
		means = append(means, stat.Mean(x[i:i+per]))
	}
	sorted := append([]float64(nil), means...)
	sort.Float64s(sorted)
	q1 := sorted[len(sorted)/4]
	// The spread of a window mean: the noise model's, or that of the
	// differences between neighbouring windows when larger (hum a window
	// does not average out) — neighbours both inside the band only, so
	// that bursts and steps, which may cover half the windows, do not
	// widen it; the band and the spread are refined together.
	sw := math.Sqrt(nm.MeanVar(per))
	if !nm.Ok {
		sw = stat.DiffSigma(x) / math.Sqrt(float64(per))
	}
	// Nor below the spread of a window mean in the hold (holdWindowSpread):
	// the meter's level steps (a random telegraph, popcorn noise) move
	// whole windows, rarely between neighbours, so the neighbours'
	// differences miss them and the band kept only the lower state's
	// windows — the resting level read low by half a step (campaign seed 1,
	// the steps family: 0.3–0.8 mW on 3–14 mW).
	sw = math.Max(sw, holdSW)
	if n := len(sorted); n >= 8 && 2*countAtMost(means, q1+4*sw) < n {
		// A band holding less than half the windows is narrower than the
		// noise: a random telegraph of ±2.8 mW flipping every 1.5 ms
		// moves each 20 ms window by ±1 mW, which the noise model (robust
		// to steps) and a hold too short for holdWindowSpread both miss;
		// 4 of 15 windows were kept and the level read 1 mW low on 154
		// entry-only cycles (campaign seed 29 drive 142). The spread is
		// then at least what the lower quartile's distance from the
		// lowest window gives — the windows below the quartile, which
		// bursts above do not reach (the median did: a GC burst over half
		// a cycle's windows widened the band into it).
		sw = math.Max(sw, (q1-sorted[0])/lowQuartileSpan(n))
	}
	for range 5 {
		th := q1 + 4*sw
		var in []float64
		for i := 1; i < len(means); i++ {
			if means[i] <= th && means[i-1] <= th {
				in = append(in, means[i]-means[i-1])
			}
		}
		if len(in) < 3 {
			break
		}
		d := make([]float64, len(in)+1)
		for i, v := range in {
			d[i+1] = d[i] + v // DiffSigma of the differences' running sum is theirs
		}
		s := stat.DiffSigma(d)
		if !(s > sw*1.01) {
			break
		}
		sw = s
	}
	nk := 0
	for i, mw := range means {
		if mw <= q1+4*sw {
			kept = append(kept, x[i*per:(i+1)*per]...)
			nk++
		}
	}
	m = seAtLeast(stat.MeanStdErr(kept), kept, cycle)
	// Nor below the spread of the kept windows' means over √windows: 1/f
	// noise moves whole windows together more than 300 ms of samples
	// show in their autocorrelation.
	if se := sw / math.Sqrt(float64(nk)); se > m.SE {
		m.SE, m.Dof = se, math.Min(m.Dof, float64(max(1, nk-1)))
	}
	return m, kept, true
}

// lowQuartileSpan is the expected distance, in standard deviations,
// from the smallest of n normal values to the (⌊n/4⌋+1)-th smallest
// (restingLevel's lower quartile), by Blom's approximation of the order
// statistics, E[x₍ᵢ₎] ≈ Φ⁻¹((i − 0.375)/(n + 0.25)): 1.02 for 15.
func lowQuartileSpan(n int) float64 {
	probit := func(p float64) float64 { return math.Sqrt2 * math.Erfinv(2*p-1) }
	fn := float64(n) + 0.25
	return probit((float64(n/4+1)-0.375)/fn) - probit(0.625/fn)
}

// countAtMost is how many of xs are at most th.
func countAtMost(xs []float64, th float64) int {
	n := 0
	for _, x := range xs {
		if x <= th {
			n++
		}
	}
	return n
}

// holdWindowSpread is the robust spread (MAD) of the restWindow means of
// w[a:b] — the second half of the hold, where the drive rests at its floor
// (or, ignoring the pin, at its resting level) and the meter's noise at a
// window's scale shows whole, level steps included — 0 with fewer than 5
// windows.
func holdWindowSpread(w []float64, a, b int, period float64) float64 {
	per := max(1, int(math.Round(restWindow/period)))
	if a < 0 || b > len(w) || (b-a)/per < 5 {
		return 0
	}
	var means []float64
	for i := a; i+per <= b; i += per {
		means = append(means, stat.Mean(w[i:i+per]))
	}
	return stat.MAD(means)
}

// restWindow is restingLevel's shortest window, ns: one period of 50 Hz
// mains (1.2 of 60 Hz), so that hum averages out of a window mean rather
// than spreading the windows (5 ms windows of 50 Hz hum put the lower
// quartile a third of its amplitude low).
const restWindow = 20e6

// telegraphSE is what the meter's level steps of step (W) leave in a
// resting level read over kept (samples in windows of restWindow, period
// ns): each window sits on one half, ±step/2, and over the k flips the
// windows show the offset averages over k+1 stretches, (step/2)/√(k+1) —
// a telegraph slower than the 300 ms does not average out of it at all
// (campaign seed 13 drive 40: 4.80 for 4.91 mW under ±0.4 mW steps, the
// batch means' ±0.01 mW). 0 without steps.
func telegraphSE(kept []float64, period, step float64) float64 {
	if !(step > 0) {
		return 0
	}
	per := max(1, int(math.Round(restWindow/period)))
	flips, prev := 0, math.NaN()
	for i := 0; i+per <= len(kept); i += per {
		m := stat.Mean(kept[i : i+per])
		if !math.IsNaN(prev) && math.Abs(m-prev) > step/2 {
			flips++
		}
		prev = m
	}
	return step / 2 / math.Sqrt(float64(flips+1))
}
