package detect

import (
	"math"
	"math/rand/v2"
	"testing"
	"time"

	"github.com/idlewatt/idlewatt/hostclock"
	"github.com/idlewatt/idlewatt/units"
)

// TestNoiseSigmaUnderCorrelatedNoiseAndSteps: a drive stepping between
// active idle (400 mW), Partial (150 mW) and Slumber (60 mW) every
// 50–400 ms under AR(1) sensor noise of 1–10 ms (1–3 mA on 5 V), drawn
// here: NoiseSigma is the noise's σ within 20 % — first differences gave
// σ·√(1 − ρ), a third to a tenth of it — and the long-run σ the window is
// sized by is larger than σ by about √τ_int.
func TestNoiseSigmaUnderCorrelatedNoiseAndSteps(t *testing.T) {
	const period = 100 * time.Microsecond
	rng := rand.New(rand.NewPCG(41, 3))
	l := Levels{Idle: 0.4, Partial: 0.15, Slumber: 0.06}
	for k := range 12 {
		tau := math.Exp(math.Log(1e-3) + rng.Float64()*math.Log(10)) // 1–10 ms
		sigma := (1 + 2*rng.Float64()) * 1e-3 * 5                    // W
		rho := math.Exp(-period.Seconds() / tau)
		c, err := New(Options{Levels: l, Period: period, Adaptive: true}, func(Span) {})
		if err != nil {
			t.Fatal(err)
		}
		levels := []units.Watts{l.Idle, l.Partial, l.Slumber}
		e := sigma * rng.NormFloat64()
		var tm hostclock.Time
		for seg := 0; seg < 20; seg++ {
			lvl := levels[seg%3]
			n := int(time.Duration(50+rng.IntN(350)) * time.Millisecond / period)
			for range n {
				e = rho*e + sigma*math.Sqrt(1-rho*rho)*rng.NormFloat64()
				c.Push(tm, lvl+units.Watts(e), false)
				tm += hostclock.Time(period)
			}
		}
		got, lr := c.NoiseSigma(), c.NoiseLongRunSigma()
		wantLR := sigma * math.Sqrt((1+rho)/(1-rho))
		t.Logf("τ %.1f ms, σ %.2f mW: NoiseSigma %.2f mW, long-run %.1f mW (AR(1): %.1f mW), first differences would give %.2f mW",
			tau*1e3, sigma*1e3, got*1e3, lr*1e3, wantLR*1e3, sigma*math.Sqrt(1-rho)*1e3)
		if math.Abs(got/sigma-1) > 0.2 {
			t.Errorf("draw %d: NoiseSigma %.3g W, the noise's σ is %.3g W", k, got, sigma)
		}
		if lr < 0.5*wantLR || lr > 2*wantLR {
			t.Errorf("draw %d: long-run σ %.3g W, AR(1) gives %.3g W", k, lr, wantLR)
		}
	}
}

// NoiseMeanVar follows the noise's autocorrelation: under 50 Hz hum the
// mean of 10 ms (half a period) scatters nearly as one sample does, far
// above σ²/n; under white noise it is σ²/n.
func TestNoiseMeanVarUnderHum(t *testing.T) {
	for _, tc := range []struct {
		name   string
		hum    float64
		lo, hi float64 // MeanVar(100) / (σ²/100)
	}{{"white", 0, 0.8, 1.25}, {"hum", 0.009, 20, 100}} {
		r := rand.New(rand.NewPCG(3, 3))
		c, err := New(Options{Levels: profile, Period: period, Adaptive: true}, func(Span) {})
		if err != nil {
			t.Fatal(err)
		}
		for k := range 40000 {
			x := 0.40 + 0.001*r.NormFloat64() + tc.hum*math.Sin(2*math.Pi*50*float64(k)*period.Seconds())
			c.Push(at(k), units.Watts(x), false)
		}
		c.Close()
		mv := c.NoiseMeanVar()
		s := c.NoiseSigma()
		if got := mv(100) / (s * s / 100); got < tc.lo || got > tc.hi {
			t.Errorf("%s: MeanVar(100) = %.3g × σ²/100, want %g–%g", tc.name, got, tc.lo, tc.hi)
		}
	}
}
