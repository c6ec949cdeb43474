package report

import (
	"strconv"
	"testing"
)

// FuzzCompareBaseline: any --baseline value gives a run index in range or
// an error, never a panic.
func FuzzCompareBaseline(f *testing.F) {
	for _, s := range []string{"1", "0", "-1", "3", "a", "b", "99999999999999999999", "+2", " 1", ""} {
		f.Add(s)
	}
	labels := []string{"a", "b", "a"}
	f.Fuzz(func(t *testing.T, v string) {
		i, err := CompareBaseline(v, labels)
		if err != nil {
			return
		}
		if i < 0 || i >= len(labels) {
			t.Fatalf("%q → %d, out of range", v, i)
		}
		if n, perr := strconv.Atoi(v); (perr == nil && n != i+1) || (perr != nil && labels[i] != v) {
			t.Fatalf("%q → run %d (%s)", v, i+1, labels[i])
		}
		if v == "a" {
			t.Fatalf("ambiguous label %q → %d", v, i)
		}
	})
}
