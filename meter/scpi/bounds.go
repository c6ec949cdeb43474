package scpi

import (
	"fmt"
	"math"

	"github.com/idlewatt/idlewatt/meter"
)

// Physical bounds of what a bench instrument on a drive rail may read
// (docs/meters.md, "scpi — Limits"). The families' ranges top out at 20 A
// and 60 V (N6705 modules, 2280S, DP800); a reading beyond MaxAmps or
// MaxVolts is not a measurement of a drive and is treated as over-range.
// A rail voltage below MinRailVolts at open means the output is off or
// not connected: a stream that multiplies every current by it would read
// 0 W, so it is refused with meter.ErrCalibration.
const (
	MaxAmps      = 100.0
	MaxVolts     = 100.0
	MinRailVolts = 0.5
)

// plausible reports whether a current and voltage reading can be a drive's.
func plausible(i, v float64) error {
	switch {
	case !(math.Abs(i) <= MaxAmps):
		return fmt.Errorf("scpi: current reading %g A beyond ±%g A (over-range)", i, MaxAmps)
	case !(math.Abs(v) <= MaxVolts):
		return fmt.Errorf("scpi: voltage reading %g V beyond ±%g V (over-range)", v, MaxVolts)
	}
	return nil
}

// checkRail tests a rail voltage used for every sample (Options.Voltage,
// or array mode's one reading at open); what names where it came from.
func checkRail(v float64, what string) error {
	if !(v >= MinRailVolts && v <= MaxVolts) {
		return fmt.Errorf("scpi: %w: %s %g V outside %g–%g V: every sample's power uses it (an output that is off or not connected reads 0 W); switch the output on or state the rail with Options.Voltage (--voltage)",
			meter.ErrCalibration, what, v, MinRailVolts, MaxVolts)
	}
	return nil
}
