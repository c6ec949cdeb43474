package units

import (
	"fmt"
	"math"
	"time"
)

// Volts is an electric potential in volts.
type Volts float64

// Amps is an electric current in amperes.
type Amps float64

// Watts is a power in watts.
type Watts float64

// Milliwatts is a power in milliwatts, for what a user states in mW
// (a datasheet's DevSlp floor, keys ending `_mw`); Watts is the unit of
// every measured power.
type Milliwatts float64

// Joules is an energy in joules.
type Joules float64

// Hertz is a rate in samples (or events) per second.
type Hertz float64

// Seconds is a time in seconds, as a report states it (keys ending `_s`):
// a figure measured from samples, which may be fractional or NaN.
// time.Duration stays the type of what the program waits or schedules.
type Seconds float64

// Milliseconds is a time in milliseconds, as a report states it (keys
// ending `_ms`). It is its own type, not Seconds scaled, so that a report
// field keeps the very number it was computed as and a millisecond is never
// read as a second.
type Milliseconds float64

// Power returns v × i.
func Power(v Volts, i Amps) Watts { return Watts(float64(v) * float64(i)) }

// Milliamps returns a in mA.
func (a Amps) Milliamps() float64 { return float64(a) * 1e3 }

// Milliwatts returns w in mW.
func (w Watts) Milliwatts() float64 { return float64(w) * 1e3 }

// Watts returns m in W.
func (m Milliwatts) Watts() Watts { return Watts(float64(m) / 1e3) }

// WattHours returns e in Wh.
func (e Joules) WattHours() float64 { return float64(e) / 3600 }

// Period is one sample's time at rate h (+Inf or 0 for a rate of 0 or
// +Inf: the caller checks the rate).
func (h Hertz) Period() time.Duration { return time.Duration(float64(time.Second) / float64(h)) }

// Samples is how many samples (not rounded) span s at rate h.
func (h Hertz) Samples(s Seconds) float64 { return float64(s) * float64(h) }

// Span is the time n samples span at rate h.
func (h Hertz) Span(n float64) Seconds { return Seconds(n / float64(h)) }

// Duration returns s as a time.Duration (rounded toward zero to 1 ns).
func (s Seconds) Duration() time.Duration { return time.Duration(float64(s) * float64(time.Second)) }

// Milliseconds returns s in ms.
func (s Seconds) Milliseconds() Milliseconds { return Milliseconds(float64(s) * 1e3) }

// Duration returns m as a time.Duration (rounded toward zero to 1 ns).
func (m Milliseconds) Duration() time.Duration {
	return time.Duration(float64(m) * float64(time.Millisecond))
}

// Seconds returns m in s.
func (m Milliseconds) Seconds() Seconds { return Seconds(float64(m) / 1e3) }

// SecondsOf returns d in seconds (d.Seconds()).
func SecondsOf(d time.Duration) Seconds { return Seconds(d.Seconds()) }

func (v Volts) String() string      { return si(float64(v), "V") }
func (a Amps) String() string       { return si(float64(a), "A") }
func (w Watts) String() string      { return si(float64(w), "W") }
func (e Joules) String() string     { return si(float64(e), "J") }
func (m Milliwatts) String() string { return m.Watts().String() }
func (h Hertz) String() string      { return si(float64(h), "Hz") }

// String writes s below 1 s with an SI prefix ("250 ms", "12 µs"), from
// 1 s in seconds ("3600 s", not "3.6 ks").
func (s Seconds) String() string {
	if x := float64(s); math.Abs(x) >= 1 || math.IsNaN(x) || math.IsInf(x, 0) {
		return fmt.Sprintf("%.4g s", x)
	}
	return si(float64(s), "s")
}

// String writes m as Seconds does ("250 ms", "1.5 s").
func (m Milliseconds) String() string { return m.Seconds().String() }

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
