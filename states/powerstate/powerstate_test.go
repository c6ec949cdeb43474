package powerstate

import "testing"

// Every output file spells states by these names, and detection's arrays
// are indexed by these values: a reordering would change both.
func TestNamesAndValues(t *testing.T) {
	want := []struct {
		s    State
		v    uint8
		name string
	}{
		{Unknown, 0, "unknown"}, {Active, 1, "active"}, {Background, 2, "background"},
		{Idle, 3, "idle"}, {Partial, 4, "partial"}, {Slumber, 5, "slumber"},
		{DevSlp, 6, "devslp"}, {Off, 7, "off"},
		{SpinUp, 8, "spinup"}, {Wake, 9, "wake"}, {Standby, 10, "standby"},
	}
	for _, w := range want {
		if uint8(w.s) != w.v || w.s.String() != w.name {
			t.Errorf("state %d %q, want %d %q", uint8(w.s), w.s, w.v, w.name)
		}
		if got, err := Parse(w.name); err != nil || got != w.s {
			t.Errorf("Parse(%q) = %v, %v", w.name, got, err)
		}
	}
	if got := State(200).String(); got != "state(200)" {
		t.Errorf("State(200) = %q", got)
	}
	if _, err := Parse("sleep"); err == nil {
		t.Error("Parse(sleep): no error")
	}
	if NumDetected != 8 || len(Detected) != 7 || Detected[len(Detected)-1] != Off {
		t.Errorf("NumDetected %d, Detected %v", NumDetected, Detected)
	}
	if len(Simulated) != 9 {
		t.Errorf("Simulated %v", Simulated)
	}
}
