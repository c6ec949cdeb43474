package analysis

import "testing"

// Two components a learned level step apart are one level's telegraph
// halves only if the host's contexts fall in them alike. The modes of
// held-out campaign seed 36 drive 90 (1/f noise): idle 21.06 mW, 63 % of
// its blocks under max_performance, and Partial 19.29 mW, 30 %, 1.76 mW
// apart — the level step learned from their own transitions — were merged
// and Partial went unlearned. They stay two; the same pair with alike
// contexts is merged.
func TestStepDoubletNeedsAlikeContexts(t *testing.T) {
	ctx := func(lpm, mp, min float64) (c [numCtx]float64) {
		c[ctxLPM], c[ctxMaxPerf], c[ctxMinPower] = lpm, mp, min
		return c
	}
	ms := []mode{
		{x: 0.05228, n: 279.5, byCtx: ctx(238.8, 39.6, 1.0)},
		{x: 0.021057, n: 442.7, byCtx: ctx(156.7, 279.9, 6.1)},
		{x: 0.019293, n: 231.0, byCtx: ctx(160.5, 68.9, 1.6)},
		{x: 0.002372, n: 1968.2, byCtx: ctx(1653.4, 0, 314.8)},
		{x: -0.000387, n: 120.0, byCtx: ctx(42.4, 0, 77.6)},
	}
	const step, corr = 0.0017635, 1.73
	out, _, _, _ := mergeDoublets(ms, make([]string, len(ms)), step, nil, corr)
	if len(out) != len(ms) {
		t.Errorf("idle and Partial with unlike contexts: %d modes out of %d, want none merged", len(out), len(ms))
	}
	alike := append([]mode(nil), ms...)
	alike[2].byCtx = ctx(156.7*231/442.7, 279.9*231/442.7, 6.1*231/442.7)
	if out, _, _, _ := mergeDoublets(alike, make([]string, len(alike)), step, nil, corr); len(out) != len(ms)-1 {
		t.Errorf("a step's halves with alike contexts: %d modes out of %d, want the pair merged", len(out), len(ms))
	}
}
