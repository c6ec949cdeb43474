package units

import (
	"fmt"
	"math"
)

// Volts is an electric potential in volts.
type Volts float64

// Amps is an electric current in amperes.
type Amps float64

// Watts is a power in watts.
type Watts float64

// Joules is an energy in joules.
type Joules float64

// Hertz is a rate in samples (or events) per second.
type Hertz float64

// Power returns v × i.
func Power(v Volts, i Amps) Watts { return Watts(float64(v) * float64(i)) }

// Milliamps returns a in mA.
func (a Amps) Milliamps() float64 { return float64(a) * 1e3 }

// Milliwatts returns w in mW.
func (w Watts) Milliwatts() float64 { return float64(w) * 1e3 }

// WattHours returns e in Wh.
func (e Joules) WattHours() float64 { return float64(e) / 3600 }

func (v Volts) String() string  { return si(float64(v), "V") }
func (a Amps) String() string   { return si(float64(a), "A") }
func (w Watts) String() string  { return si(float64(w), "W") }
func (e Joules) String() string { return si(float64(e), "J") }
func (h Hertz) String() string  { return si(float64(h), "Hz") }

// Readout formats w for a live progress line, with a fixed number of
// decimals so that successive lines line up and a reader never compares
// "400 mW" with "0.4001 W": below 1 W in milliwatts with one decimal
// ("400.0 mW", "-6.2 mW"), from 1 W in watts with three ("2.580 W"). Every
// progress line (record, measure, idle, devslp verify, demo) uses it; results
// are formatted with their uncertainty by analysis instead.
func (w Watts) Readout() string {
	x := float64(w)
	if math.Abs(x) < 0.99995 { // rounds to 999.9 mW at most, never "1000.0 mW"
		return fmt.Sprintf("%.1f mW", x*1e3)
	}
	return fmt.Sprintf("%.3f W", x)
}

// si formats x with an SI prefix chosen so the mantissa is in [1, 1000).
func si(x float64, unit string) string {
	ax := x
	if ax < 0 {
		ax = -ax
	}
	switch {
	case ax == 0:
		return "0 " + unit
	case ax >= 1e6:
		return fmt.Sprintf("%.4g M%s", x/1e6, unit)
	case ax >= 1e3:
		return fmt.Sprintf("%.4g k%s", x/1e3, unit)
	case ax >= 1:
		return fmt.Sprintf("%.4g %s", x, unit)
	case ax >= 1e-3:
		return fmt.Sprintf("%.4g m%s", x*1e3, unit)
	case ax >= 1e-6:
		return fmt.Sprintf("%.4g µ%s", x*1e6, unit)
	default:
		return fmt.Sprintf("%.4g n%s", x*1e9, unit)
	}
}
