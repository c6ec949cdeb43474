package detect

import (
	"fmt"
	"math"
	"math/rand/v2"
	"testing"
	"time"

	"github.com/idlewatt/idlewatt/hostclock"
	"github.com/idlewatt/idlewatt/units"
)

// TestPushRunIsPush: an adaptive classifier fed runs of samples (PushRun:
// the noise variogram takes each run at once once the window is decided)
// emits the same spans and ends in the same state as one fed Push sample
// by sample — over levels stepping under noise, I/O, NaN readings, gaps,
// DEVSLP splits, and runs that straddle the decision.
func TestPushRunIsPush(t *testing.T) {
	for seed := range uint64(12) {
		r := rand.New(rand.NewPCG(seed, 77))
		var spansA, spansB []Span
		mk := func(out *[]Span) *Classifier {
			c, err := New(Options{Levels: profile, Period: period, Adaptive: true}, func(s Span) { *out = append(*out, s) })
			if err != nil {
				t.Fatal(err)
			}
			return c
		}
		a, b := mk(&spansA), mk(&spansB)
		var splits []hostclock.Time
		for range r.IntN(6) {
			splits = append(splits, hostclock.Time(r.Int64N(int64(4*time.Second))))
		}
		a.SplitAt(splits)
		b.SplitAt(splits)
		levels := []float64{float64(profile.Idle), float64(profile.Partial), float64(profile.Slumber), float64(profile.DevSlp), 2.5}
		sigma := []float64{1e-4, 2e-3, 1e-2}[seed%3]
		var tt hostclock.Time
		w := levels[0]
		for tt < hostclock.Time(4*time.Second) {
			n := 1 + r.IntN(5000)
			busy := r.IntN(6) == 0
			ts, ps := make([]hostclock.Time, n), make([]float64, n)
			for j := range n {
				if r.IntN(400) == 0 {
					w = levels[r.IntN(len(levels))]
				}
				ts[j], ps[j] = tt, w+sigma*r.NormFloat64()
				if r.IntN(3000) == 0 {
					ps[j] = math.NaN()
				}
				tt = tt.Add(period)
			}
			for j := range n {
				a.Push(ts[j], units.Watts(ps[j]), busy)
			}
			b.PushRun(ts, ps, busy)
			if r.IntN(20) == 0 {
				a.Gap()
				b.Gap()
				tt = tt.Add(time.Duration(r.IntN(100)) * period)
			}
		}
		a.Close()
		b.Close()
		// Printed, not reflect.DeepEqual: a NaN reading makes a NaN mean,
		// which DeepEqual never finds equal to itself.
		if fmt.Sprint(spansA) != fmt.Sprint(spansB) {
			for i := range min(len(spansA), len(spansB)) {
				if fmt.Sprint(spansA[i]) != fmt.Sprint(spansB[i]) {
					t.Logf("span %d:\n%+v\n%+v", i, spansA[i], spansB[i])
					break
				}
			}
			t.Fatalf("seed %d: %d spans by Push, %d by PushRun", seed, len(spansA), len(spansB))
		}
		a.onSpan, b.onSpan = nil, nil
		if fmt.Sprintf("%+v", *a) != fmt.Sprintf("%+v", *b) || a.NoiseSigma() != b.NoiseSigma() {
			t.Fatalf("seed %d: the classifiers differ after the same samples (noise σ %v / %v)", seed, a.NoiseSigma(), b.NoiseSigma())
		}
		if len(spansA) < 10 {
			t.Fatalf("seed %d: %d spans: the trace does not exercise the classifier", seed, len(spansA))
		}
	}
}
