package analysis

import (
	"math"
	"math/rand/v2"
	"testing"
)

// telegraphBlocks adds n block means of one level x under a random
// telegraph of size step (each block on one half, or, a fifth of them, a
// step inside it) and white noise of sigma to ctx's histogram.
func telegraphBlocks(b *blockScale, r *rand.Rand, ctx learnCtx, x, step, sigma float64, n int) {
	for range n {
		h := step / 2
		if r.IntN(2) == 0 {
			h = -h
		}
		if r.IntN(5) == 0 {
			h *= 2*r.Float64() - 1 // a step within the block
		}
		b.hist[ctx].add(x + h + sigma*r.NormFloat64())
	}
}

// A level the meter's steps split reads no wider than active idle, which
// the same steps split under max_performance: the two halves are one
// (campaign seed 14 drive 86: an HDD's Slumber in halves 2.1 mW apart, the
// upper named Partial). Two true levels as far apart as the halves, under
// noise alone, are kept: active idle then reads narrow. Without the rule
// (one nil) the halves stay apart, so the test can fail. Steps finer than
// two of the learning histogram's bins at active idle are not resolved
// there, and the rule stays out (newOneLevel nil).
func TestOneLevelMergesTelegraphHalves(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 4))
	for trial := range 40 {
		// Steps of 3–8 of the learning histogram's bins at active idle
		// (2^-12 of the level): finer ones are not resolved there.
		idle, slumber := 1+6*r.Float64(), 0.5+0.4*r.Float64()
		_, e := math.Frexp(idle)
		step := (3 + 5*r.Float64()) * math.Ldexp(1, e-1-modeSub)
		sigma := step * (0.05 + 0.15*r.Float64())
		// Telegraph: every level split, active idle under max_performance too.
		var b blockScale
		telegraphBlocks(&b, r, ctxMaxPerf, idle, step, sigma, 200+r.IntN(200))
		telegraphBlocks(&b, r, ctxLPM, slumber, step, sigma, 2000+r.IntN(1000))
		split := []mode{{x: idle, n: 300}, {x: slumber + step/2, n: 1200}, {x: slumber - step/2, n: 1100}}
		h := sigma
		one := newOneLevel(&b, h, 6)
		got, _, _, widest := mergeDoublets(split, make([]string, 3), 0, one, 1)
		if len(got) != 2 || math.Abs(got[1].x-slumber) > step/4 {
			pair, _ := one.spread(slumber-step, slumber+step)
			t.Fatalf("trial %d: a %.2f mW telegraph's halves of %.4f W (one level %.3g W, the pair %.3g W): modes %+v, want one at the level", trial, step*1e3, slumber, one.width, pair, got)
		}
		if math.Abs(widest-step) > 1e-12 {
			t.Errorf("trial %d: widest merged %.4g W, want the halves' %.4g", trial, widest, step)
		}
		if got, _, _, _ := mergeDoublets(split, make([]string, 3), 0, nil, 1); len(got) != 3 {
			t.Fatalf("trial %d: without the rule the halves merged: %+v", trial, got)
		}
		// Two true levels step apart under white noise: active idle one
		// narrow level, the pair's blocks twice as wide.
		var c blockScale
		for range 300 {
			c.hist[ctxMaxPerf].add(idle + sigma*r.NormFloat64())
		}
		for range 1200 {
			c.hist[ctxLPM].add(slumber + step/2 + sigma*r.NormFloat64())
			c.hist[ctxLPM].add(slumber - step/2 + sigma*r.NormFloat64())
		}
		if got, _, _, _ := mergeDoublets(split, make([]string, 3), 0, newOneLevel(&c, h, 6), 1); len(got) != 3 {
			t.Fatalf("trial %d: two levels %.2f mW apart under %.3f mW noise merged: %+v", trial, step*1e3, sigma*1e3, got)
		}
	}
}

// The pin's drop is judged with the level steps' spread: a drive that
// ignores the pin, whose median under the pin in one cycle sat a step
// below the one before it (campaign seed 13 drive 40), is not given a
// DevSlp level; a true drop of several steps still is. Without stepW the
// first is named DevSlp, so the test can fail.
func TestPinDropWithLevelSteps(t *testing.T) {
	const step, sb = 0.0007, 0.00016
	r := rand.New(rand.NewPCG(5, 6))
	blocks := func(x float64, n int) []float64 {
		v := make([]float64, n)
		for i := range v {
			v[i] = x + sb*r.NormFloat64()/4
		}
		return v
	}
	name := func(stepW, floor float64) bool {
		nm := &naming{
			all:   []mode{{x: 0.041, n: 400}, {x: 0.005, n: 1500}, {x: floor, n: 400}},
			named: make([]string, 3), ev: map[string]string{}, stepW: stepW,
			se: func(n float64) float64 { return sb / math.Sqrt(math.Max(n, 1)) },
		}
		nm.lv.Idle = 0.041
		cycles := []pinCycle{
			{pre: blocks(0.005+step/2, 30), pin: blocks(floor-step/2, 200)}, // one step down
			{pre: blocks(0.005-step/2, 30), pin: blocks(floor+step/2, 200)}, // one step up
			{pre: blocks(0.005, 30), pin: blocks(floor, 200)},
		}
		nm.nameDevSlpAtPin(cycles, mode{x: floor, n: 400})
		return nm.lv.DevSlp > 0
	}
	if !name(0, 0.005) {
		t.Fatal("without the steps' spread a one-step drop named no DevSlp: the test cannot fail")
	}
	if name(step, 0.005) {
		t.Error("a drive that ignores the pin, one cycle a level step lower, was given a DevSlp level")
	}
	if !name(step, 0.001) {
		t.Error("a true 4 mW drop under 0.7 mW level steps named no DevSlp")
	}
}
