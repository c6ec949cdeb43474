package analysis

import (
	"math"
	"math/rand/v2"
	"testing"
)

// rcSamples renders a level sequence (each level held for its duration,
// s) through a continuous first-order RC of time constant tau (0: none)
// and an integrating ADC (each sample the mean of the sensor's output over
// its period T): the analytic response, not the simulator's discrete
// filter. It returns the samples and, per sample, whether the level was
// constant over it and the one before (where the inverse filter is exact).
func rcSamples(levels, durs []float64, T, tau float64) (ys []float64, full []bool) {
	y := levels[0]
	k, left := 0, durs[0]
	prevFull := false
	for k < len(levels) {
		var area float64
		rem := T
		whole := left >= T
		for rem > 1e-15 && k < len(levels) {
			h := min(rem, left)
			L := levels[k]
			if tau > 0 {
				e := math.Exp(-h / tau)
				area += L*h + (y-L)*tau*(1-e)
				y = L + (y-L)*e
			} else {
				area += L * h
				y = L
			}
			rem -= h
			left -= h
			if left <= 1e-15 {
				k++
				if k < len(levels) {
					left = durs[k]
				}
			}
		}
		if rem > 1e-15 {
			break
		}
		ys = append(ys, area/T)
		full = append(full, whole && prevFull)
		prevFull = whole
	}
	return ys, full
}

// TestPoleLearnsAnRC draws drives' level sequences (holds of 0.2–30 ms,
// levels 0.05–8 W, steps at any phase of the sample grid), renders them
// through an analytic RC and integrating ADC with white noise, and checks
// that the learned time constant's interval holds the RC's, and that the
// inverse filter gives back the level at every sample a level held over
// it and the one before (to within the noise it amplifies).
func TestPoleLearnsAnRC(t *testing.T) {
	const T = 1e-4
	held, learned := 0, 0
	for trial := range 40 {
		r := rand.New(rand.NewPCG(44, uint64(trial)))
		fc := math.Exp(math.Log(1e3) + r.Float64()*math.Log(5)) // 1–5 kHz: a 0.04–0.53
		tau := 1 / (2 * math.Pi * fc)
		sigma := 1e-3 * math.Exp(r.Float64()*math.Log(5)) // 1–5 mW
		var levels, durs []float64
		for range 400 {
			levels = append(levels, math.Exp(math.Log(0.05)+r.Float64()*math.Log(160)))
			durs = append(durs, math.Exp(math.Log(2e-4)+r.Float64()*math.Log(150)))
		}
		ys, full := rcSamples(levels, durs, T, tau)
		for i := range ys {
			ys[i] += sigma * r.NormFloat64()
		}
		var l poleLearner
		for i := 0; i < len(ys); i += 997 {
			l.take(ys[i:min(i+997, len(ys))])
		}
		p := l.model()
		tauHat, u95 := p.tauS(T)
		if math.IsNaN(tauHat) {
			t.Logf("trial %d: τ %.4g ms not learned (σ %.2g mW, %d steps)", trial, tau*1e3, sigma*1e3, l.steps)
			continue
		}
		learned++
		if math.Abs(tauHat-tau) <= u95 {
			held++
		} else {
			t.Logf("trial %d: τ %.5g ± %.2g ms, truth %.5g (%d steps)", trial, tauHat*1e3, u95*1e3, tau*1e3, p.Steps)
		}
		// The inverse filter: exact where the level held over a sample and
		// the one before.
		b, u95B := p.b()
		g := math.Hypot(1+b, b)
		var worst float64
		k, acc := 0, 0.0
		at := 0.0
		for i := 1; i < len(ys); i++ {
			if !full[i] {
				continue
			}
			// the level over sample i
			for k < len(levels) && acc+durs[k] <= float64(i)*T+1e-12 {
				acc += durs[k]
				k++
			}
			at = levels[k]
			d := ys[i] - ys[i-1]
			x := ys[i] + b*d
			worst = max(worst, (math.Abs(x-at)-math.Abs(d)*u95B)/(g*sigma))
		}
		if worst > 6 {
			t.Errorf("trial %d: the inverse filter is %.1f × its noise (past b's uncertainty) off a level held over a sample and the one before", trial, worst)
		}
	}
	t.Logf("τ learned on %d of 40 RCs, its interval held on %d", learned, held)
	// Measured: 38 and 34 (89 %: the interval is a little narrow, from the
	// steps' selection by u; docs/analysis.md).
	if learned < 36 || float64(held) < 0.85*float64(learned) {
		t.Errorf("τ learned on %d of 40, its interval held on %d: want ≥ 36 and ≥ 85 %%", learned, held)
	}
}

// TestPoleNotLearnedWithoutABandwidth: steps read without a bandwidth,
// under white, correlated (AR(1), τ 0.2–2 ms), quantised (an LSB over the
// noise) and slowly rippling (a tone aliased to 100–300 Hz) noise, give no
// sensor response: the peak stays the highest sample.
func TestPoleNotLearnedWithoutABandwidth(t *testing.T) {
	const T = 1e-4
	for trial := range 40 {
		r := rand.New(rand.NewPCG(45, uint64(trial)))
		var levels, durs []float64
		for range 400 {
			levels = append(levels, math.Exp(math.Log(0.05)+r.Float64()*math.Log(160)))
			durs = append(durs, math.Exp(math.Log(2e-4)+r.Float64()*math.Log(150)))
		}
		ys, _ := rcSamples(levels, durs, T, 0)
		sigma := 1e-3 * math.Exp(r.Float64()*math.Log(5))
		kind := trial % 4
		rho := math.Exp(-T / (2e-4 * math.Exp(r.Float64()*math.Log(10))))
		lsb := sigma * (2 + 3*r.Float64())
		f := 100 + 200*r.Float64()
		var ar float64
		for i := range ys {
			switch kind {
			case 0:
				ys[i] += sigma * r.NormFloat64()
			case 1:
				ar = rho*ar + sigma*math.Sqrt(1-rho*rho)*r.NormFloat64()
				ys[i] += ar
			case 2:
				ys[i] = lsb * math.Round((ys[i]+0.2*lsb*r.NormFloat64())/lsb)
			case 3:
				ys[i] += 3*sigma*math.Sin(2*math.Pi*f*float64(i)*T) + 0.2*sigma*r.NormFloat64()
			}
		}
		var l poleLearner
		l.take(ys)
		if tau, _ := l.model().tauS(T); !math.IsNaN(tau) {
			t.Errorf("trial %d (noise kind %d): a sensor time constant %.4g ms learned with no bandwidth", trial, kind, tau*1e3)
		}
	}
}

// TestDeconvIsTheInverseFilter: x̂ = y + b·Δ over runs split anywhere
// (a break between runs only where the caller says) is one pass over the
// whole, and a NaN breaks it.
func TestDeconvIsTheInverseFilter(t *testing.T) {
	r := rand.New(rand.NewPCG(46, 1))
	ys := make([]float64, 5000)
	for i := range ys {
		ys[i] = r.NormFloat64()
	}
	ys[2500] = 50
	var whole decPeak
	c := deconv{b: 0.4}
	c.add(ys, &whole)
	var parts decPeak
	c = deconv{b: 0.4}
	for i := 0; i < len(ys); {
		n := 1 + r.IntN(300)
		c.add(ys[i:min(i+n, len(ys))], &parts)
		i += n
	}
	want := ys[2500] + 0.4*(ys[2500]-ys[2499])
	if whole != parts || whole.max != want || whole.d != ys[2500]-ys[2499] {
		t.Errorf("split runs %+v, whole %+v, want max %v", parts, whole, want)
	}
	ys[2499] = math.NaN()
	var brk decPeak
	c = deconv{b: 0.4}
	c.add(ys, &brk)
	if brk.max != 50 || brk.d != 0 {
		t.Errorf("after a NaN the sample has no predecessor: %+v, want 50 with Δ 0", brk)
	}
}
