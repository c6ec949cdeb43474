package analysis

import (
	"math"
	"testing"
)

// A difference that rounds to zero at the shown precision carries no sign,
// in the value and in the relative difference (issue 29: compare printed
// "-0.00000 ± 0.00011 (-0.0 %)").
func TestFormatDeltaNoNegativeZero(t *testing.T) {
	u := 0.00011
	for _, c := range []struct {
		d    Delta
		want string
	}{
		{Delta{Diff: -0.000001, DiffU95: &u, RelPct: -0.01}, "0.00000 ± 0.00011 (0.0 %)"},
		{Delta{Diff: 0.000001, DiffU95: &u, RelPct: 0.01}, "0.00000 ± 0.00011 (0.0 %)"},
		{Delta{Diff: -0.0012, DiffU95: &u, RelPct: -3.4}, "-0.00120 ± 0.00011 (-3.4 %)"},
		{Delta{Diff: 0.0012, DiffU95: &u, RelPct: 3.4}, "+0.00120 ± 0.00011 (+3.4 %)"},
		{Delta{Diff: 0.0012, RelPct: math.NaN()}, "+0.0012"},
		{Delta{Diff: -0.00001, RelPct: math.NaN()}, "0.0000"},
	} {
		if got := formatDelta(c.d, 1, 4); got != c.want {
			t.Errorf("%+v: %q, want %q", c.d, got, c.want)
		}
	}
	tiny := 1e-9
	if got := FormatPM(-1e-9, &tiny, 4); got != "0.000000 ± <0.000001" {
		t.Errorf("FormatPM tiny: %q", got)
	}
}
