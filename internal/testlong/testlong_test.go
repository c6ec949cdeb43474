package testlong

import "testing"

func TestEnabled(t *testing.T) {
	for v, want := range map[string]bool{"": false, "0": false, "1": true, "yes": true} {
		t.Setenv(Var, v)
		if got := Enabled(); got != want {
			t.Errorf("%s=%q: Enabled() = %v, want %v", Var, v, got, want)
		}
	}
}

func TestCoverageDrives(t *testing.T) {
	def := 20
	if testing.Short() {
		def = 4
	}
	for v, want := range map[string]int{"": def, "x": def, "0": def, "-3": def, "80": 80} {
		t.Setenv(CoverageVar, v)
		if got := CoverageDrives(20, 4); got != want {
			t.Errorf("%s=%q: CoverageDrives(20, 4) = %d, want %d", CoverageVar, v, got, want)
		}
	}
}
