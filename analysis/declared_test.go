package analysis

import (
	"math"
	"testing"

	"github.com/idlewatt/idlewatt/units"
)

// TestDeclaredAgreement: a declared figure agrees inside the measured
// interval widened by DeclaredMargin of itself, disagrees outside, and is
// not compared without a measurement or an interval.
func TestDeclaredAgreement(t *testing.T) {
	u := units.Watts(0.0001)
	for _, c := range []struct {
		declared, measured units.Watts
		ok                 bool
		u95                *units.Watts
		agrees             *bool
	}{
		{0.005, 0.0045, true, &u, ptrBool(true)},          // 0.5 mW off, allowed 0.1 + 1.25
		{0.005, 0.0036, true, &u, ptrBool(false)},         // 1.4 mW off, allowed 1.35
		{0.005, 0.0064, true, &u, ptrBool(false)},         // above as well as below
		{0.005, units.Watts(math.NaN()), false, nil, nil}, // not measured
		{0.005, 0.0045, true, nil, nil},                   // no interval
	} {
		f := compareDeclared("devslp.floor_w", "DevSlp floor", c.declared, c.measured, c.ok, c.u95)
		if (f.Agrees == nil) != (c.agrees == nil) || (f.Agrees != nil && *f.Agrees != *c.agrees) {
			t.Errorf("declared %v, measured %v ± %v: agrees %v, want %v", c.declared, c.measured, c.u95, f.Agrees, c.agrees)
		}
		if f.Agrees != nil && !*f.Agrees && f.Note == "" {
			t.Errorf("a disagreement without a note")
		}
	}
}

func ptrBool(b bool) *bool { return &b }

// FuzzExpectationNote: any capture note is read without a panic; a note
// ExpectationNote wrote reads back to the same figures.
func FuzzExpectationNote(f *testing.F) {
	f.Add(ExpectationNote(Expectation{DevSlpMW: 5, ActiveIdleW: 0.4}))
	f.Add(NoteExpect + `{"devslp_mw": -1}`)
	f.Add(NoteExpect + `{"devslp_mw": 1e400}`)
	f.Add(NoteExpect + `[1]`)
	f.Add("devslp-criteria {}")
	f.Fuzz(func(t *testing.T, v string) {
		e, ok := parseExpectation(v)
		if !ok {
			return
		}
		back, ok2 := parseExpectation(ExpectationNote(e))
		if !ok2 || back != e {
			t.Fatalf("%q: read %+v, written and read back %+v (%v)", v, e, back, ok2)
		}
	})
}
