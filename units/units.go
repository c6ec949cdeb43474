package units

import "fmt"

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
