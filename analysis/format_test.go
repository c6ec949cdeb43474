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

func TestFormatCI(t *testing.T) {
	ci := [2]float64{2.57065, 2.58897}
	for _, c := range []struct {
		x    float64
		ci   *[2]float64
		want string
	}{
		{2.5840214, &ci, "2.5840 [2.5707, 2.5890]"},
		{2.5840214, nil, "2.5840"},
		{math.NaN(), &ci, Dash},
		{1, &[2]float64{math.NaN(), 2}, "1.0000"},
	} {
		if got := FormatCI(c.x, c.ci, 4); got != c.want {
			t.Errorf("FormatCI(%v, %v) = %q, want %q", c.x, c.ci, got, c.want)
		}
	}
}
