package analysis

import (
	"math"
	"math/rand/v2"
	"reflect"
	"testing"

	"github.com/idlewatt/idlewatt/internal/stat"
)

// TestMedReservoirIsUpperMedian: the median kept as values come is the one
// selected from the kept values — through thinnings (a small cap), ties,
// and a NaN (selected from the values as before).
func TestMedReservoirIsUpperMedian(t *testing.T) {
	rng := rand.New(rand.NewPCG(9, 10))
	for _, limit := range []int{8, 64, 0} {
		var r medReservoir
		r.max = limit
		x := 0.0
		for i := range 40_000 {
			switch k := rng.IntN(100); {
			case k < 40: // a run: the value repeats
			case k < 60:
				x = float64(rng.IntN(5)) // ties
			default:
				x = math.Abs(rng.NormFloat64())
			}
			if i == 30_000 {
				x = math.NaN()
			}
			r.add(x)
			got, want := r.median(), stat.UpperMedian(r.v)
			if got != want && !(math.IsNaN(got) && math.IsNaN(want)) {
				t.Fatalf("cap %d, value %d: median %v, selected %v", limit, i, got, want)
			}
		}
		if limit == 0 && r.stride < 2 {
			t.Fatalf("stride %d: the reservoir never thinned", r.stride)
		}
	}
	var r medReservoir
	if m := r.median(); !math.IsNaN(m) {
		t.Errorf("empty: %v, want NaN", m)
	}
}

// FuzzMedReservoir: any values, cap 16.
func FuzzMedReservoir(f *testing.F) {
	f.Add([]byte{1, 2, 3, 3, 3, 0, 9, 200})
	f.Fuzz(func(t *testing.T, data []byte) {
		r := medReservoir{reservoir: reservoir{max: 16}}
		for _, b := range data {
			x := float64(b % 13)
			if b == 255 {
				x = math.NaN()
			}
			r.add(x)
			got, want := r.median(), stat.UpperMedian(r.v)
			if got != want && !(math.IsNaN(got) && math.IsNaN(want)) {
				t.Fatalf("median %v, selected %v of %v", got, want, r.v)
			}
		}
	})
}

// TestShortScaleWithoutSteps: a block scale that keeps no steps (the short
// blocks: keepSteps false, no σ estimate, d1 and d4 without their heaps)
// ends with everything else a scale that keeps them has — the blocks'
// histograms, rings, reservoirs — and the same σ, correlation and
// one-level σ from its medians, over stretches of noisy levels and steps.
func TestShortScaleWithoutSteps(t *testing.T) {
	rng := rand.New(rand.NewPCG(41, 42))
	a, b := blockScale{per: 10, keepSteps: true}, blockScale{per: 10}
	w := 0.4
	for range 300_000 {
		if rng.IntN(5000) == 0 {
			a.reset()
			b.reset()
		}
		if rng.IntN(700) == 0 {
			w = []float64{0.4, 0.3, 0.06, 0.0025}[rng.IntN(4)]
		}
		ctx := learnCtx(rng.IntN(2)) // lpm or max_performance
		x := w + 2e-3*rng.NormFloat64()
		ma, oka := a.add(x, ctx, false)
		mb, okb := b.add(x, ctx, false)
		if ma != mb || oka != okb {
			t.Fatal("the block means differ")
		}
	}
	if len(a.steps) == 0 || len(b.d1.hi) != 0 {
		t.Fatalf("%d steps kept; %d values in the short scale's heap", len(a.steps), len(b.d1.hi))
	}
	if a.sigma() != b.sigma() || a.corr() != b.corr() {
		t.Fatalf("σ %v / %v, corr %v / %v", a.sigma(), b.sigma(), a.corr(), b.corr())
	}
	sa, oka := a.oneLevelSigma(0.001)
	sb, okb := b.oneLevelSigma(0.001)
	if sa != sb || oka != okb {
		t.Fatalf("one-level σ %v %v / %v %v", sa, oka, sb, okb)
	}
	a.steps, a.stepSeen, a.stepKeep, a.sigmaEst, a.keepSteps = nil, 0, 0, 0, false
	a.fine, a.fineSeen, a.fineKp, a.sigma1 = nil, 0, 0, 0
	a.d1.lo, a.d1.hi, a.d4.lo, a.d4.hi = nil, nil, nil, nil
	b.d1.lo, b.d1.hi, b.d4.lo, b.d4.hi = nil, nil, nil, nil
	if !reflect.DeepEqual(a, b) {
		t.Fatal("the scales differ beyond their steps")
	}
}
