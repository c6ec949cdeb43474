package detect

import (
	"math/rand/v2"
	"testing"

	"github.com/idlewatt/idlewatt/hostclock"
	"github.com/idlewatt/idlewatt/states/powerstate"
	"github.com/idlewatt/idlewatt/units"
)

// releaseRun pushes a quiet stretch — Slumber 300 ms, the HBA's DevSlp
// for 1–2 s, then Slumber for 0.3–0.6 s once the HBA released the signal
// (a policy change, no I/O), then a read — under AR(1) noise of σ sigma
// and correlation time tau (ms), and returns the seconds after the
// release read as DevSlp and the Slumber's length there; with release,
// the classifier splits its spans at the release and MonotoneLevels is
// told of it (MonotoneLevelsReleased).
func releaseRun(t *testing.T, r *rand.Rand, lv Levels, sigma, tau float64, release bool) (after, slumber float64) {
	t.Helper()
	var spans []Span
	c, err := New(Options{Levels: lv, Period: period, Adaptive: true}, func(s Span) { spans = append(spans, s) })
	if err != nil {
		t.Fatal(err)
	}
	devslp, tail := samplesOf(1000+1000*r.Float64()), samplesOf(300+300*r.Float64())
	segs := []arSeg{
		{float64(lv.Slumber), samplesOf(300), false},
		{float64(lv.DevSlp), devslp, false},
		{float64(lv.Slumber), tail, false},
		{3 * float64(lv.Idle), samplesOf(2), true},
		{float64(lv.Idle), samplesOf(100), false},
	}
	at := hostclock.Time(int64(samplesOf(300)+devslp) * int64(period))
	var rel []hostclock.Time
	if release {
		rel = []hostclock.Time{at}
		c.SplitAt(rel)
	}
	mv := pushAR(c, r, segs, sigma, tau)
	for _, s := range MonotoneLevelsReleased(spans, lv, mv, nil, nil, rel) {
		if s.State == powerstate.DevSlp && s.End > at {
			after += s.End.Sub(max(s.Start, at)).Seconds()
		}
	}
	return after, float64(tail) * period.Seconds()
}

// TestReleaseEndsTheStretch: the HBA releasing its DEVSLP as the policy
// leaves min_power wakes the drive to Slumber without an I/O. Without the
// release known, the link may only deepen in the quiet stretch, and the
// DevSlp and the Slumber after it were read as one level (campaign seed
// 32 drive 106: 1.47 s of DevSlp read as Slumber). Drawn levels and
// noise near that drive's (Slumber 2–5 mW, DevSlp 0.1–0.3 of it, AR(1)
// τ 5–15 ms, σ 0.3–0.6 of the gap): with the release, no more than 0.1 s
// after it read as DevSlp on every draw (without: the whole Slumber after
// it on some).
func TestReleaseEndsTheStretch(t *testing.T) {
	r := rand.New(rand.NewPCG(32, 106))
	const draws = 24
	goodWith, goodWithout := 0, 0
	for range draws {
		u := func(a, b float64) float64 { return a + (b-a)*r.Float64() }
		idle := u(0.02, 0.06)
		slumber := u(0.002, 0.005)
		lv := Levels{Idle: units.Watts(idle), Partial: units.Watts(idle * u(0.3, 0.6)), Slumber: units.Watts(slumber), DevSlp: units.Watts(slumber * u(0.1, 0.3))}
		sigma := float64(lv.Slumber-lv.DevSlp) * u(0.3, 0.6)
		tau := u(5, 15)
		seed := r.Uint64()
		with, tail := releaseRun(t, rand.New(rand.NewPCG(seed, 1)), lv, sigma, tau, true)
		without, _ := releaseRun(t, rand.New(rand.NewPCG(seed, 1)), lv, sigma, tau, false)
		t.Logf("Slumber %.2f mW, DevSlp %.2f, σ %.2f mW τ %.0f ms: %.3f s of the %.3f s after the release read as DevSlp (without the release %.3f)",
			1e3*slumber, 1e3*float64(lv.DevSlp), 1e3*sigma, tau, with, tail, without)
		if with <= 0.1 {
			goodWith++
		}
		if without <= 0.1 {
			goodWithout++
		}
	}
	t.Logf("at most 0.1 s after the release read as DevSlp on %d of %d draws (%d without the release)", goodWith, draws, goodWithout)
	if goodWith < draws {
		t.Errorf("at most 0.1 s after the release read as DevSlp on %d of %d draws, want all", goodWith, draws)
	}
}
