package nvme

import (
	"math"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/idlewatt/idlewatt/units"
)

func levelsIdentify() *Identify {
	return &Identify{APSTA: true, NPSS: 4, PowerStates: []PowerState{
		{PS: 0, MaxPower: 8.49}, {PS: 1, MaxPower: 4.48}, {PS: 2, MaxPower: 3.18},
		{PS: 3, MaxPower: 0.040, NonOperational: true, EntryLatencyUs: 2000, ExitLatencyUs: 1200},
		{PS: 4, MaxPower: 0.005, NonOperational: true, EntryLatencyUs: 500, ExitLatencyUs: 9500}}}
}

func TestTableLevelsAndClassify(t *testing.T) {
	l := TableLevels(levelsIdentify(), []units.Watts{0.35})
	var got []int
	for _, x := range l {
		got = append(got, x.PS)
	}
	// PS1 and PS2 have no idle power given: left out.
	if len(l) != 3 || got[0] != 0 || got[1] != 3 || got[2] != 4 || l[2].ExitLatencyUs != 9500 {
		t.Fatalf("%+v", l)
	}
	for _, c := range []struct {
		w  units.Watts
		ps int
	}{{1, 0}, {0.12, 0}, {0.118, 3}, {0.015, 3}, {0.014, 4}, {0.0001, 4}} {
		// thresholds √(0.35·0.04) = 118.3 mW, √(0.04·0.005) = 14.1 mW
		if i := ClassifyLevel(l, c.w); l[i].PS != c.ps {
			t.Errorf("%v W: PS%d, want PS%d", c.w, l[i].PS, c.ps)
		}
	}
	if c := LevelCeiling(l, 2); math.Abs(float64(c)-math.Sqrt(0.04*0.005)) > 1e-12 || !math.IsInf(float64(LevelCeiling(l, 0)), 1) {
		t.Errorf("ceiling %v", c)
	}
	if LevelOf(l, 4) != 2 || LevelOf(l, 1) != -1 || ClassifyLevel(nil, 1) != -1 {
		t.Error("LevelOf/ClassifyLevel")
	}
}

// A real drive draws less than its descriptors say: the learned levels
// take the capture's values, and a level no state is near is reported.
func TestLearnLevels(t *testing.T) {
	table := TableLevels(levelsIdentify(), []units.Watts{0.35})
	rng := rand.New(rand.NewPCG(1, 2))
	var idle []units.Watts
	for range 3000 {
		idle = append(idle, units.Watts(0.30+0.003*rng.NormFloat64())) // PS0 at 300 mW
	}
	for range 6000 {
		idle = append(idle, units.Watts(0.0025+0.0001*rng.NormFloat64())) // PS4 at 2.5 mW
	}
	for range 1000 {
		idle = append(idle, units.Watts(1.5+0.01*rng.NormFloat64())) // something else
	}
	l, unnamed, err := LearnLevels(table, idle)
	if err != nil {
		t.Fatal(err)
	}
	if l[0].PS != 0 || l[0].Source != "learned" || math.Abs(float64(l[0].W)-0.30) > 0.005 {
		t.Errorf("PS0 %+v", l[0])
	}
	if l[1].PS != 3 || l[1].Source != "table" || l[1].W != 0.040 {
		t.Errorf("PS3 kept its table level: %+v", l[1])
	}
	if l[2].PS != 4 || l[2].Source != "learned" || math.Abs(float64(l[2].W)-0.0025) > 0.0002 {
		t.Errorf("PS4 %+v", l[2])
	}
	if len(unnamed) != 1 || math.Abs(float64(unnamed[0])-1.5) > 0.05 {
		t.Errorf("unnamed %v", unnamed)
	}
	if _, _, err := LearnLevels(table, nil); err == nil {
		t.Error("no samples accepted")
	}
	// Learned levels that reverse the table's order cannot be named.
	close := []Level{{PS: 3, W: 0.012, NonOperational: true}, {PS: 4, W: 0.010, NonOperational: true}}
	var two []units.Watts
	for range 100 {
		two = append(two, 0.011, 0.025)
	}
	if _, _, err := LearnLevels(close, two); err == nil || !strings.Contains(err.Error(), "cannot tell them apart") {
		t.Errorf("reversed levels: %v", err)
	}
}
