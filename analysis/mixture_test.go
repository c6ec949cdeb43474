package analysis

import (
	"cmp"
	"math"
	"math/rand/v2"
	"slices"
	"testing"
)

// A quantised, noise-free meter gives block means of a few exact values:
// Slumber, Partial and idle of an HDD 0.19–0.27 W apart, 522, 41 and 50
// blocks, a few stray blocks between. The seeds sit exactly on the values,
// so the means never move; the fit must still run until its weights
// settle, or the Partial's 41 blocks look as if they cost likelihood and
// the level is dropped (it was: campaign 2:18, 6.8 % of the time).
func TestMixtureKeepsExactLevels(t *testing.T) {
	levels := []struct{ x, n float64 }{{7.41658, 522}, {7.61107, 41}, {7.88366, 50}, {10.0951, 19}}
	var cs []mixCell
	for _, l := range levels {
		cs = append(cs, mixCell{x: l.x, n: l.n})
	}
	for _, x := range []float64{7.42793, 7.54529, 7.57649, 7.70423, 7.73443, 7.74200, 7.81235} {
		cs = append(cs, mixCell{x: x, n: 1})
	}
	slices.SortFunc(cs, func(a, b mixCell) int { return cmp.Compare(a.x, b.x) })
	seeds := []float64{7.41658, 7.88366, 7.61107, 10.0951, 7.88366}
	got := mixture(cs, seeds, 0.000597, 5, 1)
	want := []float64{10.0951, 7.88366, 7.61107, 7.41658}
	if len(got) != len(want) {
		t.Fatalf("components %+v, want 4 at %v", got, want)
	}
	for i, c := range got {
		if math.Abs(c.mu-want[i]) > 1e-4 || math.Abs(c.n-levels[3-i].n) > 2 {
			t.Errorf("component %d: %.5f W, %.1f blocks; want %.5f W, %.0f blocks", i, c.mu, c.n, want[i], levels[3-i].n)
		}
	}
}

// Level steps of 0.9 mW (a random telegraph, 0.18 mA at 5 V) split every
// level of campaign seed 2's drive 0 in two: the doublets are merged, each
// at its time-weighted mean. Levels that are merely close (an HDD's idle,
// Partial and Slumber a few per cent apart) or one pair alone are not.
func TestMergeDoublets(t *testing.T) {
	ms := func(xn ...float64) []mode {
		var out []mode
		for i := 0; i < len(xn); i += 2 {
			out = append(out, mode{x: xn[i], n: xn[i+1]})
		}
		return out
	}
	from := func(n int) []string { return make([]string, n) }
	got, _, onto, _ := mergeDoublets(ms(0.27061, 38, 0.26972, 50, 0.11755, 202, 0.11666, 257, 0.01011, 183, 0.00922, 247), from(6), 0, nil, 1)
	want := []float64{(0.27061*38 + 0.26972*50) / 88, (0.11755*202 + 0.11666*257) / 459, (0.01011*183 + 0.00922*247) / 430}
	if len(got) != 3 {
		t.Fatalf("merged into %d modes %+v, want 3", len(got), got)
	}
	for i, m := range got {
		if math.Abs(m.x-want[i]) > 1e-12 {
			t.Errorf("level %d at %.6f W, want %.6f", i, m.x, want[i])
		}
	}
	if x := onto(0.00922); math.Abs(x-want[2]) > 1e-12 {
		t.Errorf("onto(a half) = %g, want the merged %g", x, want[2])
	}
	if x := onto(0.05); x != 0.05 {
		t.Errorf("onto(0.05) = %g: no doublet there", x)
	}
	for name, in := range map[string][]mode{
		"HDD levels":   ms(5.30, 40, 5.02, 100, 4.89, 80, 4.74, 300, 2.1, 5),
		"one doublet":  ms(0.27, 50, 0.12, 200, 0.1191, 250, 0.01, 400),
		"lopsided":     ms(0.27061, 38, 0.26972, 2, 0.11755, 202, 0.11666, 3, 0.01, 300),
		"three levels": ms(0.4, 10, 0.2, 10, 0.1, 10),
		// Two spacings that agree by chance, each a third of its neighbours'
		// gaps (campaign seed 2, drive 191: idle, Partial, Slumber, DevSlp).
		"by chance": ms(0.86586, 36, 0.36508, 100, 0.28799, 64, 0.08535, 593, 0.00077, 255),
	} {
		if out, _, _, _ := mergeDoublets(in, from(len(in)), 0, nil, 1); len(out) != len(in) {
			t.Errorf("%s: %d modes merged into %d", name, len(in), len(out))
		}
	}
}

// A telegraph faster than a block (0.51 mA at 5 V redrawn every 7 ms)
// makes every level a triplet: the blocks that hold one half, the other,
// or a step between them. Each triplet is one level, at its time-weighted
// mean (the campaign space's 1:102, whose idle triplet was named idle,
// Partial and background, residency off by 46 points offline). Two rails' telegraphs (an HDD, 0.2 mA on 5 V and on 12 V) make
// triplets at some levels and doublets at others, each pattern shared by
// two levels: all are merged. So are a level's halves that the fit split
// again, and a slow telegraph's triplet whose middle holds little. Three
// levels spaced alike but not isolated from the others are not.
func TestMergeTelegraphTriplets(t *testing.T) {
	ms := func(xs ...float64) []mode {
		var out []mode
		for i := 0; i < len(xs); i += 2 {
			out = append(out, mode{x: xs[i], n: xs[i+1]})
		}
		return out
	}
	mean := func(m []mode) float64 {
		var s, n float64
		for _, x := range m {
			s, n = s+x.x*x.n, n+x.n
		}
		return s / n
	}
	for name, c := range map[string]struct {
		in     []mode
		step   float64 // the telegraph's step the capture shows (0: none)
		groups []int   // modes per level, in order
	}{
		"SSD, triplets": {ms(2.5451, 32.3, 2.5439, 58.0, 2.5426, 28.7, 1.2923, 63.2, 1.2909, 109.9, 1.2898, 77.1,
			0.39606, 710.5, 0.39484, 1372.9, 0.39356, 674.5, 0.034844, 185.9, 0.033541, 391.0, 0.032338, 205.0), 0, []int{3, 3, 3, 3}},
		"HDD, triplets and doublets": {ms(5.42462, 35.8, 5.42336, 69.6, 5.42183, 27.3, 4.72996, 38.9, 4.728, 147.9, 4.72687, 51.5,
			4.66622, 590.2, 4.66386, 481.2, 4.45331, 165.8, 4.4511, 234.1), 0, []int{3, 3, 2, 2}},
		"evenly spaced levels": {ms(0.9, 10, 0.5, 30, 0.4, 40, 0.3, 30, 0.01, 50), 0, []int{1, 1, 1, 1, 1}},
		// A telegraph of 0.89 mW redrawn every 56 ms (campaign space 2:0):
		// the fit splits each half of Partial again, 0.03 mW apart at a
		// meter noise of 0.01 mW — four modes, two parts.
		"halves split again": {ms(0.270011, 148.8, 0.117549, 209.0, 0.117515, 622.1, 0.116692, 582.7, 0.116667, 16.8,
			0.0100783, 251.2, 0.00925037, 196.8), 0.0008922, []int{1, 4, 2}},
		// 0.85 mW every 61 ms (3:42): few blocks hold a step, so the
		// middle of Partial's triplet holds a fifth of a half's time.
		"a slow telegraph's triplet": {ms(0.0334071, 21.2, 0.0326, 38.5, 0.0223, 70.1, 0.021522, 79.2,
			0.00707054, 617.2, 0.00655493, 121.8, 0.00628196, 626.6, 0.00245743, 204.8, 0.00168929, 159.3), 0.0008489, []int{2, 2, 3, 2}},
	} {
		got, _, _, _ := mergeDoublets(c.in, make([]string, len(c.in)), c.step, nil, 1)
		if len(got) != len(c.groups) {
			t.Errorf("%s: %d modes merged into %d, want %d", name, len(c.in), len(got), len(c.groups))
			continue
		}
		k := 0
		for i, g := range c.groups {
			if want := mean(c.in[k : k+g]); math.Abs(got[i].x-want) > 1e-12 {
				t.Errorf("%s: level %d at %.6f W, want %.6f", name, i, got[i].x, want)
			}
			k += g
		}
	}
}

// With the telegraph's step measured from the capture (0.92 mW: ±0.1 mA
// at 5 V), a doublet is merged when its spacing is the step's even where
// its neighbours are closer than doubletIsolation allows and no second
// pair confirms the spacing: campaign seed 1, drive 138, whose idle split
// in two and the lower half was named Partial (residency idle 9.4 % for
// 18.5 %). The Partial pair 0.75 mW apart is not the step's.
func TestMergeDoubletsAtTelegraphStep(t *testing.T) {
	in := []mode{{x: 0.2012, n: 212}, {x: 0.20028, n: 199}, {x: 0.071921, n: 14.2}, {x: 0.07117, n: 54.8},
		{x: 0.0089079, n: 280}, {x: 0.0079842, n: 426}, {x: 0.0043207, n: 133}, {x: 0.0034059, n: 107}}
	if out, _, _, _ := mergeDoublets(in, make([]string, len(in)), 0, nil, 1); len(out) != len(in) {
		t.Fatalf("no step measured: %d modes merged into %d (one pair isolated)", len(in), len(out))
	}
	out, _, _, _ := mergeDoublets(in, make([]string, len(in)), 0.00092, nil, 1)
	want := []float64{(0.2012*212 + 0.20028*199) / 411, 0.071921, 0.07117, (0.0089079*280 + 0.0079842*426) / 706, (0.0043207*133 + 0.0034059*107) / 240}
	if len(out) != len(want) {
		t.Fatalf("merged into %+v, want levels at %v", out, want)
	}
	for i, m := range out {
		if math.Abs(m.x-want[i]) > 1e-12 {
			t.Errorf("level %d at %.6f W, want %.6f", i, m.x, want[i])
		}
	}
}

// telegraphStep finds the one step size a telegraph makes at every level
// (drawn levels, sizes and counts), and finds none in a drive's own steps:
// DevSlp cycles stepping between two levels hundreds of times (one size,
// but from levels only that size apart) and changes of many sizes.
func TestTelegraphStep(t *testing.T) {
	r := rand.New(rand.NewPCG(7, 8))
	for trial := range 50 {
		step := 0.0005 + 0.01*r.Float64()
		levels := []float64{0.02 + r.Float64(), 0.005 + 0.01*r.Float64(), 0.1 + r.Float64()}
		var b blockScale
		for range 200 + r.IntN(400) {
			l := levels[r.IntN(len(levels))]
			up := l + step*(1+0.02*r.NormFloat64())
			b.steps = append(b.steps, step2(l, up, r.IntN(2) == 0))
		}
		for range r.IntN(60) { // the drive's own changes, sizes anywhere
			b.steps = append(b.steps, step2(levels[0], levels[1], r.IntN(2) == 0))
		}
		if got := b.telegraphStep(); math.Abs(got/step-1) > 0.03 {
			t.Fatalf("trial %d: telegraph of %.4g W at levels %v: step %.4g", trial, step, levels, got)
		}
		var c blockScale
		slumber, devslp := 0.005+0.01*r.Float64(), 0.001*r.Float64()
		for range 100 + r.IntN(300) {
			c.steps = append(c.steps, step2(slumber, devslp+0.0001*r.NormFloat64(), r.IntN(2) == 0))
		}
		for range 10 {
			c.steps = append(c.steps, step2(r.Float64(), r.Float64(), false))
		}
		if got := c.telegraphStep(); got != 0 {
			t.Fatalf("trial %d: DevSlp cycles %.4g ↔ %.4g W read as a telegraph of %.4g W", trial, slumber, devslp, got)
		}
	}
}

// step2 is a step between a and b, up or down.
func step2(a, b float64, down bool) step {
	if down {
		return step{from: b, to: a}
	}
	return step{from: a, to: b}
}

// oneLevelSigma reads one level's block spread from quiet blocks under
// max_performance with bursts above the level (up to 40 % of them) and a
// telegraph that the lag-1 and lag-4 differences pass over: within 25 %
// of the level's true σ (400 blocks: the shorth and the median
// difference each scatter by about 8 %, and the smaller is taken), where
// the shorth of all blocks reads up to 1.9 σ.
func TestOneLevelSigma(t *testing.T) {
	r := rand.New(rand.NewPCG(9, 10))
	for trial := range 40 {
		level := 0.02 + r.Float64()
		// At least 6 of modeHist's bins (0.017 % of the level) wide: a
		// spread within a few bins reads low (and sigma's σ stands).
		sigma := max(1e-4+2e-3*r.Float64(), 6*level/4096)
		burst := 0.4 * r.Float64()
		var b blockScale
		b.per = 100
		for i := range 400 {
			m := level + sigma*r.NormFloat64()
			if r.Float64() < burst {
				m = level + 0.05 + 0.2*r.Float64()
			}
			b.hist[ctxMaxPerf].add(m)
			if i%3 == 0 {
				b.dMP.add(math.Abs(sigma * math.Sqrt2 * r.NormFloat64()))
			}
		}
		got, ok := b.oneLevelSigma(0.01)
		if !ok || math.Abs(got/sigma-1) > 0.25 {
			t.Fatalf("trial %d: σ %.4g, %.0f %% bursts: oneLevelSigma %.4g (%v)", trial, sigma, 100*burst, got, ok)
		}
	}
}

// A cluster whose outer parts hold few of its blocks (Partial 413, Slumber
// 21 666, DevSlp 206 blocks, after 192 DevSlp cycles) spreads, 5th to
// 95th percentile, as its middle alone: that is not one level split by the
// meter's steps, and the three stay apart (campaign seed 27 drive 100:
// merged, its Slumber named DevSlp, 46 points). With outer parts of a
// fair share the same spread still merges them.
func TestAsOneNeedsItsOuterParts(t *testing.T) {
	one := &oneLevel{width: 0.00045, spread: func(lo, hi float64) (float64, bool) { return 0.0005, true }}
	ms := []mode{{x: 0.1876, n: 2264}, {x: 0.1106, n: 100}, {x: 0.03357, n: 413}, {x: 0.009076, n: 21666}, {x: 0.000332, n: 206}}
	if out, _, _, _ := mergeDoublets(ms, make([]string, len(ms)), 0, one, 1); len(out) != len(ms) {
		t.Errorf("%d modes merged into %d: %+v", len(ms), len(out), out)
	}
	fair := []mode{{x: 0.1876, n: 2264}, {x: 0.1106, n: 100}, {x: 0.03357, n: 4130}, {x: 0.009076, n: 21666}, {x: 0.000332, n: 2060}}
	if out, _, _, _ := mergeDoublets(fair, make([]string, len(fair)), 0, one, 1); len(out) != 3 {
		t.Errorf("outer parts of 13 %% and 7 %%: %d modes, want the triplet merged (3)", len(out))
	}
}

// TestDoubletsShareTheirContexts: a meter's level steps leave both halves
// of every level in each of the host's contexts alike; two of the drive's
// own level pairs that happen to be as far apart are not doublets when
// their parts fall in different contexts. Campaign seed 33 drive 11: Idle
// and Partial (337 and 292 mW, max_performance against LPM) and Slumber
// and the HBA's DevSlp (48 and 0.6 mW, the second under the pin) 45 and
// 47 mW apart were merged, and DevSlp read as Slumber (15.7 points).
func TestDoubletsShareTheirContexts(t *testing.T) {
	m := func(x, n float64, ctx map[learnCtx]float64) mode {
		md := mode{x: x, n: n}
		for k, v := range ctx {
			md.byCtx[k] = v
		}
		return md
	}
	lpm, mp, pin := ctxLPM, ctxMaxPerf, ctxPin
	own := []mode{m(0.9239, 10, map[learnCtx]float64{lpm: 10}), m(0.3373, 105, map[learnCtx]float64{mp: 99, lpm: 6}), m(0.2919, 32, map[learnCtx]float64{lpm: 32}),
		m(0.0480, 618, map[learnCtx]float64{lpm: 618}), m(0.0006, 307, map[learnCtx]float64{pin: 300, lpm: 7})}
	if out, _, _, _ := mergeDoublets(own, make([]string, len(own)), 0, nil, 1); len(out) != len(own) {
		t.Errorf("the drive's own levels: %d modes merged into %d", len(own), len(out))
	}
	// The same modes with each pair's blocks spread over the contexts alike
	// (a telegraph's halves): merged.
	tel := []mode{m(0.9239, 10, map[learnCtx]float64{lpm: 10}), m(0.3373, 105, map[learnCtx]float64{mp: 60, lpm: 45}), m(0.2919, 32, map[learnCtx]float64{mp: 17, lpm: 15}),
		m(0.0480, 618, map[learnCtx]float64{lpm: 418, pin: 200}), m(0.0006, 307, map[learnCtx]float64{pin: 100, lpm: 207})}
	if out, _, _, _ := mergeDoublets(tel, make([]string, len(tel)), 0, nil, 1); len(out) != 3 {
		t.Errorf("a telegraph's doublets: %d modes merged into %d, want 3", len(tel), len(out))
	}
}
