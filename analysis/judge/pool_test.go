package judge

import (
	"math"
	"testing"
)

// A cycle whose pre-cycle level is not resolved (a GC burst over its
// window: 1.72 ± 1.24 W) beside three resolved ones (78.1 ± 0.3 mW) is
// left out of the verdict's value; cycles with errors alike are all in
// (their mean), and with only two cycles nothing is left out; with two
// of four unresolved, they are.
func TestPoolLeavesOutAnUnresolvedCycle(t *testing.T) {
	cyc := func(ws []float64, ses []float64) []Cycle {
		var cs []Cycle
		for i, w := range ws {
			cs = append(cs, Cycle{PreCycleW: NumW(w), pre: levelU{se: ses[i], dof: 30, sys: 1e-5}})
		}
		return cs
	}
	get := func(c Cycle) (NumW, levelU) { return c.PreCycleW, c.pre }
	for _, c := range []struct {
		ws, ses []float64
		want    float64
	}{
		{[]float64{0.07813, 0.07809, 0.07811, 1.718}, []float64{2.2e-4, 3.6e-4, 2.8e-4, 0.62}, 0.07811},
		{[]float64{0.07813, 0.07809, 0.07811, 0.0790}, []float64{2.2e-4, 3.6e-4, 2.8e-4, 4e-4}, (0.07813 + 0.07809 + 0.07811 + 0.0790) / 4},
		{[]float64{0.07813, 1.718}, []float64{2.2e-4, 0.62}, (0.07813 + 1.718) / 2},
		// Two of four unresolved (campaign seed 24 drive 54).
		{[]float64{0.003138, 0.003535, 0.003444, 0.06021}, []float64{0.0193, 5.2e-4, 4.7e-4, 0.0327}, (0.003535 + 0.003444) / 2},
	} {
		m, u := poolLevels(cyc(c.ws, c.ses), get)
		if math.Abs(float64(m)-c.want) > 1e-9 || !(u > 0) {
			t.Errorf("%v ± %v: pooled %v ± %v, want %v", c.ws, c.ses, m, u, c.want)
		}
		if len(c.ws) == 4 && c.ws[3] > 1 && float64(u) > 0.002 {
			t.Errorf("%v: interval ±%v W kept the unresolved cycle's error", c.ws, u)
		}
	}
}

// A rise found after the first read was answered is the read's step, the
// wake's too small beside the noise to be seen (held-out campaign seed 39
// drive 162: 2.65 ± 1.63 ms against an exit of 2.35 ± 0.07 ms, the true
// rise 0.05 ms): the verdict's rise spans the release to the exit. A
// rise before the exit is left as the cycles measured it.
func TestRiseAfterTheExitSpansReleaseToExit(t *testing.T) {
	cyc := func(rise, riseU float64) []Cycle {
		var cs []Cycle
		for range 4 {
			cs = append(cs, Cycle{Outcome: Pass, RiseMs: NumMs(rise), RiseU95Ms: NumMs(riseU), ExitMs: 2.35, ExitU95Ms: 0.07, EntryMs: NoneMs, EntryU95Ms: NoneMs, periodMs: 0.1})
		}
		return cs
	}
	v := Summarise(cyc(2.65, 3.2), Criteria{}, "yes", "")
	lo, hi := float64(v.RiseMs-v.RiseU95Ms), float64(v.RiseMs+v.RiseU95Ms)
	if !(lo <= 0.05 && hi >= 2.35 && hi <= 2.5) {
		t.Errorf("rise after the exit: %v ± %v ms, want an interval from 0 to the exit (2.35 ± 0.07 ms)", v.RiseMs, v.RiseU95Ms)
	}
	v = Summarise(cyc(0.4, 0.2), Criteria{}, "yes", "")
	if math.Abs(float64(v.RiseMs)-0.4) > 1e-9 {
		t.Errorf("rise before the exit: %v ms, want the cycles' 0.4", v.RiseMs)
	}
}
