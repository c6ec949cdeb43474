package analysis

import (
	"slices"
	"testing"
)

// A mode inserted among the learned ones keeps every mode's origin
// (from) and name at its own index: prepended and sorted, the modes
// below the new one took their upper neighbour's origin, and a level's
// evidence named another's blocks.
func TestInsertModeKeepsOrigins(t *testing.T) {
	nm := &naming{named: []string{"", "", ""}, from: []string{" (a)", " (b)", " (c)"}}
	all := []mode{{x: 0.10}, {x: 0.05}, {x: 0.01}}
	all, i := nm.insertMode(all, mode{x: 0.07})
	if i != 1 || all[1].x != 0.07 {
		t.Fatalf("inserted at %d: %+v", i, all)
	}
	for k := 1; k < len(all); k++ {
		if all[k].x > all[k-1].x {
			t.Fatalf("not highest first: %+v", all)
		}
	}
	if want := []string{" (a)", "", " (b)", " (c)"}; !slices.Equal(nm.from, want) || len(nm.named) != len(all) {
		t.Errorf("from %q (want %q), %d names for %d modes", nm.from, want, len(nm.named), len(all))
	}
}
