package judge

import (
	"encoding/json"
	"fmt"
	"math"
	"strconv"

	"github.com/idlewatt/idlewatt/units"
)

// Num is a measured value of quantity Q (units.Watts, units.Milliseconds)
// that may be absent: NaN in code, null in JSON (never 0, never a number
// from another state). Q only types it: a floor in W and an entry in ms
// are different types, and PM takes a value and its interval of one.
type Num[Q ~float64] float64

// NumW is a power that may be absent; NumMs a time in ms.
type (
	NumW  = Num[units.Watts]
	NumMs = Num[units.Milliseconds]
)

// NoneW and NoneMs are absent values.
var (
	NoneW  = NumW(math.NaN())
	NoneMs = NumMs(math.NaN())
)

// Ok reports whether the value is present.
func (n Num[Q]) Ok() bool { return !math.IsNaN(float64(n)) && !math.IsInf(float64(n), 0) }

// Value is n as its quantity (NaN when absent).
func (n Num[Q]) Value() Q { return Q(n) }

// MarshalJSON writes null for an absent value.
func (n Num[Q]) MarshalJSON() ([]byte, error) {
	if !n.Ok() {
		return []byte("null"), nil
	}
	return strconv.AppendFloat(nil, float64(n), 'g', -1, 64), nil
}

// UnmarshalJSON reads null as absent.
func (n *Num[Q]) UnmarshalJSON(b []byte) error {
	if string(b) == "null" {
		*n = Num[Q](math.NaN())
		return nil
	}
	var f float64
	if err := json.Unmarshal(b, &f); err != nil {
		return err
	}
	*n = Num[Q](f)
	return nil
}

// Outcome is a verdict.
type Outcome string

// Outcomes. Only Pass is a success; NotSupported is no failure of the
// drive, but nothing was verified.
const (
	Pass         Outcome = "pass"
	Fail         Outcome = "fail"
	Inconclusive Outcome = "inconclusive"
	NotSupported Outcome = "not_supported"
)

// worse orders outcomes for combining checks.
func worse(a, b Outcome) Outcome {
	rank := map[Outcome]int{Pass: 0, Inconclusive: 1, Fail: 2}
	if rank[b] > rank[a] {
		return b
	}
	return a
}

// checkAtMost judges x ± u against "x ≤ bound": pass when the whole
// interval is inside, fail when it is wholly outside.
func checkAtMost[Q ~float64](x, u, bound Q) Outcome {
	switch {
	case x+u <= bound:
		return Pass
	case x-u > bound:
		return Fail
	}
	return Inconclusive
}

// PM formats x ± u scaled (1e3 for mW from W) with two decimals, as every
// output prints a DevSlp quantity; "—" when absent.
func PM[Q ~float64](x, u Num[Q], scale float64) string {
	if !x.Ok() {
		return "—"
	}
	if !u.Ok() {
		return fmt.Sprintf("%.2f", float64(x)*scale)
	}
	return fmt.Sprintf("%.2f ± %.2f", float64(x)*scale, float64(u)*scale)
}
