package stat

import (
	"math"
	"math/rand/v2"
	"testing"
)

// Readings quantised to a step q with noise under half a step — more zero
// differences than not, a median of 0 — and levels 20–60 steps apart held
// for 0.1–1 s: σ is the readings' own noise about their level, not 0 and
// not the level steps (campaign 33:109: 7.6 mW for 0.12 mW). Drawn: q, σ
// (0.15–0.45 q), the levels and their order; the truth is the standard
// deviation of each reading from its level's mean, computed here.
func TestNoiseOfQuantisedReadings(t *testing.T) {
	rng := rand.New(rand.NewPCG(33, 109))
	bad := 0
	const trials = 40
	for trial := range trials {
		q := math.Exp(math.Log(1e-5) + rng.Float64()*math.Log(1e3))
		sigma := (0.15 + 0.3*rng.Float64()) * q
		var xs []float64
		var ss float64
		n := 0
		for len(xs) < 200_000 {
			level := (20 + 40*rng.Float64()) * q
			run := 1000 + rng.IntN(9000)
			start := len(xs)
			var sum float64
			for range run {
				x := math.Round((level+sigma*rng.NormFloat64())/q) * q
				xs = append(xs, x)
				sum += x
			}
			m := sum / float64(run)
			for _, x := range xs[start:] {
				ss += (x - m) * (x - m)
				n++
			}
		}
		want := math.Sqrt(ss / float64(n))
		nm := NoiseOf(xs)
		if !nm.Ok || math.Abs(nm.Sigma-want) > 0.15*want {
			bad++
			t.Errorf("trial %d: step %.3g, noise %.2f steps: σ %.4g (%.2f steps), the readings' own %.4g (%.2f steps)",
				trial, q, sigma/q, nm.Sigma, nm.Sigma/q, want, want/q)
		}
	}
	t.Logf("%d of %d off by more than 15 %%", bad, trials)
}

// Lag 1 decides: a noise-free signal stepping between two levels moves by
// one step, but between neighbours only at its few steps — it is no
// quantiser, and its σ stays 0.
func TestNoQuantiserFromTwoLevels(t *testing.T) {
	rng := rand.New(rand.NewPCG(4, 4))
	var xs []float64
	for len(xs) < 300_000 {
		level := 0.4
		if rng.IntN(2) == 0 {
			level = 1.4
		}
		for range 20 + rng.IntN(3000) {
			xs = append(xs, level)
		}
	}
	if nm := NoiseOf(xs); nm.Sigma != 0 {
		t.Errorf("σ %g of a noise-free two-level signal, want 0", nm.Sigma)
	}
}
