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
