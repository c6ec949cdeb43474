package nvme

import (
	"strings"
	"testing"
)

func u64(v uint64) *uint64 { return &v }

func entries(p KernelPlan) []APSTEntry { return p.Entries }

func TestPlanAPSTPrimarySecondary(t *testing.T) {
	// A2000-like: PS3 entry+exit 4000 µs (primary), PS4 30000 µs
	// (secondary) under the default module parameters.
	p := PlanAPST(a2000, 100000, 0, ModuleParams{})
	want := []APSTEntry{{3, 100}, {3, 100}, {3, 100}, {4, 2000}, {0, 0}}
	for i, e := range want {
		if p.Entries[i] != e {
			t.Fatalf("entry %d %+v, want %+v (all %+v)", i, p.Entries[i], e, p.Entries)
		}
	}
	if !p.Enabled || !p.States[3].Used || !p.States[4].Used || p.Scheme != "primary/secondary" {
		t.Errorf("%+v", p)
	}
	// The quirk drops PS4; PS3 keeps the primary slot.
	p = PlanAPST(a2000, 100000, QuirkNoDeepestPS, ModuleParams{})
	if p.States[4].Used || !p.States[4].ExcludedByQuirk || p.Entries[0] != (APSTEntry{3, 100}) || p.Entries[3] != (APSTEntry{}) {
		t.Errorf("no deepest: %+v", p.Entries)
	}
	// force_apst clears NO_DEEPEST_PS.
	p = PlanAPST(a2000, 100000, QuirkNoDeepestPS, ModuleParams{ForceAPST: new(true)})
	if !p.States[4].Used {
		t.Errorf("force_apst: %+v", p.States[4])
	}
}

func TestPlanAPSTOnlyOnePrimary(t *testing.T) {
	// 970 EVO Plus-like: PS4 entry+exit 10000 µs ≤ 15000 takes the primary
	// slot; PS3 (1410 µs) would too, but the kernel uses a slot once.
	p := PlanAPST(evoPlus, 100000, 0, ModuleParams{})
	if !p.States[4].Used || p.States[3].Used || p.Entries[0] != (APSTEntry{4, 100}) || p.Entries[3] != (APSTEntry{4, 100}) {
		t.Errorf("%+v %+v", p.States, p.Entries)
	}
	if !strings.Contains(p.States[3].Reason, "already took the primary slot") {
		t.Errorf("%q", p.States[3].Reason)
	}
}

func TestPlanAPSTTolerance(t *testing.T) {
	// Only the exit latency is compared with ps_max_latency_us.
	p := PlanAPST(evoPlus, 7999, 0, ModuleParams{})
	if p.States[4].Used || !p.States[4].ExcludedByTolerance || !p.States[3].Used || p.Entries[0] != (APSTEntry{3, 100}) {
		t.Errorf("7999: %+v", p.States)
	}
	if p = PlanAPST(evoPlus, 8000, 0, ModuleParams{}); !p.States[4].Used {
		t.Errorf("8000: %+v", p.States[4])
	}
	p = PlanAPST(evoPlus, 0, 0, ModuleParams{})
	if p.Enabled || !strings.Contains(p.Off, "tolerance 0") || p.Entries[0] != (APSTEntry{}) {
		t.Errorf("0: %+v", p)
	}
	// A total above the secondary tolerance is never used, whatever the
	// device tolerance.
	p = PlanAPST(xg3, Unlimited, 0, ModuleParams{APSTSecondaryLatencyTolUs: u64(40000)})
	if p.States[4].Used || !p.States[4].ExcludedBySecondary || !p.States[3].Used {
		t.Errorf("secondary: %+v", p.States)
	}
}

func TestPlanAPSTLegacy(t *testing.T) {
	// Primary parameters 0: ITPT = (entry+exit+19)/20 ms, every usable
	// state a target (nvme_configure_apst's 2% rule).
	m := ModuleParams{APSTPrimaryTimeoutMs: u64(0)}
	p := PlanAPST(evoPlus, 100000, 0, m)
	want := []APSTEntry{{3, 71}, {3, 71}, {3, 71}, {4, 500}, {0, 0}}
	for i, e := range want {
		if p.Entries[i] != e {
			t.Fatalf("entry %d %+v, want %+v", i, p.Entries[i], e)
		}
	}
	big := withPS(Identify{APSTA: true}, ps(5, false, 0, 0, 0), ps(0.001, true, 2_000_000_000, 2_000_000_000, 1))
	if p := PlanAPST(big, Unlimited, 0, m); p.Entries[0].ITPTms != MaxITPTms {
		t.Errorf("cap: %+v", p.Entries[0])
	}
}

func TestPlanAPSTOff(t *testing.T) {
	no := *evoPlus
	no.APSTA = false
	if p := PlanAPST(&no, 100000, 0, ModuleParams{}); p.Enabled || !strings.Contains(p.Off, "APSTA clear") {
		t.Errorf("%+v", p)
	}
	if p := PlanAPST(xg3, 100000, QuirkNoAPST, ModuleParams{}); p.Enabled || !strings.Contains(p.Off, "NO_APST") {
		t.Errorf("%+v", p)
	}
	if p := PlanAPST(xg3, 100000, QuirkNoAPST, ModuleParams{ForceAPST: new(true)}); !p.Enabled {
		t.Errorf("force: %+v", p)
	}
}

func TestMatchQuirks(t *testing.T) {
	for _, c := range []struct {
		k    QuirkKeys
		want Quirks
	}{
		{QuirkKeys{VID: 0x1179, Model: "THNSF5256GPUK TOSHIBA"}, QuirkNoAPST},
		{QuirkKeys{VID: 0x1179, Model: "THNSF5256GPUK TOSHIBA X"}, 0},
		{QuirkKeys{Vendor: 0x2646, Device: 0x2263}, QuirkNoDeepestPS},
		{QuirkKeys{Vendor: 0x144d, Device: 0xa802, DMI: DMI{SysVendor: "Dell Inc.", ProductName: "XPS 15 9550"}}, QuirkNoDeepestPS},
		{QuirkKeys{Vendor: 0x144d, Device: 0xa802, DMI: DMI{SysVendor: "Dell Inc.", ProductName: "XPS 13 9350"}}, 0},
		{QuirkKeys{Vendor: 0x144d, Device: 0xa804, DMI: DMI{BoardVendor: "ASUSTeK COMPUTER INC.", BoardName: "PRIME Z370-A"}}, QuirkNoAPST},
		{QuirkKeys{VID: 0x144d, Model: "Samsung SSD 970 EVO Plus 1TB", Vendor: 0x144d, Device: 0xa808}, 0},
	} {
		if got := quirkBits(MatchQuirks(c.k)); got != c.want {
			t.Errorf("%+v: %s, want %s", c.k, got, c.want)
		}
	}
}

func TestReached(t *testing.T) {
	e := []APSTEntry{{3, 100}, {3, 100}, {3, 100}, {4, 2000}, {0, 0}}
	if r := Reached(e, 0); len(r) != 2 || r[1].ITPS != 4 {
		t.Errorf("%+v", r)
	}
	loop := []APSTEntry{{1, 10}, {0, 10}}
	if r := Reached(loop, 0); len(r) != 1 {
		t.Errorf("loop: %+v", r)
	}
	if r := Reached(e, 9); r != nil {
		t.Errorf("out of range: %+v", r)
	}
}

func TestPlanAPSTInconsistentIdentify(t *testing.T) {
	// NPSS says 4, the table has two states: no panic, the table rules.
	id := &Identify{APSTA: true, NPSS: 4, PowerStates: []PowerState{{PS: 0}, {PS: 1, NonOperational: true, ExitLatencyUs: 100}}}
	if p := PlanAPST(id, 100000, QuirkNoDeepestPS, ModuleParams{}); len(p.Entries) != 2 || p.States[1].Used {
		t.Errorf("%+v", p)
	}
	if p := PlanAPST(&Identify{APSTA: true}, 100000, 0, ModuleParams{}); p.Enabled {
		t.Errorf("empty: %+v", p)
	}
}
