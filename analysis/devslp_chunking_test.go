package analysis

import (
	"encoding/json"
	"math"
	"math/rand/v2"
	"testing"

	"github.com/idlewatt/idlewatt/analysis/judge"
)

// A drive's DevSlp cycles are judged on the same samples however the
// capture's samples come in runs: pin-only cycles overlap (each from 2 s
// before its assertion, the one before to 2 s after its release), and the
// overlap's samples belong to both. Before, the next cycle had only those
// of the run that ended the cycle before, and an imported PPK2 export's
// floor read 0.52–0.62 mW as its chunks fell. The whole-run feed and a
// feed in random runs must judge alike (and both keep the overlap).
func TestDevSlpCyclesIgnoreChunking(t *testing.T) {
	const dt = 1e5 // ns: 10 kS/s
	r := rand.New(rand.NewPCG(21, 22))
	n := 80000 // 8 s
	w := make([]float64, n)
	var pins []span
	for _, a := range []float64{2.5, 4.5, 6.5} { // assertions 2 s apart, held 1 s
		pins = append(pins, span{s: int64(a * 1e9), e: int64((a + 1) * 1e9)})
	}
	for i := range w {
		t := float64(i) * dt
		w[i] = 0.005 + 0.0003*r.NormFloat64()
		for _, p := range pins {
			if t >= float64(p.s)+2e6 && t < float64(p.e) {
				w[i] = 0.001 + 0.0003*r.NormFloat64()
			}
		}
	}
	cycles, _ := pinCycles(pins, nil, nil, nil)
	if len(cycles) != 3 || !(cycles[1].Start < cycles[0].End) {
		t.Fatalf("want 3 overlapping cycles, got %+v", cycles)
	}
	judgeAll := func(split func() int) []judge.Cycle {
		p := &devslpProc{cycles: cycles, chartCycle: -1, jo: judge.JudgeOptions{Criteria: judge.DefaultCriteria()}}
		for i := 0; i < n; {
			k := min(n-i, split())
			p.add(w[i:i+k], dt, float64(i)*dt)
			i += k
		}
		p.finish()
		return p.judged
	}
	whole := judgeAll(func() int { return n })
	for trial := range 5 {
		got := judgeAll(func() int { return 1 + r.IntN(30000) })
		a, _ := json.Marshal(got)
		b, _ := json.Marshal(whole)
		if string(a) != string(b) {
			t.Fatalf("trial %d: runs of random length judged otherwise than one run:\n%s\n%s", trial, a, b)
		}
	}
	for _, c := range whole {
		if !c.PreCycleW.Ok() || math.Abs(float64(c.PreCycleW)-0.005) > 0.0003 {
			t.Errorf("cycle %d: pre-cycle %v, want 5 mW", c.Cycle, c.PreCycleW)
		}
	}
}
