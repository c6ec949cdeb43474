package judge

import (
	"math"
	"math/rand/v2"
	"testing"
	"time"

	"github.com/idlewatt/idlewatt/hostclock"
)

// A drive whose floor sits just under the limit does not FAIL because one
// of its cycles' 95 % intervals fell above it (each does 2.5 % of the
// time: 6 cycles fail a drive about 1 time in 7); a drive above the limit
// by less than one cycle can tell still FAILs, by the floor over its
// cycles (Summarise). Without floorFailZ the first drive fails often, so
// the test can fail.
func TestFloorLimitJudgedOverCycles(t *testing.T) {
	const period = hostclock.Time(100 * time.Microsecond)
	cr := DefaultCriteria()
	drive := func(rng *rand.Rand, floor float64, cycles int) Verdict {
		var cs []Cycle
		for k := range cycles {
			tm := Timing{Cycle: k + 1, Assert: hostclock.Time(500 * time.Millisecond), Deassert: hostclock.Time(900 * time.Millisecond), End: hostclock.Time(1000 * time.Millisecond)}
			tm.ProbeIssue = tm.Deassert + period
			tm.ProbeComplete = tm.Deassert + hostclock.Time(2*time.Millisecond)
			// AR(1) noise correlated over 20 ms: each hold's floor is a
			// handful of independent values.
			var s []Sample
			x := 0.0
			rho := math.Exp(-float64(period) / float64(20*time.Millisecond))
			for ts := hostclock.Time(0); ts < tm.End; ts += period {
				x = rho*x + math.Sqrt(1-rho*rho)*0.002*rng.NormFloat64()
				w := 0.030
				if ts >= tm.Assert+hostclock.Time(time.Millisecond) && ts < tm.Deassert {
					w = floor
				} else if ts >= tm.Deassert && ts < tm.Deassert+hostclock.Time(2*time.Millisecond) {
					w = 0.3
				}
				s = append(s, Sample{T: ts, W: w + x})
			}
			cs = append(cs, Judge(tm, s, JudgeOptions{Criteria: cr, ClockU95Ms: 0.05}))
		}
		return Summarise(cs, cr, "yes", "")
	}
	rng := rand.New(rand.NewPCG(31, 32))
	falseFail, trueFail := 0, 0
	const n = 40
	for range n {
		if v := drive(rng, 0.0047, 6); v.Outcome == Fail {
			falseFail++
		}
		if v := drive(rng, 0.0065, 6); v.Outcome == Fail {
			trueFail++
		}
	}
	if falseFail > 0 {
		t.Errorf("a 4.7 mW floor (limit 5 mW) failed %d of %d drives", falseFail, n)
	}
	if trueFail < n*3/4 {
		t.Errorf("a 6.5 mW floor failed only %d of %d drives", trueFail, n)
	}
}
