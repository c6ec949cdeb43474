package detect

import (
	"math"
	"math/rand/v2"
	"testing"
	"time"

	"github.com/idlewatt/idlewatt/units"
)

// A quantised meter whose noise moves few readings — 0.6–5 % of
// neighbours differ, by one step — and whose first 200 ms hold a
// background burst: most differences are 0, and those over the burst's
// edges are steps of 0.14 W. The window is sized from the quantiser's
// noise, not from the burst: it was 100 ms (campaign 28:48, 2 % of
// neighbours moved), and hid a 29 ms burst in a Slumber span that was then
// read as Partial. Drawn: the step (20–200 µW), the noise (0.1–0.4 steps),
// the level's place in its step, the burst's place and length; draws
// outside 0.6–5 % are drawn again (outside it the quantiser shows plainly,
// or not at all).
func TestWindowUnderQuantisedNoise(t *testing.T) {
	rng := rand.New(rand.NewPCG(28, 48))
	const n = 4000
	for trial := 0; trial < 20; {
		q := 20e-6 + 180e-6*rng.Float64()
		sigma := (0.1 + 0.3*rng.Float64()) * q
		idle := (math.Round(0.25/q) + rng.Float64()) * q
		burstAt, burstN := 200+rng.IntN(800), 200+rng.IntN(700)
		xs := make([]float64, n)
		moved := 0
		for i := range xs {
			w := idle
			if i >= burstAt && i < burstAt+burstN {
				w = 0.39
			}
			xs[i] = math.Round((w+sigma*rng.NormFloat64())/q) * q
			if i > 0 && i < 2048 && xs[i] != xs[i-1] && math.Abs(xs[i]-xs[i-1]) < 1.5*q {
				moved++
			}
		}
		if share := float64(moved) / 2047; share < 0.006 || share > 0.05 {
			continue
		}
		c, err := New(Options{Levels: Levels{Idle: 0.25, Partial: 0.148, Slumber: 0.085, DevSlp: 0.0004}, Period: 100 * time.Microsecond, Adaptive: true}, func(Span) {})
		if err != nil {
			t.Fatal(err)
		}
		for i, x := range xs {
			c.Push(at(i), units.Watts(x), false)
		}
		if s := c.Smooth(); s > 5*time.Millisecond {
			t.Errorf("trial %d: step %.0f µW, noise %.2f steps, %d of 2047 neighbours one step apart, a %d-sample burst at %d: window %v, want ≤ 5 ms",
				trial, q*1e6, sigma/q, moved, burstN, burstAt, s)
		}
		trial++
	}
}
