package analysis

import (
	"math"
	"testing"
	"time"

	"github.com/idlewatt/idlewatt/hostclock"
	"github.com/idlewatt/idlewatt/states/detect"
	"github.com/idlewatt/idlewatt/units"
)

// DevSlp is possible under the pin (and devslpGrace after its release),
// under min_power*, and before any policy was recorded; not between
// assertions under another policy. Without policy events, anywhere.
func TestDevSlpPossible(t *testing.T) {
	s := func(x float64) hostclock.Time { return hostclock.Time(x * 1e9) }
	p := &pass1{policies: []policyEvent{
		{t: int64(s(10)), port: 0, policy: "medium_power"},
		{t: int64(s(20)), port: 2, policy: "min_power"}, // another port's
		{t: int64(s(30)), port: 0, policy: "min_power_with_partial"},
		{t: int64(s(40)), port: 1, policy: "max_performance"},
	}}
	pins := []detect.Pin{{At: s(12), Asserted: true}, {At: s(14)}, {At: s(50), Asserted: true}}
	can := devslpPossible(p, pins, 1)
	for _, c := range []struct {
		a, b float64
		want bool
	}{
		{0, 5, true},      // before the first policy
		{9, 11, true},     // reaches back before it
		{11, 11.9, false}, // medium_power, before the assertion
		{13, 13.5, true},  // under the pin
		{14.05, 14.09, true},
		{14 + 2*devslpGrace.Seconds(), 16, false},
		{21, 25, false}, // port 2's min_power is not port 1's
		{31, 35, true},  // min_power_with_partial
		{41, 45, false}, // max_performance
		{49, 60, true},  // the last assertion, never released
	} {
		if got := can(s(c.a), s(c.b)); got != c.want {
			t.Errorf("[%g, %g) s: %v, want %v", c.a, c.b, got, c.want)
		}
	}
	if devslpPossible(&pass1{}, pins, 1) != nil {
		t.Error("without policy events DevSlp must be possible anywhere (nil)")
	}
	// A drive the capture records as not supporting DevSlp: nowhere, even
	// under the pin; the HBA's "no" is not the drive's.
	p.devslp.support = map[int]string{1: "no: IDENTIFY word 78 bit 8 clear, the drive does not support DevSlp",
		2: "no: ata2 CAP2.SDS clear, the HBA does not support DevSlp"}
	if can := devslpPossible(p, pins, 1); can(s(0), s(5)) || can(s(13), s(13.5)) || can(s(31), s(35)) {
		t.Error("DevSlp possible for a drive that does not support it")
	}
	if can := devslpPossible(p, pins, 2); !can(s(13), s(13.5)) {
		t.Error("the HBA's lack of DevSlp ruled out the hub's pin")
	}
}

// withSteps: the noise of a span's mean is at least the learning's block
// noise (σ_b² up to a block, σ_b²·b/n beyond) and gains the level steps'
// (step/2)²; under white noise at the block noise it says what the model
// says.
func TestWithSteps(t *testing.T) {
	const sigma = 0.001 // W per sample
	period := 100 * time.Microsecond
	mv := detect.WhiteMeanVar(sigma)
	white := &LevelLearning{BlockMs: 10, BlockSigmaW: units.Watts(sigma / 10)} // 100 samples a block
	got := withSteps(mv, white, period)
	for _, n := range []int{1, 10, 100, 1000, 100000} {
		if math.Abs(got(n)-mv(n)) > 1e-9*mv(n) && n >= 100 {
			t.Errorf("white noise, n %d: %.3g, want the model's %.3g", n, got(n), mv(n))
		}
		if got(n) < mv(n) {
			t.Errorf("n %d: %.3g below the model's %.3g", n, got(n), mv(n))
		}
	}
	tele := &LevelLearning{BlockMs: 10, BlockSigmaW: 0.0015, LevelStepW: 0.002}
	got = withSteps(mv, tele, period)
	if v, want := got(20), 0.0015*0.0015; v < want {
		t.Errorf("a 2 ms span under 1.5 mW block noise: %.3g, want ≥ %.3g", v, want)
	}
	if v, want := got(100000), mv(100000)+0.001*0.001; math.Abs(v-math.Max(want, 0.0015*0.0015*100/100000)) > 1e-15 {
		t.Errorf("a 10 s span: %.4g, want %.4g", v, want)
	}
	if withSteps(nil, tele, period) != nil {
		t.Error("no model stays no model")
	}
}
