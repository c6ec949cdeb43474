package nvme

import (
	"strings"
	"testing"
)

func FuzzDecodeIdentify(f *testing.F) {
	f.Add(evoPlus.Encode())
	f.Add(rawIdentify())
	f.Add(make([]byte, 10))
	f.Fuzz(func(t *testing.T, b []byte) {
		id, err := DecodeIdentify(b)
		if err != nil {
			return
		}
		if len(id.PowerStates) != id.NPSS+1 || id.NPSS > 31 {
			t.Fatalf("npss %d, %d states", id.NPSS, len(id.PowerStates))
		}
		again, err := DecodeIdentify(id.Encode())
		if err != nil || !equalIdentify(id, again) {
			t.Fatalf("round trip: %v", err)
		}
		for _, s := range []string{id.Model, id.Serial, id.Firmware} {
			for _, c := range []byte(s) {
				if c < 0x20 || c > 0x7e {
					t.Fatalf("non-printable byte in %q", s)
				}
			}
		}
		_ = PlanAPST(id, 100000, QuirkNoDeepestPS, ModuleParams{})
	})
}

func FuzzParseIdentify(f *testing.F) {
	f.Add(evoPlus.IdentifyJSON())
	f.Add([]byte(nvmeCLIIdentify))
	f.Add(FormatHexDump(xg3.Encode()))
	f.Add([]byte(`{"vid":1,"mn":"x","npss":0,"apsta":1,"psds":[{}]}`))
	f.Fuzz(func(t *testing.T, b []byte) {
		id, _, err := ParseIdentify(b)
		if err != nil {
			return
		}
		if id == nil || len(id.PowerStates) != id.NPSS+1 || id.NPSS > 31 {
			t.Fatalf("%+v", id)
		}
		// Whatever decoded must survive the JSON writer and reader.
		again, err := DecodeIdentifyJSON(id.IdentifyJSON())
		if err != nil {
			t.Fatalf("re-read: %v", err)
		}
		if again.NPSS != id.NPSS || again.APSTA != id.APSTA || again.PowerStates[id.NPSS].ExitLatencyUs != id.PowerStates[id.NPSS].ExitLatencyUs {
			t.Fatalf("re-read differs")
		}
	})
}

func FuzzParseAPST(f *testing.F) {
	a := &APST{Enabled: new(true), Entries: []APSTEntry{{3, 100}, {4, 2000}}}
	f.Add(a.APSTJSON())
	f.Add(EncodeAPSTTable(a.Entries))
	f.Add(FormatHexDump(EncodeAPSTTable(a.Entries)))
	f.Add([]byte(`{"Autonomous Power State Transition Enable (APSTE)":"Enabled"}`))
	f.Fuzz(func(t *testing.T, b []byte) {
		got, _, err := ParseAPST(b)
		if err != nil {
			return
		}
		if len(got.Entries) != 32 {
			t.Fatalf("%d entries", len(got.Entries))
		}
		for _, e := range got.Entries {
			if e.ITPS > 31 || e.ITPTms > MaxITPTms {
				t.Fatalf("%+v", e)
			}
		}
		back, err := DecodeAPSTTable(EncodeAPSTTable(got.Entries))
		if err != nil {
			t.Fatal(err)
		}
		for i := range back {
			if back[i] != got.Entries[i] {
				t.Fatalf("entry %d: %+v → %+v", i, got.Entries[i], back[i])
			}
		}
		_ = Reached(got.Entries, 0)
	})
}

func FuzzParseSmall(f *testing.F) {
	for _, s := range []string{"[default] performance powersave powersupersave ", "default [performance]", "100000", "auto", "any", "-1", "0x00000004", string(PowerManagement{PS: 3}.PowerManagementJSON())} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		s := string(b)
		if p, err := ParseASPMPolicy(s); err == nil && p.Current == "" {
			t.Fatal("no current policy")
		}
		if v, err := ParseTolerance(s); err == nil && v.Us != Unlimited && v.Us > 1<<31-1 {
			t.Fatalf("%+v", v)
		}
		if pm, _, err := ParsePowerManagement(b); err == nil && (pm.PS > 31 || pm.WH > 7) {
			t.Fatalf("%+v", pm)
		}
		if raw, err := ParseHexDump(b, 16); err == nil && len(raw) != 16 {
			t.Fatalf("%d bytes", len(raw))
		}
	})
}

// Eligible and the text output never panic, whatever Identify, tolerance,
// quirks and tables they meet.
func FuzzEligible(f *testing.F) {
	f.Add(evoPlus.Encode(), uint32(100000), uint8(0), EncodeAPSTTable([]APSTEntry{{4, 100}}), true)
	f.Add(a2000.Encode(), uint32(0), uint8(QuirkNoDeepestPS), make([]byte, 256), false)
	f.Fuzz(func(t *testing.T, idb []byte, tol uint32, q uint8, table []byte, hasTol bool) {
		id, err := DecodeIdentify(idb)
		if err != nil {
			return
		}
		sys := &System{ASPMPolicy: &ASPMPolicy{Current: "default"}}
		c := &Controller{Name: "nvme0", State: "live", Identify: id, Quirks: []QuirkMatch{{Quirk: Quirks(q).String(), bits: Quirks(q) & (QuirkNoAPST | QuirkNoDeepestPS)}}}
		if hasTol {
			c.Tolerance = &Tolerance{Raw: "x", Us: uint64(tol)}
		}
		if e, err := DecodeAPSTTable(table); err == nil {
			c.APST = &APST{Entries: e}
		}
		p := PlanAPST(id, c.effectiveTolerance(sys.Module), quirkBits(c.Quirks), sys.Module)
		c.Kernel = &p
		c.Eligibility = Eligible(sys, c)
		if len(c.Eligibility.Checks) != 8 {
			t.Fatalf("%d checks", len(c.Eligibility.Checks))
		}
		sys.Ctrls = []Controller{*c}
		var b strings.Builder
		if err := sys.WriteText(&b); err != nil {
			t.Fatal(err)
		}
	})
}
