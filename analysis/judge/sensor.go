package judge

import (
	"math"

	"github.com/idlewatt/idlewatt/internal/stat"
)

// sensorFit is what the sharp steps of a stretch of samples show of the
// meter's sensor: a first-order sensor (a current sensor's bandwidth, an
// RC before the converter) turns a step into an exponential approach,
// every sample after the first nearer the new level by one factor a =
// exp(−T/τ), T the sample period — the same a for every step, whatever
// its height or where within its sample it fell. The drive's own steps
// (the DevSlp pin's drop, a GC burst's or a transfer's edges, the wake)
// are sharp to the meter: a drive changes state within a sample.
//
// sxy and sxx accumulate the least-squares slope of the deviation from
// the new level of the second sample after a step's steepest one on that
// of the first (a = sxy/sxx); n counts the steps; sigma is the noise σ the
// steps were read under.
type sensorFit struct {
	sxy, sxx, sigma float64
	n               int
}

// sensorMinSigmas is how far (in noise σ) a step's first sample after its
// steepest must stand from the new level to measure a: a sensor faster
// than that leaves nothing to measure, and its steps give none (a stays 0,
// the analysis without a sensor term). Steps are taken from 30 σ.
const (
	sensorMinSigmas  = 6
	sensorStepSigmas = 30
)

// sensorSteps adds the sharp steps of w to f. A step is the steepest
// difference of its neighbourhood, more than sensorStepSigmas σ, between
// two flat stretches (10 samples ending 2 before it, 16 from 8 after it;
// flat: their robust spread within 3 σ) whose levels differ by as much.
func (f *sensorFit) sensorSteps(w []float64, sigma float64) {
	if !(sigma > 0) {
		return
	}
	f.sigma = math.Max(f.sigma, sigma)
	flat := func(x []float64) (float64, bool) {
		m := stat.Median(x)
		d := make([]float64, len(x))
		for i, v := range x {
			d[i] = math.Abs(v - m)
		}
		return m, 1.4826*stat.Median(d) <= 3*sigma
	}
	for i := 12; i+24 <= len(w); i++ {
		d := w[i] - w[i-1]
		if math.Abs(d) < sensorStepSigmas*sigma || math.Abs(d) < math.Abs(w[i+1]-w[i]) || math.Abs(d) < math.Abs(w[i-1]-w[i-2]) {
			continue
		}
		lb, okb := flat(w[i-12 : i-2])
		la, oka := flat(w[i+8 : i+24])
		if !okb || !oka || math.Abs(la-lb) < sensorStepSigmas*sigma {
			continue
		}
		// Through a first-order sensor every sample from the step's on
		// approaches the new level from the old one's side, each by the
		// factor a: d1 = a·d0, d2 = a·d1. A step that overshoots (a wake
		// spike ahead of the level after it) or whose approach is no
		// exponential (a drive's own ramp) measures no sensor.
		// The approach must go on to the level after, sample by sample up
		// to that stretch (approaches). Two steps in quick succession — a
		// release to Slumber and, 0.5 ms later, the read's wake far above
		// it — put a plateau where the approach would be: d1 ≈ d0 and
		// d2 ≈ d1 read as a ≈ 1, a sensor of 20 samples that moved every
		// edge of the cycle by a millisecond. And on into the stretch that
		// gave the level after (to i+15), not only up to it: a plateau of
		// 8–15 samples ending in a second step leaves that stretch's median
		// at the later level and its spread flat (fewer than half its 16
		// samples on the plateau), and a = 1 predicts the plateau's samples
		// exactly up to i+7 (a transfer's end at I/O power, idle 1 ms
		// later: entries ≈ 10 samples early, the independent generator's
		// seed 2, drives 10, 29, 41, 47). A true sensor is at that level by
		// then, or the stretch is not flat. (To i+23, the whole stretch, a
		// bandwidth-family cycle of TestDevSlpIntervalsUnderMeterNoise lost
		// its pole.)
		d0, d1, d2 := w[i]-la, w[i+1]-la, w[i+2]-la
		f.n++
		if math.Abs(d1) >= sensorMinSigmas*sigma && d0*(la-lb) < 0 && d1*(la-lb) < 0 &&
			math.Abs(d1) < math.Abs(d0) && math.Abs(d2-d1*d1/d0) <= 4*sigma && approaches(w[i+1:i+16], la, d1/d0, sigma) {
			f.sxy += d1 * d2
			f.sxx += d1 * d1
		}
		i += 24
	}
}

// approaches reports whether the samples x (from the first after a
// step's steepest) follow the first-order approach to level la by the
// factor a: x[k] − la within 4 σ and a tenth of the first deviation of
// (x[0] − la)·a^k.
func approaches(x []float64, la, a, sigma float64) bool {
	d1 := x[0] - la
	pred := d1
	for _, v := range x[1:] {
		pred *= a
		if math.Abs(v-la-pred) > 4*sigma+0.1*math.Abs(d1) {
			return false
		}
	}
	return true
}

// add pools another stretch's steps into f.
func (f *sensorFit) add(g sensorFit) {
	f.sxy, f.sxx, f.n = f.sxy+g.sxy, f.sxx+g.sxx, f.n+g.n
	f.sigma = math.Max(f.sigma, g.sigma)
}

// pole is a with its standard error (the slope's: the noise of d2 and of
// d1 about the fit, σ √(1 + a²), over √Σd1²); 0, 0 when no step measured it.
func (f sensorFit) pole() (a, se float64) {
	if !(f.sxx > 0) {
		return 0, 0
	}
	a = math.Min(math.Max(f.sxy/f.sxx, 0), 0.95)
	return a, f.sigma * math.Sqrt(1+a*a) / math.Sqrt(f.sxx)
}

// sensorMinTau is the sensor time constant, in samples, from which the
// edges are corrected for it: below one sample the fit's delay is under
// 0.3 of a sample (½a/(1−a)), inside the sample grid's own ±0.8, and the
// analysis is the one without a sensor term.
const sensorMinTau = 1

// sensorEdge is what a first-order sensor of pole a does to a step fit's
// change point, in samples: the mean over the change's phase within its
// sample of the fitted change's displacement from the true change (0 for
// a sharp step, whose ½-period correction the latencies already make),
// and the displacement's variance over that phase (1/12 for a sharp step:
// uniform over a sample). The fit is the known-level one on the noise-free
// filtered step; a free fit of a step much larger than the noise splits
// it alike (both cut where the approach crosses the midpoint).
func sensorEdge(a float64) (mean, variance float64) {
	const n, k0, phases = 96, 16, 64
	y := make([]float64, n)
	cum := make([]float64, n+1)
	var s, ss float64
	for p := range phases {
		f := (float64(p) + 0.5) / phases // the share of sample k0 after the change
		prev := 0.0
		for k := range y {
			x := 0.0
			switch {
			case k == k0:
				x = f
			case k > k0:
				x = 1
			}
			prev = a*prev + (1-a)*x
			y[k] = prev
			cum[k+1] = cum[k] + y[k]
		}
		// The change lies at k0 + 1 − f; a sharp step's fit gives k0 or
		// k0 + 1, and the latencies take half a period off: e = K − ½ − t
		// in units where the ½ is already taken (K − k0 − 1 + f).
		e := float64(bestSplitFrom(cum, 0, 1, n-1)-k0-1) + f
		s += e
		ss += e * e
	}
	mean = s / phases
	return mean, ss/phases - mean*mean
}

// sensorTerm is a latency's correction and grid variance for a sensor of
// pole a ± se: the mean displacement (samples) to take off, and the
// variance (samples²) that replaces a sharp step's 1/12 for where the
// change fell — the phase's spread through the sensor, with the pole's
// uncertainty (the correction's change over a ± 1.96 se, as a 95 % half-width).
// ok is false for a sensor faster than sensorMinTau.
func sensorTerm(a, se float64) (shift, variance float64, ok bool) {
	if a <= math.Exp(-1/sensorMinTau) {
		return 0, 0, false
	}
	m, v := sensorEdge(a)
	lo, _ := sensorEdge(math.Max(0, a-stat.Z975*se))
	hi, _ := sensorEdge(math.Min(0.95, a+stat.Z975*se))
	d := (hi - lo) / 2 / stat.Z975
	return m, v + d*d, true
}

// withGridVar is withGrid with v (samples²) for where within its sample
// the change fell, in place of a sharp step's 1/12.
func withGridVar(u95, v float64) float64 {
	const z = stat.Z975
	return z * math.Sqrt(u95*u95/(z*z)+1.0/12+v)
}

// filteredStep is a unit step at sample k0 through the sensor's pole a
// (the change in the middle of sample k0), n samples: the bootstrap's
// shape of a step the sensor saw.
func filteredStep(a float64, n, k0 int) []float64 {
	g := make([]float64, n)
	prev := 0.0
	for k := range g {
		x := 0.0
		switch {
		case k == k0:
			x = 0.5
		case k > k0:
			x = 1
		}
		prev = a*prev + (1-a)*x
		g[k] = prev
	}
	return g
}
