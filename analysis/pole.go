package analysis

import (
	"fmt"
	"math"
	"sort"

	"github.com/idlewatt/idlewatt/internal/stat"
	"github.com/idlewatt/idlewatt/units"
)

// The meter's sensor bandwidth, learned from the drive's own steps.
//
// A current sensor with a first-order bandwidth (an RC before the ADC, a
// shunt amplifier's pole) reads a step as an exponential approach: after
// the sample the step falls in, each sample's shortfall from the new level
// is a (= e^(−T/τ), T the sample period, τ the sensor's time constant)
// times the one before, whether the ADC samples instantly or averages over
// its period. A short spike — a wake, a write burst a few samples long — is
// then read low: its peak sample never reaches the level the drive drew
// (seed 23 drive 74: a 0.3 ms 6.36 W wake read as 6.10 W behind a 2 kHz
// sensor, with an interval that did not hold it).
//
// poleLearner finds the drive's clean steps (a jump that is the largest
// change over 30 samples, flat stretches before and after it) and takes,
// for each, the shortfalls of the three samples after the jump from the
// level after it: u, v and w, with v = a·u and w = a·v. A step counts when
// u is clear of the noise and v² = u·w within it (a staircase, a level
// held a sample or two on the way, is not geometric). a is the regression
// of v on u through the origin over the steps (less the noise's share of
// u², which would dilute it), after a weighted median and a 4-MAD cut
// leave out steps another change fell into, with a standard error from the
// steps' own scatter (heteroscedasticity-robust). It is used when at
// least 8 steps give an a over 5 standard errors and under poleMaxA.
//
// The peak is then read through the inverse of the filter,
// x̂ₙ = yₙ + b·(yₙ − yₙ₋₁), b = a/(1 − a), which gives back the level the
// drive drew at every sample whose predecessor is past the step (deconv);
// its interval takes the noise that inverse amplifies and b's own
// uncertainty (peakCI95Deconvolved).
//
// Tests: TestPoleLearnsAnRC and TestPoleNotLearnedWithoutABandwidth render
// steps through an analytic RC and integrating ADC (not the simulator's
// discrete filter); TestPeakThroughTheSensorBandwidth runs drawn drives.

const (
	poleRing    = 64 // samples kept (a power of two > poleBefore+poleAfter+1)
	poleBefore  = 12 // the flat stretch before a step: samples c−12 … c−3
	polePreEnd  = 3
	poleAfter   = 17 // the level after it: samples c+10 … c+17
	polePostLo  = 10
	poleFlat    = 20 // a stretch is flat when its standard deviation is under 1/20 of the step
	poleSpan    = 4  // and its range under 1/4 of it (no other step inside)
	poleTrigger = 6  // a candidate step: |Δ| over 6 × the running mean |Δ|
	poleMaxObs  = 1 << 13
	poleMinObs  = 8
	// poleResolved: a step's first shortfall counts when over 8 × the
	// flat stretches' standard deviation; poleGeom: the shortfalls are
	// geometric when v² − u·w is within 3 × its noise. At 5 × the
	// shortfall a 40 mW drive's steps through a level held a sample or
	// two (GC → Partial → Slumber under 4 mW of hum) passed as a 0.22 ms
	// response (campaign seed 24 drive 9).
	poleResolved = 8
	poleGeom     = 3
	// poleZ: a response is used when a is over 5 standard errors (a chance
	// a over 95 % of the way would bend the peaks of 1 drive in 20 with no
	// bandwidth: a 12 kHz sensor's a = 0.0005 read 0.115 ± 0.039 from 6
	// steps, a 6.18 W peak read 6.91 W).
	poleZ = 5
	// poleMaxA: the flat stretch after a step starts 10 samples on, so a
	// response slower than a^9 = 1/20 (a ≈ 0.72, τ ≈ 3 sample periods)
	// would not have settled there: steps that show one are something else
	// (a slow ripple, the meter's own level steps: 0.90–0.996 seen).
	poleMaxA = 0.72
)

// poleLearner is one drive's step collector (see above), fed the drive's
// power in sample order.
type poleLearner struct {
	ring  [poleRing]float64
	cand  [poleRing]bool
	k     uint64  // samples taken since the last break
	prev  float64 // the sample before the next one
	meanD float64 // running mean |Δ|
	u, v  []float64
	nv    []float64 // each step's noise variance (its flat stretches', pooled)
	g1    []float64 // and lag-1 autocovariance
	steps int       // clean steps seen (more than kept when over poleMaxObs)
}

// reset is a break (a gap, an invalid reading): no window spans it.
func (l *poleLearner) reset() {
	l.k = 0
	l.cand = [poleRing]bool{}
}

// take adds the drive's next samples, contiguous with the last ones
// unless reset came between; NaN is a break.
func (l *poleLearner) take(pw []float64) {
	for _, y := range pw {
		if math.IsNaN(y) || math.IsInf(y, 0) {
			l.reset()
			continue
		}
		k := l.k
		l.ring[k&(poleRing-1)] = y
		l.cand[k&(poleRing-1)] = false
		if k > 0 {
			d := math.Abs(y - l.prev)
			if d > poleTrigger*l.meanD {
				l.cand[k&(poleRing-1)] = true
			}
			l.meanD += (d - l.meanD) / 64
		}
		l.prev = y
		l.k = k + 1
		if k >= poleBefore+poleAfter {
			if c := k - poleAfter; l.cand[c&(poleRing-1)] {
				l.window(c)
			}
		}
	}
}

// window looks at a candidate step at sample c (samples c−12 … c+17 in
// the ring) and keeps its shortfalls when it is a clean step.
func (l *poleLearner) window(c uint64) {
	at := func(j uint64) float64 { return l.ring[j&(poleRing-1)] }
	dc := math.Abs(at(c) - at(c-1))
	for j := c - poleBefore + 1; j <= c+poleAfter; j++ {
		if j != c && math.Abs(at(j)-at(j-1)) > dc {
			return
		}
	}
	// The levels before and after, and the noise's variance γ₀ and lag-1
	// autocovariance γ₁ from both stretches (pooled). (A slope through
	// both, tried for hum, made the level after noisier — 12 samples of
	// lever — and that error, shared by u and v, biased a up by 0.06.)
	pre := stretchOf(at, c-poleBefore, c-polePreEnd)
	post := stretchOf(at, c+polePostLo, c+poleAfter)
	h := post.mean - pre.mean
	g0 := (pre.ss + post.ss) / (pre.n + post.n - 2)
	g1 := (pre.s1 + post.s1) / (pre.n + post.n - 4)
	sd := math.Sqrt(g0)
	if h == 0 || sd*poleFlat > math.Abs(h) || pre.rng*poleSpan > math.Abs(h) || post.rng*poleSpan > math.Abs(h) {
		return
	}
	// The samples after the jump approach the level after it from the
	// step's side (within the noise of the flat stretch): not a spike
	// over it and back, not short of the level before.
	u, v, w := post.mean-at(c+1), post.mean-at(c+2), post.mean-at(c+3)
	sg := math.Copysign(1, h)
	if u*sg < -post.rng || v*sg < -post.rng || u*sg > math.Abs(h) || v*sg > math.Abs(h) {
		return
	}
	// A shortfall the noise could make is no sign of a bandwidth: under
	// correlated noise v/u would be the noise's own correlation, under
	// quantisation 1.
	if math.Abs(u) <= poleResolved*sd {
		return
	}
	// A first-order response shrinks the shortfalls geometrically:
	// v/u = w/v (w the third's), v² = u·w within the noise. A staircase
	// (a level held a sample or two on the way) does not: u = v, w = 0.
	// One held three or more gives u = v = w, v/u = 1: a response too slow
	// to have settled by the stretch after (poleMaxA) — no step of a
	// sensor this learner can see.
	if math.Abs(v*v-u*w) > poleGeom*sd*math.Sqrt(4*v*v+u*u+w*w) || v/u > poleMaxA {
		return
	}
	l.steps++
	if len(l.u) < poleMaxObs {
		l.u = append(l.u, u)
		l.v = append(l.v, v)
		l.nv = append(l.nv, g0)
		l.g1 = append(l.g1, g1)
	}
}

// stretch is a flat stretch's samples: their count, mean, sum of squared
// deviations, sum of lag-1 products of deviations and range.
type stretch struct {
	n, mean, ss, s1, rng float64
}

// stretchOf sums samples a … b.
func stretchOf(at func(uint64) float64, a, b uint64) stretch {
	st := stretch{n: float64(b - a + 1)}
	var sy float64
	lo, hi := math.Inf(1), math.Inf(-1)
	for j := a; j <= b; j++ {
		y := at(j)
		sy += y
		lo, hi = min(lo, y), max(hi, y)
	}
	st.mean, st.rng = sy/st.n, hi-lo
	prev := 0.0
	for j := a; j <= b; j++ {
		e := at(j) - st.mean
		st.ss += e * e
		if j > a {
			st.s1 += e * prev
		}
		prev = e
	}
	return st
}

// sensorPole is a drive's learned sensor response: a = e^(−T/τ) with its
// standard error, from Steps clean steps (Kept of them in the fit).
type sensorPole struct {
	A, SEA      float64
	Steps, Kept int
}

// t95 is the 95 % two-sided Student t factor for a's standard error.
func (p *sensorPole) t95() float64 {
	if p.Kept < 2 {
		return math.NaN()
	}
	return stat.T975(float64(p.Kept - 1))
}

// b is the inverse filter's gain a/(1−a) and its 95 % half-width.
func (p *sensorPole) b() (b, u95 float64) {
	a := max(p.A, 0)
	return a / (1 - a), p.t95() * p.SEA / ((1 - a) * (1 - a))
}

// resolved reports whether the response is used: a over poleZ standard
// errors and not over poleMaxA.
func (p *sensorPole) resolved() bool {
	return p != nil && p.A > poleZ*p.SEA && p.A <= poleMaxA
}

// tauS is the time constant τ = −T/ln a (s) and its 95 % half-width; NaN
// when a is not resolved (under poleZ standard errors) or over poleMaxA.
func (p *sensorPole) tauS(period float64) (tau, u95 float64) {
	if !p.resolved() {
		return math.NaN(), math.NaN()
	}
	tau = -period / math.Log(p.A)
	// dτ/da = T/(a·ln²a)
	l := math.Log(p.A)
	return tau, p.t95() * p.SEA * period / (p.A * l * l)
}

// model fits a from the steps; nil with fewer than poleMinObs.
func (l *poleLearner) model() *sensorPole {
	n := len(l.u)
	if n < poleMinObs {
		return nil
	}
	// Each step's weight is its u² over its noise variance: the inverse
	// variance of its v/u. A step on a noisy stretch (an HDD's seek, 24 mW
	// of noise) weighs what its noise lets it, not its size (seed 22
	// drive 130: one such step carried τ 15 % off).
	w := make([]float64, n)
	var sw float64
	for i, u := range l.u {
		if l.nv[i] > 0 {
			w[i] = u * u / l.nv[i]
		} else if u != 0 {
			w[i] = math.MaxFloat64 / float64(4*n) // a noise-free step: any other is noise beside it
		}
		sw += w[i]
	}
	if sw == 0 {
		// Every shortfall exactly zero (noise-free, quantised): no
		// bandwidth to see.
		return &sensorPole{Steps: l.steps}
	}
	// Weighted median of v/u, then a cut at 4 MADs of the steps'
	// residuals in units of their noise.
	type rw struct{ r, w float64 }
	rs := make([]rw, 0, n)
	for i, u := range l.u {
		if w[i] > 0 {
			rs = append(rs, rw{l.v[i] / u, w[i]})
		}
	}
	sort.Slice(rs, func(i, j int) bool { return rs[i].r < rs[j].r })
	var acc float64
	a0 := rs[len(rs)-1].r
	for _, x := range rs {
		acc += x.w
		if acc >= sw/2 {
			a0 = x.r
			break
		}
	}
	res := make([]float64, n)
	for i, u := range l.u {
		res[i] = math.Abs(l.v[i]-a0*u) / math.Sqrt(max(l.nv[i], math.SmallestNonzeroFloat64))
	}
	sorted := append([]float64(nil), res...)
	sort.Float64s(sorted)
	cut := 4 * 1.4826 * sorted[n/2]
	keep := func(i int) bool { return res[i] <= cut && l.nv[i] > 0 }
	var su2, suv float64
	kept := 0
	for i, u := range l.u {
		if keep(i) {
			// u = u₀ − e₁ − m and v = a·u₀ − e₂ − m (m the mean after's
			// noise): E[u²] = u₀² + γ₀ + γₘ, E[uv] = a·u₀² + γ₁ + γₘ. The
			// noise's part is taken out of both: left in, noise white after
			// the sensor dilutes a toward 0 and noise through it (γ₁ = a·γ₀)
			// would not, so neither is biased whatever the noise.
			gm := (l.nv[i] + 2*l.g1[i]) / float64(poleAfter-polePostLo+1)
			su2 += (u*u - l.nv[i] - gm) / l.nv[i]
			suv += (u*l.v[i] - l.g1[i] - gm) / l.nv[i]
			kept++
		}
	}
	if kept < poleMinObs || !(su2 > 0) {
		return nil
	}
	a := suv / su2
	var s float64
	for i, u := range l.u {
		if keep(i) {
			e := (l.v[i] - a*u) / l.nv[i]
			s += u * u * e * e
		}
	}
	se := math.Sqrt(s*float64(kept)/float64(kept-1)) / su2
	return &sensorPole{A: a, SEA: se, Steps: l.steps, Kept: kept}
}

// deconv is the inverse filter's running state over a drive's samples:
// its gain and the sample before the next one.
type deconv struct {
	b    float64
	prev float64
	ok   bool // prev is the sample before the next one
}

// decPeak is a set's highest x̂ and its sample's Δ (x̂ moves by Δ per unit
// of b: its uncertainty's share).
type decPeak struct {
	max, d float64
	seen   bool
}

// add reads a run of consecutive samples through the inverse filter into
// p; NaN is a break. A sample with no predecessor counts as read.
func (c *deconv) add(ps []float64, p *decPeak) {
	for _, y := range ps {
		if math.IsNaN(y) {
			c.ok = false
			continue
		}
		x, d := y, 0.0
		if c.ok {
			d = y - c.prev
			x = y + c.b*d
		}
		if !p.seen || x > p.max {
			p.max, p.d, p.seen = x, d, true
		}
		c.prev, c.ok = y, true
	}
}

// fold takes another set's highest x̂.
func (p *decPeak) fold(o decPeak) {
	if o.seen && (!p.seen || o.max > p.max) {
		*p = o
	}
}

// peakCI95Deconvolved is the interval of a peak read through the inverse
// filter: the noise of one x̂ (σ·√((1+b)² + b²) for noise that is white
// after the sensor, an upper bound for noise that passed through it), the
// lowest of n readings' spread below, and b's 95 % half-width u95B times
// the peak sample's step (x̂ moves by Δ per unit of b) on both sides.
func peakCI95Deconvolved(pk units.Watts, d float64, n int, sigma, ures, b, u95B float64) *[2]units.Watts {
	g := math.Hypot(1+b, b)
	ci := peakCI95(pk, n, sigma*g, ures*g)
	if ci == nil {
		return nil
	}
	pb := math.Abs(d) * u95B
	lo, hi := float64(pk)-float64(ci[0]), float64(ci[1])-float64(pk)
	return &[2]units.Watts{units.Watts(float64(pk) - math.Hypot(lo, pb)), units.Watts(float64(pk) + math.Hypot(hi, pb))}
}

// poleNote says what the peak was read through.
func poleNote(name string, p *sensorPole, period float64) string {
	tau, u := p.tauS(period)
	return fmt.Sprintf("drive %q: the sensor's response learned from %d steps: time constant %.3g ± %.2g µs (a first-order bandwidth of %.3g kHz); peak_w is read through its inverse",
		name, p.Steps, tau*1e6, u*1e6, 1/(2*math.Pi*tau)/1e3)
}
