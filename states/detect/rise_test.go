package detect

import (
	"math"
	"math/rand/v2"
	"testing"

	"github.com/idlewatt/idlewatt/hostclock"
	"github.com/idlewatt/idlewatt/states/powerstate"
	"github.com/idlewatt/idlewatt/units"
)

// arSeg is a stretch of n samples at power w, with an I/O in flight or not.
type arSeg struct {
	w    float64
	n    int
	busy bool
}

// samplesOf is x milliseconds in samples.
func samplesOf(x float64) int { return int(x * 1e-3 / period.Seconds()) }

// pushAR pushes segs through c under AR(1) noise of σ sigma and correlation
// time tau (ms), closes it, and returns the variance of a mean of n of
// its samples: σ²/n × (1+ρ)/(1−ρ) for spans far longer than τ, σ² for
// shorter ones.
func pushAR(c *Classifier, r *rand.Rand, segs []arSeg, sigma, tau float64) MeanVar {
	rho := math.Exp(-period.Seconds() / (tau * 1e-3))
	e := sigma * r.NormFloat64()
	k := 0
	for _, s := range segs {
		for range s.n {
			e = rho*e + sigma*math.Sqrt(1-rho*rho)*r.NormFloat64()
			c.Push(hostclock.Time(int64(k)*int64(period)), units.Watts(s.w+e), s.busy)
			k++
		}
	}
	c.Close()
	return func(n int) float64 {
		return sigma * sigma * math.Min(1, (1+rho)/(1-rho)/float64(max(n, 1)))
	}
}

// riseRun pushes a quiet stretch through a classifier — Slumber, then the
// HBA's DevSlp for 0.8–2 s, a wake at the idle level for wakeMs, Slumber
// for 20–40 ms, a GC burst of 30–60 ms, Slumber again — under AR(1) noise
// of correlation time tau (ms) and σ sigma (W), and returns the DevSlp
// seconds MonotoneLevels reads and the truth's.
func riseRun(t *testing.T, r *rand.Rand, lv Levels, sigma, tau, wakeMs float64, carve bool) (got, truth float64) {
	t.Helper()
	var spans []Span
	c, err := New(Options{Levels: lv, Period: period, Adaptive: true}, func(s Span) { spans = append(spans, s) })
	if err != nil {
		t.Fatal(err)
	}
	c.noRiseCarve = !carve
	devslp := samplesOf(800 + 1200*r.Float64())
	segs := []arSeg{
		{float64(lv.Slumber), samplesOf(600), false},
		{float64(lv.DevSlp), devslp, false},
		{float64(lv.Idle), samplesOf(wakeMs), false},
		{float64(lv.Slumber), samplesOf(20 + 20*r.Float64()), false},
		{2.5 * float64(lv.Idle), samplesOf(30 + 30*r.Float64()), false},
		{float64(lv.Slumber), samplesOf(700), false},
	}
	truth = float64(devslp) * period.Seconds()
	mv := pushAR(c, r, segs, sigma, tau)
	for _, s := range MonotoneLevelsNoise(spans, lv, mv, nil) {
		if s.State == powerstate.DevSlp {
			got += s.Duration().Seconds()
		}
	}
	return got, truth
}

// TestCarveRiseKeepsTheSpanItInterrupts: a wake from the HBA's DevSlp
// (tens of ms at the idle level, shorter than the dwell of a window sized
// for Slumber and DevSlp 2–3 σ apart under correlated noise), then
// Slumber and a GC burst. Without the rise carved, the wake stayed in the
// DevSlp span, pulled its mean towards Slumber's, and the whole span
// could be read as Slumber (campaign seed 30 drive 117: 1.5 s). Drawn
// levels and noise as that drive's (idle 30–80 mW, Slumber 3–6 mW,
// DevSlp 0.3–0.5 of it, AR(1) τ 8–15 ms, σ a half to a third of the
// gap, the wake 30–60 ms): the DevSlp time within 50 ms of the truth on
// every draw with the rises carved, and not without.
func TestCarveRiseKeepsTheSpanItInterrupts(t *testing.T) {
	r := rand.New(rand.NewPCG(30, 117))
	const draws = 12
	goodWith, goodWithout := 0, 0
	for range draws {
		u := func(a, b float64) float64 { return a + (b-a)*r.Float64() }
		idle := u(0.03, 0.08)
		slumber := u(0.003, 0.006)
		lv := Levels{Idle: units.Watts(idle), Partial: units.Watts(idle * u(0.85, 0.92)), Slumber: units.Watts(slumber), DevSlp: units.Watts(slumber * u(0.3, 0.5))}
		sigma := float64(lv.Slumber-lv.DevSlp) / u(2, 3)
		tau, wake := u(8, 15), u(30, 60)
		seed := r.Uint64()
		with, truth := riseRun(t, rand.New(rand.NewPCG(seed, 1)), lv, sigma, tau, wake, true)
		without, _ := riseRun(t, rand.New(rand.NewPCG(seed, 1)), lv, sigma, tau, wake, false)
		t.Logf("Slumber %.2f mW, DevSlp %.2f, σ %.2f mW τ %.0f ms, wake %.0f ms: DevSlp %.3f s (without the carve %.3f), truth %.3f",
			1e3*slumber, 1e3*float64(lv.DevSlp), 1e3*sigma, tau, wake, with, without, truth)
		if math.Abs(with-truth) <= 0.05 {
			goodWith++
		}
		if math.Abs(without-truth) <= 0.05 {
			goodWithout++
		}
	}
	t.Logf("DevSlp within 50 ms on %d of %d draws (%d without the carve)", goodWith, draws, goodWithout)
	if goodWith < draws {
		t.Errorf("DevSlp within 50 ms of the truth on %d of %d draws, want all", goodWith, draws)
	}
}
