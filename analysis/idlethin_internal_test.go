package analysis

import (
	"math"
	"math/rand/v2"
	"testing"
)

// drawThinIdle draws the quiet time of an SSD under medium_power (the
// campaign's drives 3, 38, 55 and 128 of seed 1): mostly 10 ms blocks at the
// next lower level (Partial, 30–90 % of idle), with a few short visits to
// the idle level (1–6 blocks each, sometimes drifting down as the drive
// leaves it, sometimes beside a GC burst of 1.5–3 × idle). Block means carry
// noise of 0–3 mA σ per sample at 5 V over 20 samples (2 kS/s). With
// ample set, a long rest at idle (60–200 blocks) is added: a level that must
// keep its value. Returns the blocks, the truth and the idle band.
func drawThinIdle(r *rand.Rand, ample bool) (bs []blk, idle, lo, hi float64) {
	const L = 20
	u := func(a, b float64) float64 { return a + (b-a)*r.Float64() }
	idle = math.Exp(u(math.Log(0.02), math.Log(0.2)))
	lower := idle * u(0.3, 0.9)
	lo = math.Sqrt(idle * lower)
	hi = 2*idle - lo
	sd := 5 * u(0, 0.003) / math.Sqrt(L) // one block mean's noise
	add := func(m float64) { bs = append(bs, blk{L, L * (m + sd*r.NormFloat64())}) }
	for range 200 + r.IntN(300) {
		add(lower)
	}
	for range 1 + r.IntN(4) {
		k := 1 + r.IntN(6)
		drift := 0.0
		if r.IntN(2) == 0 {
			drift = u(0, 0.15) * (idle - lower) // per block, towards Partial
		}
		if r.IntN(2) == 0 {
			for range 1 + r.IntN(3) {
				add(idle * u(1.5, 3))
			}
		}
		for j := range k {
			add(idle - float64(j)*drift)
		}
		for range 20 + r.IntN(50) {
			add(lower)
		}
	}
	if ample {
		for range 60 + r.IntN(140) {
			add(idle)
		}
	}
	return bs, idle, lo, hi
}

// TestActiveIdleThinEvidenceIsNull: level-based active idle is a value with
// a 95 % interval or null — never a value from blocks too few or too
// correlated for an interval (before, such values read 12–21 % off with
// none). A long rest at idle still gives its value, within 1 % where its interval is within half that.
func TestActiveIdleThinEvidenceIsNull(t *testing.T) {
	r := rand.New(rand.NewPCG(12, 2))
	noRes := func(float64) float64 { return 0 }
	var thin, nulls, vals, amp, held int
	for k := range 300 {
		ample := k%3 == 0
		bs, idle, lo, hi := drawThinIdle(r, ample)
		e := estimateLevelAbove(bs, 20, 60, noRes, lo, hi)
		if !math.IsNaN(e.Level) && e.U95 == nil {
			thin++
			t.Errorf("draw %d: active idle %.4g W (truth %.4g W, %+.1f %%) without an interval: %s", k, e.Level, idle, 100*(e.Level/idle-1), e.Note)
		}
		if math.IsNaN(e.Level) {
			nulls++
		} else {
			vals++
		}
		if ample {
			if math.IsNaN(e.Level) {
				t.Errorf("draw %d: a long rest at idle (%.4g W) read null: %s", k, idle, e.Note)
			} else if e.U95 != nil {
				amp++
				if math.Abs(e.Level-idle) <= *e.U95 {
					held++
				}
				if *e.U95 <= 0.005*idle && math.Abs(e.Level/idle-1) > 0.01 {
					t.Errorf("draw %d: active idle %.4g ± %.2g W, truth %.4g W: %+.2f %%", k, e.Level, *e.U95, idle, 100*(e.Level/idle-1))
				}
			}
		}
	}
	t.Logf("300 draws: %d values, %d null, %d values without an interval; long rests: interval held %d of %d", vals, nulls, thin, held, amp)
	// Not asserted: visits drifting towards Partial that fall within 5σ of
	// the level stay in it under the largest noise (87 of 100 held when
	// this test was written); TestActiveIdleLevelBased asserts coverage.
	if nulls < 20 {
		t.Errorf("only %d draws had too thin evidence: the test does not exercise the case", nulls)
	}
}
