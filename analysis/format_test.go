package analysis

import (
	"math"
	"testing"
)

func TestFormatVNoNegativeZero(t *testing.T) {
	for _, c := range []struct {
		x      float64
		digits int
		want   string
	}{
		{-7.080078125e-10, 3, "0.000"}, // a phase start from the demo's report.json
		{-0.0004, 3, "0.000"},
		{-0.0005, 3, "-0.001"}, // rounds away from zero: the sign is real
		{-1.25, 1, "-1.2"},
		{-10, 0, "-10"},
		{0, 3, "0.000"},
		{math.NaN(), 3, Dash},
		{4.000095331291992, 3, "4.000"},
	} {
		if got := FormatV(c.x, c.digits); got != c.want {
			t.Errorf("FormatV(%g, %d) = %q, want %q", c.x, c.digits, got, c.want)
		}
	}
}
