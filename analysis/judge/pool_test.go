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
