package analysis

import (
	"math"
	"math/rand/v2"
	"testing"
)

// spanNoise on drawn spans of drawn levels (1–3 s each, the level changing
// between them by up to a watt): under white noise it reads σ² within
// 2.5 standard errors of a variance of its degrees of freedom, however far
// apart the levels are; under a random telegraph of
// ±a/2 (redrawn every 10–50 ms, so changing every 20–100 ms) it reads at
// least 0.3 of the telegraph's long-run variance a²/4 · 2τ (and at most
// twice it: a few hundred flips make it), where the
// differences of neighbouring 10 ms blocks see about a tenth of it.
func TestSpanNoise(t *testing.T) {
	const rate = 10000
	r := rand.New(rand.NewPCG(11, 12))
	for trial := range 30 {
		sigma := 1e-4 + 3e-3*r.Float64()
		a := 1e-3 + 10e-3*r.Float64()
		tauS := 0.010 + 0.040*r.Float64()
		var w, tg spanNoise
		w.init(rate)
		tg.init(rate)
		level := 0.0
		state := a / 2
		for span := range 12 {
			level += r.Float64() - 0.5
			st := StateIdle
			if span%2 == 1 {
				st = StateSlumber
			}
			n := int((1 + 2*r.Float64()) * rate)
			for range n {
				if r.Float64() < 1/(tauS*rate) {
					state = a / 2
					if r.IntN(2) == 0 {
						state = -a / 2
					}
				}
				e := sigma * r.NormFloat64()
				w.add(level+e, st)
				tg.add(level+state+0.1*e, st)
			}
			w.end()
			tg.end()
		}
		v, dof, _, ok := w.longRun()
		if !ok || dof < 20 || math.Abs(v/(sigma*sigma)-1) > 2.5*math.Sqrt(2/float64(dof)) {
			t.Fatalf("trial %d: white σ %.3g: long-run variance %.4g (dof %d, %v), want %.4g", trial, sigma, v, dof, ok, sigma*sigma)
		}
		want := a * a / 4 * 2 * tauS * rate
		if v, _, _, ok := tg.longRun(); !ok || v < 0.3*want || v > 2*want {
			t.Fatalf("trial %d: telegraph ±%.3g mW, τ %.0f ms: long-run variance %.4g, want about %.4g", trial, a/2*1e3, tauS*1e3, v, want)
		}
	}
}

// blockSigma reads a telegraph's two levels ±a/2 as a block spread near
// a/2 (the MAD of two values a apart), and refuses spans whose blocks lie
// spread between levels a watt apart (a label held through a drive's
// changes: 40 % low, 20 % between, 40 % high — some blocks at the span's
// mean, most far from it): not one level's noise. A span of two levels
// half the time each looks like a telegraph by its spread alone; levelOf
// bounds the spread by the gaps between the learned levels.
func TestSpanBlockSigma(t *testing.T) {
	const rate = 10000
	r := rand.New(rand.NewPCG(13, 14))
	for trial := range 20 {
		a := 1e-3 + 10e-3*r.Float64()
		var tg, gc spanNoise
		tg.init(rate)
		gc.init(rate)
		state := a / 2
		for range 8 {
			level := r.Float64()
			for i := range 6 * rate {
				if r.Float64() < 1/(0.030*rate) {
					state = a / 2
					if r.IntN(2) == 0 {
						state = -a / 2
					}
				}
				e := 1e-5 * r.NormFloat64()
				tg.add(level+state+e, StateIdle)
				burst := 0.0
				switch (i / 1000) % 5 {
				case 1:
					burst = 0.5
				case 2, 3:
					burst = 1
				}
				gc.add(level+burst+e, StateIdle)
			}
			tg.end()
			gc.end()
		}
		s, _, ok := tg.blockSigma(tg.L)
		if !ok || s < 0.5*a/2 || s > 1.6*a/2 {
			t.Fatalf("trial %d: telegraph ±%.3g mW: block σ %.4g mW (%v)", trial, a/2*1e3, s*1e3, ok)
		}
		if s, _, ok := gc.blockSigma(gc.L); ok {
			t.Fatalf("trial %d: spans between levels a watt apart read as one level, block σ %.4g W", trial, s)
		}
		if _, _, _, ok := gc.longRun(); ok {
			t.Fatalf("trial %d: spans between levels a watt apart give a long-run variance", trial)
		}
	}
}
