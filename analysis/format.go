package analysis

import (
	"math"
	"strconv"
	"strings"
)

// Number formats every output shares (report.md, the terminal, compare.md,
// compare.html), so one value reads the same everywhere.

// Dash is what the Markdown and terminal outputs show for a value that was
// not measured (NaN here, null in JSON).
const Dash = "—"

// FormatV formats x with digits decimals, or Dash when it is NaN. A value
// that rounds to zero reads "0.000", not "-0.000": a phase that starts a
// fraction of a nanosecond before the first sample (clock alignment) starts
// at zero for a reader.
func FormatV[Q ~float64](x Q, digits int) string {
	if math.IsNaN(float64(x)) {
		return Dash
	}
	return fixed(float64(x), digits)
}

// fixed is x with d decimals, never "-0.000": a value that rounds to zero
// carries no sign.
func fixed(x float64, d int) string {
	s := strconv.FormatFloat(x, 'f', d, 64)
	if s[0] == '-' && strings.Trim(s[1:], "0.") == "" {
		s = s[1:]
	}
	return s
}

// FormatPM formats x with its 95 % expanded uncertainty u as "x ± u", with
// at least digits decimals and up to two more as u needs to show two
// significant figures; an u too small for that reads "± <0.000001" (for
// digits 4); just x when u is nil, Dash when x is NaN. x and u are of one
// quantity (units.Watts, units.Joules, …).
func FormatPM[Q ~float64](x Q, u *Q, digits int) string {
	if math.IsNaN(float64(x)) {
		return Dash
	}
	if u == nil || math.IsNaN(float64(*u)) {
		return FormatV(x, digits)
	}
	uf := float64(*u)
	top := digits + 2
	if uf < 0.5*math.Pow(10, -float64(top)) {
		return fixed(float64(x), top) + " ± <" + strconv.FormatFloat(math.Pow(10, -float64(top)), 'f', top, 64)
	}
	d := min(top, max(digits, 1-int(math.Floor(math.Log10(uf)))))
	return fixed(float64(x), d) + " ± " + strconv.FormatFloat(uf, 'f', d, 64)
}

// FormatCI formats x with its 95 % interval ci ([lo, hi], for an estimate
// whose interval is not symmetric, like the peak) as "x [lo, hi]" with
// digits decimals; just x when ci is nil, Dash when x is NaN.
func FormatCI[Q ~float64](x Q, ci *[2]Q, digits int) string {
	if math.IsNaN(float64(x)) {
		return Dash
	}
	if ci == nil || math.IsNaN(float64(ci[0])) || math.IsNaN(float64(ci[1])) {
		return FormatV(x, digits)
	}
	return FormatV(x, digits) + " [" + FormatV(ci[0], digits) + ", " + FormatV(ci[1], digits) + "]"
}
