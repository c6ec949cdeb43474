package suggest

import "testing"

func TestDistance(t *testing.T) {
	for _, c := range []struct {
		a, b string
		d    int
	}{{"", "", 0}, {"min_powr", "min_power", 1}, {"kitten", "sitting", 3}, {"abc", "", 3}} {
		if got := Distance(c.a, c.b); got != c.d {
			t.Errorf("Distance(%q, %q) = %d, want %d", c.a, c.b, got, c.d)
		}
	}
}

func TestNearest(t *testing.T) {
	within2 := func(string) int { return 2 }
	if got := Nearest("ssd-340", []string{"ssd340", "hdd-7200"}, within2); got != "ssd340" {
		t.Errorf("Nearest = %q", got)
	}
	if got := Nearest("zzzzzzz", []string{"ssd340"}, within2); got != "" {
		t.Errorf("Nearest of a far word = %q, want none", got)
	}
	if got := Nearest("x", nil, within2); got != "" {
		t.Errorf("Nearest with no candidates = %q", got)
	}
}
