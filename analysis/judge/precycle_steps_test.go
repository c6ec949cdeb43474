package judge

import (
	"math"
	"math/rand/v2"
	"testing"
	"time"

	"github.com/idlewatt/idlewatt/hostclock"
	"github.com/idlewatt/idlewatt/units"
)

// Under a telegraph slower than the resting level's 300 ms (flips every
// 150 ms on average, often none in the hold's second half), a drive that
// ignores the pin: without the learning's step (LevelStepW) the band of
// windows keeps the lower half and the interval, batch means of one
// half, is far too narrow; with it the level is the average of the halves
// the windows held and its interval holds the level in ≥ 90 % of cycles
// (campaign seed 13 drives 40 and 112). The first half of the test shows
// the failure, so the test can fail.
func TestPreCycleSlowTelegraphWithLevelStep(t *testing.T) {
	const period = hostclock.Time(100 * time.Microsecond)
	const rest, step = 0.005, 0.0008
	cr := DefaultCriteria()
	cycle := func(seed uint64, stepW float64) Cycle {
		rng := rand.New(rand.NewPCG(seed, 17))
		tm := Timing{Cycle: 1, Assert: hostclock.Time(1000 * time.Millisecond), Deassert: hostclock.Time(1600 * time.Millisecond), End: hostclock.Time(2000 * time.Millisecond)}
		tm.ProbeIssue = tm.Deassert + period
		tm.ProbeComplete = tm.Deassert + hostclock.Time(time.Millisecond)
		tel := step / 2
		if rng.IntN(2) == 0 {
			tel = -tel
		}
		var s []Sample
		for ts := hostclock.Time(0); ts < tm.End; ts += period {
			if rng.Float64() < float64(period)/float64(150*time.Millisecond) && rng.IntN(2) == 0 {
				tel = -tel
			}
			s = append(s, Sample{T: ts, W: rest + tel + 0.00005*rng.NormFloat64()})
		}
		return Judge(tm, s, JudgeOptions{Criteria: cr, ClockU95Ms: 0.05, LevelStepW: units.Watts(stepW)})
	}
	const n = 60
	held0, held := 0, 0
	for seed := uint64(1); seed <= n; seed++ {
		if c := cycle(seed, 0); c.PreCycleW.Ok() && math.Abs(float64(c.PreCycleW)-rest) <= float64(c.PreCycleU95W) {
			held0++
		}
		c := cycle(seed, step)
		if !c.PreCycleW.Ok() {
			t.Fatalf("seed %d: no pre-cycle level: %v", seed, c.Reasons)
		}
		if math.Abs(float64(c.PreCycleW)-rest) <= float64(c.PreCycleU95W) {
			held++
		}
	}
	if held0 > n*3/4 {
		t.Fatalf("without the step the interval held in %d of %d: the test cannot fail", held0, n)
	}
	if held < n*9/10 {
		t.Errorf("with the step the pre-cycle interval held the level in %d of %d cycles (without: %d)", held, n, held0)
	}
}
