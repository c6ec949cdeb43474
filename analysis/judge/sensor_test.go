package judge

import (
	"math"
	"math/rand/v2"
	"testing"
)

// TestSensorPoleAndEdgeDelay: steps of 200 σ, their change anywhere within
// a sample, through first-order sensors of τ 1.2–4 samples (a 2–20 kHz
// sensor read at 10–100 kS/s): the pole is learned from the steps within
// 5 % and the entry fit, corrected by sensorEdge, is unbiased within 0.15
// sample, where uncorrected it reads late by ½a/(1−a) or more. A sharp
// step (no sensor) gives no pole.
func TestSensorPoleAndEdgeDelay(t *testing.T) {
	for _, c := range []struct{ fcHz, rate float64 }{{1e3, 1e4}, {1.2e3, 1e4}, {2e3, 2e4}, {5e3, 1e5}, {0, 1e4}} {
		a := 0.0
		if c.fcHz > 0 {
			a = math.Exp(-2 * math.Pi * c.fcHz / c.rate)
		}
		rng := rand.New(rand.NewPCG(1, uint64(c.fcHz)))
		const sigma, delta, n, every = 1e-3, 0.2, 40000, 400
		x := make([]float64, n)
		var changes []float64
		lvl := 0.0
		for i := range x {
			x[i] = lvl
			if i%every == every/2 {
				f := rng.Float64()
				nl := delta - lvl
				// A share f of sample i after the change. Sample i spans
				// [i − ½, i + ½) (the judge's latencies take half a period
				// off the first sample at the new level), so the change is
				// at i + ½ − f.
				x[i] = lvl + (nl-lvl)*f
				changes = append(changes, float64(i)+0.5-f)
				lvl = nl
			}
		}
		w := make([]float64, n)
		prev := 0.0
		for i := range x {
			prev = a*prev + (1-a)*x[i]
			w[i] = prev + sigma*rng.NormFloat64()
		}
		var sf sensorFit
		sf.sensorSteps(w, sigma)
		got, se := sf.pole()
		if c.fcHz == 0 {
			if got != 0 {
				t.Errorf("sharp steps: pole %.3f, want none", got)
			}
			continue
		}
		if math.Abs(got-a) > 0.05*a {
			t.Errorf("fc %g at %g S/s: pole %.4f ± %.4f, want %.4f", c.fcHz, c.rate, got, se, a)
		}
		shift, _, ok := sensorTerm(got, se)
		if !ok {
			t.Fatalf("fc %g at %g S/s: τ %.2f samples not corrected", c.fcHz, c.rate, -1/math.Log(got))
		}
		var bias, raw float64
		for _, ch := range changes {
			i0 := int(ch) - 50
			seg := w[i0 : i0+150]
			before := 0.0
			if w[i0] > delta/2 {
				before = delta
			}
			s, ok := fitStepFrom(seg, before, 0, 1, len(seg)-1, 20, got)
			if !ok {
				t.Fatal("no fit")
			}
			est := float64(i0+s.K) - 0.5
			raw += est - ch
			bias += est - shift - ch
		}
		raw /= float64(len(changes))
		bias /= float64(len(changes))
		if math.Abs(bias) > 0.15 {
			t.Errorf("fc %g at %g S/s (a %.3f): corrected entry biased %.3f samples (uncorrected %.3f)", c.fcHz, c.rate, a, bias, raw)
		}
		if raw < 0.4*a/(1-a) {
			t.Errorf("fc %g at %g S/s: uncorrected bias %.3f: the test does not exercise the delay", c.fcHz, c.rate, raw)
		}
	}
}

// TestSensorPoleNotFromAPlateau: a sharp step to a level held 8–15 samples
// and then a second step (a transfer's end at I/O power and, a millisecond
// later, idle: the independent generator's drives 10, 29, 41, 47 of seed
// 2), no sensor. The plateau after the first step is flat, so its first
// samples stand where the approach's factor 1 would put them, and the
// level after it fills most of the stretch taken for the new level: the
// step read a = 1, clamped to 0.95 — a sensor of 20 samples that moved
// that cycle's entry ≈ 10 samples early (33.934 ± 0.21 ms for 34.975). The
// approach must reach the new level across that stretch too: no pole.
func TestSensorPoleNotFromAPlateau(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 10))
	const sigma, hi, mid, lo, every = 2e-3, 3.1, 1.7, 1.03, 200
	var w []float64
	for k := 8; k <= 15; k++ {
		for range 5 {
			f := rng.Float64() // the share of the step's sample at the plateau
			for range every / 2 {
				w = append(w, hi)
			}
			w = append(w, hi+(mid-hi)*f)
			for range k {
				w = append(w, mid)
			}
			for range every / 2 {
				w = append(w, lo)
			}
		}
	}
	for i := range w {
		w[i] += sigma * rng.NormFloat64()
	}
	var sf sensorFit
	sf.sensorSteps(w, sigma)
	if a, se := sf.pole(); a != 0 {
		t.Errorf("sharp steps with a plateau after: pole %.3f ± %.3f, want none", a, se)
	}
}
