package sim

import (
	"math"
	"testing"
	"time"

	"github.com/idlewatt/idlewatt/states/nvme"
	"github.com/idlewatt/idlewatt/states/nvme/nvmehost"
	"github.com/idlewatt/idlewatt/units"
)

const ms = time.Millisecond

func profile(t *testing.T, name string) Profile {
	t.Helper()
	p, ok := ProfileByName(name)
	if !ok {
		t.Fatalf("no profile %s", name)
	}
	return p
}

// drive programs the table the kernel would under tolerance tol.
func drive(t *testing.T, name string, tol uint64, l1, l12 bool) (*Drive, nvme.KernelPlan) {
	p := profile(t, name)
	plan := nvme.PlanAPST(p.Identify, tol, 0, nvme.ModuleParams{})
	d := New(p)
	e := make([]nvme.APSTEntry, 32)
	copy(e, plan.Entries)
	d.SetAPST(0, plan.Enabled, e)
	d.SetASPM(0, l1, l12)
	return d, plan
}

func near(a, b units.Watts) bool { return math.Abs(float64(a-b)) < 1e-9 }

func TestProfilesRoundTrip(t *testing.T) {
	for _, p := range Profiles() {
		id, err := nvme.DecodeIdentify(p.Identify.Encode())
		if err != nil {
			t.Fatal(err)
		}
		for i, s := range id.PowerStates {
			if s.MaxPower != p.Identify.PowerStates[i].MaxPower || s.ExitLatencyUs != p.Identify.PowerStates[i].ExitLatencyUs {
				t.Errorf("%s PS%d: %+v vs %+v", p.Name, i, s, p.Identify.PowerStates[i])
			}
		}
		if len(p.Assumed) == 0 || p.Source == "" {
			t.Errorf("%s: no source or assumptions", p.Name)
		}
	}
}

func TestAPSTTimeline980Pro(t *testing.T) {
	// Default module parameters: PS4 entry+exit 10 ms ≤ 15 ms takes the
	// primary slot, so PS0 → PS4 after 100 ms.
	d, plan := drive(t, "980pro-1tb", 100000, true, true)
	if plan.Entries[0] != (nvme.APSTEntry{ITPS: 4, ITPTms: 100}) {
		t.Fatalf("plan %+v", plan.Entries)
	}
	for _, c := range []struct {
		at       time.Duration
		ps       int
		entering bool
		link     Link
		w        units.Watts
	}{
		{5 * time.Microsecond, 0, false, L0, 0.35 + 0.10},
		{50 * ms, 0, false, L12, 0.35},
		{100*ms + 200*time.Microsecond, 0, true, L12, 0.35},
		{101 * ms, 4, false, L12, 0.005},
		{10 * time.Second, 4, false, L12, 0.005},
	} {
		ps, entering, link := d.State(c.at)
		if ps != c.ps || entering != c.entering || link != c.link || !near(d.Power(c.at), c.w) {
			t.Errorf("%v: PS%d entering %v %s %v, want PS%d %v %s %v", c.at, ps, entering, link, d.Power(c.at), c.ps, c.entering, c.link, c.w)
		}
	}
	// An I/O in PS4 with the link in L1.2 waits exit 9.5 ms + 100 µs.
	if w := d.IO(time.Second); w != 9500*time.Microsecond+100*time.Microsecond {
		t.Errorf("wait %v", w)
	}
	if !near(d.Power(time.Second+time.Millisecond), 0.35+0.10) || !near(d.Power(time.Second+20*ms), 5.10) {
		t.Errorf("wake/active power %v %v", d.Power(time.Second+time.Millisecond), d.Power(time.Second+20*ms))
	}
	if err := d.IODone(time.Second + 20*ms); err != nil {
		t.Fatal(err)
	}
	if d.IODone(2*time.Second) == nil {
		t.Error("IODone with nothing outstanding accepted")
	}
	// During an entry: the rest of the entry, then the exit.
	if w := d.IO(time.Second + 20*ms + 100*ms + 100*time.Microsecond); w != 400*time.Microsecond+9500*time.Microsecond+100*time.Microsecond {
		t.Errorf("wait during entry %v", w)
	}
}

func TestMeanIdlePower(t *testing.T) {
	d, _ := drive(t, "980pro-1tb", 100000, true, true)
	// [0, 1 s): 10 µs in L0 at 0.45 W, PS0 in L1.2 at 0.35 W until the entry
	// ends at 100.5 ms, then PS4 at 5 mW.
	want := (0.45*10e-6 + 0.35*(100.5e-3-10e-6) + 0.005*(1-100.5e-3)) / 1
	if got := d.MeanIdlePower(0, time.Second); math.Abs(float64(got)-want) > 1e-12 {
		t.Errorf("mean %v, want %v", got, want)
	}
	tr := d.IdleTransitions(0, time.Second)
	if len(tr) != 4 || tr[1].Link != L12 || !tr[2].Entering || tr[3].PS != 4 {
		t.Errorf("%+v", tr)
	}
}

// Steady idle power (after 10 s idle) per latency tolerance and ASPM,
// for both profiles: the model's truth a measurement should recover.
func TestIdlePerCombination(t *testing.T) {
	type aspm struct {
		name    string
		l1, l12 bool
	}
	aspms := []aspm{{"powersupersave", true, true}, {"powersave", true, false}, {"performance", false, false}}
	want := map[string]map[uint64][3]units.Watts{
		"980pro-1tb": {0: {0.35, 0.38, 0.45}, 5500: {0.040, 0.070, 0.140}, 100000: {0.005, 0.035, 0.105}},
		"660p-1tb":   {0: {0.10, 0.13, 0.20}, 5500: {0.030, 0.060, 0.130}, 100000: {0.004, 0.034, 0.104}},
	}
	for name, byTol := range want {
		for tol, row := range byTol {
			for i, a := range aspms {
				d, _ := drive(t, name, tol, a.l1, a.l12)
				got := d.Power(10 * time.Second)
				if !near(got, row[i]) {
					t.Errorf("%s tolerance %d %s: %v, want %v", name, tol, a.name, got, row[i])
				}
				t.Logf("%-11s tolerance %6d µs  %-14s  %7.1f mW", name, tol, a.name, got.Milliwatts())
			}
		}
	}
}

func TestTruthLog(t *testing.T) {
	d, _ := drive(t, "660p-1tb", 100000, true, true)
	d.SetASPM(50*ms, true, true) // restarts the link timer, not APST's
	if ps, _, link := d.State(50*ms + 5*time.Microsecond); ps != 0 || link != L0 {
		t.Errorf("after ASPM change: PS%d %s", ps, link)
	}
	w := d.IO(time.Second) // PS4 (entered at 105 ms), L1.2
	if w != 9*ms+100*time.Microsecond {
		t.Errorf("wait %v", w)
	}
	d.IODone(time.Second + 30*ms)
	d.IO(time.Second + 60*ms) // still PS0, link L1.2: only the link exit
	tr := d.Truth()
	var pss []int
	for _, x := range tr {
		pss = append(pss, x.PS)
		if x.At > time.Second+60*ms {
			t.Errorf("truth beyond the last event: %+v", x)
		}
	}
	// PS0 (L0), PS0 L1.2, PS0 L0 after the ASPM change, PS0 L1.2, entering, PS4,
	// then the I/O (PS0), completion (PS0), idle L1.2, next I/O.
	want := []int{0, 0, 0, 0, 0, 4, 0, 0, 0, 0}
	if len(pss) != len(want) {
		t.Fatalf("%+v", tr)
	}
	for i := range want {
		if pss[i] != want[i] {
			t.Fatalf("%+v", tr)
		}
	}
	if !tr[4].Entering || tr[5].At != 105*ms {
		t.Errorf("%+v %+v", tr[4], tr[5])
	}
}

func TestBuildHost(t *testing.T) {
	dir := t.TempDir()
	if err := BuildHost(dir, Profiles()); err != nil {
		t.Fatal(err)
	}
	sys := nvmehost.Open(dir, nvmehost.Options{})
	if len(sys.Ctrls) != 2 || len(sys.Problems) != 0 {
		t.Fatalf("%+v", sys)
	}
	for _, c := range sys.Ctrls {
		if !c.Eligibility.Eligible() {
			t.Errorf("%s: %v %+v", c.Name, c.Eligibility.Failed, c.Eligibility.Checks)
		}
	}
}
