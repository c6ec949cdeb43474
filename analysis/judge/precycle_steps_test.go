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

// Under a fast telegraph (±1.2 mW, redrawn every 8 ms on average) on a
// 3.6 mW Slumber, 300 ms before the pin hold too few steps for the
// pre-cycle level to meet ±0.2 mW; read over the whole settle period when
// the drive holds that level over most of it (its first 60 ms at Partial,
// 20 mW), four cycles pooled meet it on most drives, and the interval
// still holds (campaign steps family: 0.2–0.3 mW off on 3–7 mW, seeds
// 22–27). Settle periods of 300 ms (Timing.Start 300 ms before the pin)
// are the same cycles read the old way: the test fails if they do as well.
func TestPreCycleOverTheSettlePeriod(t *testing.T) {
	const period = hostclock.Time(100 * time.Microsecond)
	const rest, partial, tel = 0.0036, 0.020, 0.0012
	cr := DefaultCriteria()
	drive := func(seed uint64, settle time.Duration) Verdict {
		rng := rand.New(rand.NewPCG(seed, 29))
		var cycles []Cycle
		for c := 1; c <= 4; c++ {
			tm := Timing{Cycle: c, Assert: hostclock.Time(700 * time.Millisecond), Deassert: hostclock.Time(1300 * time.Millisecond), End: hostclock.Time(1700 * time.Millisecond)}
			tm.Start = tm.Assert.Add(-settle)
			tm.ProbeIssue = tm.Deassert + period
			tm.ProbeComplete = tm.Deassert + hostclock.Time(time.Millisecond)
			off := tel
			var s []Sample
			for ts := hostclock.Time(0); ts < tm.End; ts += period {
				if rng.Float64() < float64(period)/float64(8*time.Millisecond) && rng.IntN(2) == 0 {
					off = -off
				}
				w := rest
				switch {
				case ts < hostclock.Time(60*time.Millisecond):
					w = partial
				case ts >= tm.Assert && ts < tm.Deassert:
					w = 0.0003
				}
				if ts >= tm.Start {
					s = append(s, Sample{T: ts, W: w + off + 0.0001*rng.NormFloat64()})
				}
			}
			cycles = append(cycles, Judge(tm, s, JudgeOptions{Criteria: cr, ClockU95Ms: 0.05, LevelStepW: 2 * tel}))
		}
		return Summarise(cycles, cr, "yes", "")
	}
	const n = 30
	var within300, within, held int
	for seed := uint64(1); seed <= n; seed++ {
		if v := drive(seed, 300*time.Millisecond); v.PreCycleW.Ok() && math.Abs(float64(v.PreCycleW)-rest) <= 0.0002 {
			within300++
		}
		v := drive(seed, 700*time.Millisecond)
		if !v.PreCycleW.Ok() {
			t.Fatalf("seed %d: no pre-cycle level", seed)
		}
		if e := math.Abs(float64(v.PreCycleW) - rest); e <= 0.0002 {
			within++
		} else {
			t.Logf("seed %d: pre-cycle %.4f ± %.4f mW, truth %.1f", seed, 1e3*float64(v.PreCycleW), 1e3*float64(v.PreCycleU95W), 1e3*rest)
		}
		if math.Abs(float64(v.PreCycleW)-rest) <= float64(v.PreCycleU95W) {
			held++
		}
	}
	t.Logf("%d drives: pre-cycle within ±0.2 mW on %d (from 300 ms: %d), interval held on %d", n, within, within300, held)
	if within300 >= within {
		t.Fatalf("from 300 ms %d of %d within ±0.2 mW, over the settle period %d: the test cannot fail", within300, n, within)
	}
	if within < n*9/10 || held < n*9/10 {
		t.Errorf("pre-cycle within ±0.2 mW on %d of %d drives, interval held on %d; want ≥ 90 %% each", within, n, held)
	}
}

// Under a telegraph of ±2.8 mW flipping every 1.5 ms on average on a
// 6.6 mW Slumber, each 20 ms window of the 300 ms before the pin moves by
// about ±1 mW; the cycle's noise model (robust to steps) misses that, and
// an entry-only cycle's hold (170 ms) is too short for the hold's window
// spread. The band of windows then kept the lowest quarter: the
// pre-cycle level read 1 mW low on 154 cycles of campaign seed 29 drive
// 142; on these draws 10 of 40 within ±0.8 mW, their mean −1.1 mW).
// Drawn cycles: the level within ±0.8 mW (two standard errors of the
// telegraph's average over 300 ms) in at least 90 % of them (39 of 40),
// and their mean within ±0.2 mW (0.00 mW).
func TestPreCycleFastTelegraphShortHold(t *testing.T) {
	const period = hostclock.Time(100 * time.Microsecond)
	const rest, floor, tel = 0.0066, 0.0021, 0.0028
	cr := DefaultCriteria()
	const n = 40
	good, sum := 0, 0.0
	for seed := uint64(1); seed <= n; seed++ {
		rng := rand.New(rand.NewPCG(seed, 142))
		tm := Timing{Cycle: 1, Assert: hostclock.Time(400 * time.Millisecond), Deassert: hostclock.Time(575 * time.Millisecond), End: hostclock.Time(700 * time.Millisecond)}
		tm.Start = tm.Assert - hostclock.Time(300*time.Millisecond)
		tm.ProbeIssue = tm.Deassert + period
		tm.ProbeComplete = tm.Deassert + hostclock.Time(time.Millisecond)
		x := tel
		var s []Sample
		for ts := hostclock.Time(0); ts < tm.End; ts += period {
			if rng.Float64() < float64(period)/float64(1500*time.Microsecond) {
				x = tel
				if rng.IntN(2) == 0 {
					x = -tel
				}
			}
			level := rest
			if ts >= tm.Assert && ts < tm.Deassert {
				level = floor
			}
			s = append(s, Sample{T: ts, W: level + x + 0.00024*rng.NormFloat64()})
		}
		c := Judge(tm, s, JudgeOptions{Criteria: cr, ClockU95Ms: 0.05})
		if !c.PreCycleW.Ok() {
			t.Fatalf("seed %d: no pre-cycle level: %v", seed, c.Reasons)
		}
		sum += float64(c.PreCycleW) - rest
		if math.Abs(float64(c.PreCycleW)-rest) <= 0.0008 {
			good++
		} else {
			t.Logf("seed %d: pre-cycle %.3f mW for %.3f", seed, 1e3*float64(c.PreCycleW), 1e3*rest)
		}
	}
	t.Logf("within ±0.8 mW in %d of %d cycles, mean error %.3f mW", good, n, 1e3*sum/n)
	if good < n*9/10 {
		t.Errorf("pre-cycle level within ±0.8 mW in %d of %d cycles", good, n)
	}
	if math.Abs(sum/n) > 0.0002 {
		t.Errorf("pre-cycle level's mean error %.3f mW over %d cycles, want within ±0.2", 1e3*sum/n, n)
	}
}
