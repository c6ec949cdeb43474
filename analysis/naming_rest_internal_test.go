package analysis

import (
	"math"
	"testing"

	"github.com/idlewatt/idlewatt/units"
)

// The HBA's own DevSlp under min_power sits at the level the DEVSLP pin's
// cycles named: on a quiet, quantised meter its mode stands a few µW
// from the pin's, not merged with it. Left among the levels between idle
// and DevSlp it was named Slumber, and the true Slumber, 97 % of the run,
// Partial (held-out campaign seed 37 drive 88: the modes below, the
// block σ 4.8 µW). It is DevSlp; the one level left is Slumber.
func TestHBADevSlpModeIsNotSlumber(t *testing.T) {
	var min, lpm, mp [numCtx]float64
	min[ctxMinPower], lpm[ctxLPM], mp[ctxMaxPerf] = 315, 63505, 325
	nm := &naming{
		f:     scaleFit{sb: 4.8e-6, h: 4.8e-6},
		all:   []mode{{x: 0.034480, n: 335, byCtx: mp}, {x: 0.0070586, n: 63594, byCtx: lpm}, {x: 0.00015923, n: 315, byCtx: min}},
		named: []string{"idle", "", ""},
		from:  []string{"", "", ""},
		ev:    map[string]string{},
		se:    func(n float64) float64 { return 4.8e-6 / math.Sqrt(n) },
	}
	nm.lv.Idle, nm.lv.DevSlp = 0.034480, units.Watts(0.00015617)
	nm.nameRest()
	if nm.lv.Slumber != units.Watts(nm.all[1].x) || nm.lv.Partial != 0 {
		t.Errorf("Slumber %v, Partial %v; want Slumber at the 7.06 mW mode and no Partial (names %q)", nm.lv.Slumber, nm.lv.Partial, nm.named)
	}
	if nm.named[2] != "devslp" {
		t.Errorf("the mode at the pin's DevSlp level named %q, want devslp", nm.named[2])
	}
}
