package drivesim

import (
	"math"

	"github.com/idlewatt/idlewatt/units"
)

// The meter noise of a Noise model, rendered for one rail at one rate.
//
// Every component is a deterministic function of (seed, n), n the sample's
// index on the emulator clock, so the output does not depend on how Render
// is chunked:
//   - tones and the drift are closed-form functions of n;
//   - an AR(1) process is a recursion, and a recursion needs state. Sample
//     n's value is defined as the recursion started at a fixed point of the
//     index grid, s(n) = ⌊n/L⌋·L − W, from a stationary draw, and run to n
//     on innovations hashed from their own index. Chains started at
//     different points see the same innovations, so they agree to within
//     exp(−W·T/τ) after W steps: with W = 12 τ/T the splice at a block
//     boundary (every L ≥ 16 W samples) is 6·10⁻⁶ σ. The state is cached
//     per rail in index order, so rendering forward costs one step a
//     sample; any other call (a gap, a re-render) restarts from s(n) and
//     gets the same values;
//   - the telegraph's level is the one drawn at the last refresh at or
//     before n (a refresh is forced every 64/p samples, so the search back
//     is bounded), again cached in index order;
//   - the bandwidth is a finite impulse response (the first-order
//     low-pass truncated where its weight is below 10⁻⁷, renormalised to
//     unity gain at 0 Hz) over the drive's current and white noise of the
//     samples before: those are recomputed from the model's segments and
//     the hash, never carried over.

// arChain is one AR(1) component: x_n = a·x_{n−1} + b·e_n, e_n ~ N(0, 1)
// hashed from n, stationary σ.
type arChain struct {
	a, b, sigma float64
	seed        uint64
	warm, block int64
	start, at   int64
	x           float64
	ok          bool
}

func newARChain(sigma, tau, dt float64, seed uint64) arChain {
	a := math.Exp(-dt / tau)
	warm := int64(math.Ceil(12*tau/dt)) + 1
	return arChain{a: a, b: sigma * math.Sqrt(1-a*a), sigma: sigma, seed: seed, warm: warm, block: max(16*warm, 1<<16)}
}

func floorDiv(a, b int64) int64 {
	q := a / b
	if a%b != 0 && (a < 0) != (b < 0) {
		q--
	}
	return q
}

// value returns x_n.
func (c *arChain) value(n int64) float64 {
	s := floorDiv(n, c.block)*c.block - c.warm
	if !c.ok || c.start != s || c.at > n {
		c.start, c.at, c.ok = s, s, true
		c.x = c.sigma * gauss(splitmix(c.seed^0x243f6a8885a308d3+uint64(s)))
	}
	for c.at < n {
		c.at++
		c.x = c.a*c.x + c.b*gauss(splitmix(c.seed+uint64(c.at)))
	}
	return c.x
}

// telegraph is the steps component: a level ±half redrawn with probability
// p at each sample.
type telegraph struct {
	half, p float64
	force   int64
	seed    uint64
	at      int64
	level   float64
	ok      bool
}

func newTelegraph(step, stepMs, dt float64, seed uint64) telegraph {
	p := min(1, dt/stepMs)
	return telegraph{half: step / 2, p: p, force: int64(min(math.Ceil(64/p), 1<<40)), seed: seed}
}

func (t *telegraph) refresh(n int64) (bool, float64) {
	h := splitmix(t.seed + uint64(n))
	if unit(h) < t.p || n%t.force == 0 {
		if splitmix(h)&1 == 0 {
			return true, -t.half
		}
		return true, t.half
	}
	return false, 0
}

func (t *telegraph) value(n int64) float64 {
	if !t.ok || n < t.at || n-t.at > t.force {
		// The last refresh at or before n is within force samples of it.
		for m := n; ; m-- {
			if ok, l := t.refresh(m); ok {
				t.level = l
				break
			}
		}
		t.at, t.ok = n, true
		return t.level
	}
	for t.at < n {
		t.at++
		if ok, l := t.refresh(t.at); ok {
			t.level = l
		}
	}
	return t.level
}

// tone is amp·cos(2π(cps·n + phase)): a sinusoid of cps cycles per sample.
type tone struct{ amp, cps, phase float64 }

func (t tone) value(n int64) float64 {
	x := t.cps * float64(n)
	return t.amp * math.Cos(2*math.Pi*(x-math.Floor(x)+t.phase))
}

// noiseGen renders a Noise model on one rail at one rate. Currents in A.
type noiseGen struct {
	gain, offset float64
	ar           []arChain // the AR(1) component, then the 1/f components
	tones        []tone    // hum and its harmonics, ripple, the drift's two sinusoids
	steps        *telegraph
	fir          []float64 // bandwidth: y_n = Σ fir[k]·x_{n−k}; nil = none
}

// newNoiseGen compiles nz for a rail whose streams derive from seed, at
// rate hz.
func newNoiseGen(nz Noise, hz float64, seed uint64) *noiseGen {
	dt := 1e3 / hz // ms
	sub := func(i uint64) uint64 { return splitmix(seed + i*0x9e3779b97f4a7c15) }
	g := &noiseGen{gain: 1 + nz.GainPct/100, offset: nz.OffsetUA * 1e-6}
	if nz.AR1MA > 0 {
		g.ar = append(g.ar, newARChain(nz.AR1MA*1e-3, nz.AR1TauMs, dt, sub(1)))
	}
	if nz.FlickerMA > 0 {
		taus := flickerBand(nz.FlickerLoMs, nz.FlickerHiMs)
		s := nz.FlickerMA * 1e-3 / math.Sqrt(float64(len(taus)))
		for i, tau := range taus {
			g.ar = append(g.ar, newARChain(s, tau, dt, sub(uint64(16+i))))
		}
	}
	phase := func(i uint64) float64 { return unit(sub(i)) }
	if nz.HumMA > 0 {
		h := max(1, int(nz.HumHarmonics))
		for k := 1; k <= h; k++ {
			g.tones = append(g.tones, tone{nz.HumMA * 1e-3 / float64(k), nz.HumHz * float64(k) / hz, phase(uint64(100 + k))})
		}
	}
	if nz.RippleMA > 0 {
		g.tones = append(g.tones, tone{nz.RippleMA * 1e-3, nz.RippleKHz * 1e3 / hz, phase(200)})
	}
	if nz.DriftUA > 0 {
		c := 1 / (nz.DriftS * hz)
		g.tones = append(g.tones, tone{0.6 * nz.DriftUA * 1e-6, c, phase(300)}, tone{0.4 * nz.DriftUA * 1e-6, c * math.E, phase(301)})
	}
	if nz.StepMA > 0 {
		t := newTelegraph(nz.StepMA*1e-3, nz.StepMs, dt, sub(400))
		g.steps = &t
	}
	if nz.BandwidthKHz > 0 {
		g.fir = lowPassFIR(nz.BandwidthKHz*1e3, hz)
	}
	return g
}

// lowPassFIR is the impulse response of a first-order low-pass of corner
// fc at rate hz fed a signal held over each sample period, read at the
// period's end: h_k = (1 − a)·a^k, a = exp(−2π fc/hz), truncated where
// a^k < 10⁻⁷ (at most 4096 taps) and renormalised to sum to 1. Nil when
// one tap would do (the corner far above the rate).
func lowPassFIR(fc, hz float64) []float64 {
	a := math.Exp(-2 * math.Pi * fc / hz)
	if a < 1e-7 {
		return nil
	}
	k := min(4096, int(math.Ceil(math.Log(1e-7)/math.Log(a))))
	h := make([]float64, k+1)
	var sum float64
	w := 1 - a
	for i := range h {
		h[i] = w
		sum += w
		w *= a
	}
	for i := range h {
		h[i] /= sum
	}
	return h
}

// history is how many samples before the first the bandwidth needs.
func (g *noiseGen) history() int {
	if g == nil || g.fir == nil {
		return 0
	}
	return len(g.fir) - 1
}

// add returns the components added after the gain at sample n.
func (g *noiseGen) add(n int64) float64 {
	v := g.offset
	for i := range g.ar {
		v += g.ar[i].value(n)
	}
	for _, t := range g.tones {
		v += t.value(n)
	}
	if g.steps != nil {
		v += g.steps.value(n)
	}
	return v
}

// render writes the readings of samples base … base+len(out)−1 into out.
// x holds, for samples base−history … base+len(out)−1, the drive's mean
// current plus the white noise (the sensor's input).
func (g *noiseGen) render(base int64, x []float64, out []units.Amps) {
	h := g.history()
	for k := range out {
		y := x[h+k]
		if g.fir != nil {
			y = 0
			for j, w := range g.fir {
				y += w * x[h+k-j]
			}
		}
		out[k] = units.Amps(g.gain*y + g.add(base+int64(k)))
	}
}
