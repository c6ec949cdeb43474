package ppk2

import (
	"fmt"
	"math"

	"github.com/idlewatt/idlewatt/meter"
)

// Physical bounds of a PPK2's calibration metadata (docs/meters.md, "ppk2
// — Limits"). Values beyond them would make every reading of a range a
// wrong number, so Open refuses them with an error wrapping
// meter.ErrCalibration that names the key.
const (
	// RFactor: a range's shunt (R0–R4) is a factory-trimmed resistor
	// within this factor of its nominal value (DefaultCalibration: 1031.64,
	// 101.65, 10.15, 0.94, 0.043 Ω); published boards are within 35 %.
	RFactor = 2.0
	// GI0–GI4 are linear gains near 1 (0.95–1.0 on published boards).
	MinGI, MaxGI = 0.5, 2.0
	// GS0–GS4 are second-order corrections (≤ 0.1 on published boards, 1
	// when absent); beyond ±MaxGS they are not a correction.
	MaxGS = 100.0
	// O0–O4 are ADC offsets in the converter's ×4 counts: beyond the ADC's
	// 65536 every reading of the range is off scale.
	MaxOffsetCounts = 65536
)

// fullScale is range r's full-scale current with shunt rOhm (A).
func fullScale(rOhm float64) float64 { return 65532 * adcMult / rOhm }

// Check tests the calibration against the bounds above. The supply-
// dependent offset S·VDD + I of each range must stay below its full-scale
// current at both ends of the regulator's 0.8–5 V.
func (c *Calibration) Check() error {
	nominal := DefaultCalibration().R
	for r := range Ranges {
		lo, hi := nominal[r]/RFactor, nominal[r]*RFactor
		if !(c.R[r] >= lo && c.R[r] <= hi) {
			return fmt.Errorf("ppk2: %w: metadata R%d = %g Ω outside %.4g–%.4g Ω (×1/%g–×%g of the nominal %g Ω)",
				meter.ErrCalibration, r, c.R[r], lo, hi, RFactor, RFactor, nominal[r])
		}
		if !(c.GI[r] >= MinGI && c.GI[r] <= MaxGI) {
			return fmt.Errorf("ppk2: %w: metadata GI%d = %g outside %g–%g", meter.ErrCalibration, r, c.GI[r], MinGI, MaxGI)
		}
		if !(math.Abs(c.GS[r]) <= MaxGS) {
			return fmt.Errorf("ppk2: %w: metadata GS%d = %g outside ±%g", meter.ErrCalibration, r, c.GS[r], MaxGS)
		}
		if !(math.Abs(c.O[r]) < MaxOffsetCounts) {
			return fmt.Errorf("ppk2: %w: metadata O%d = %g counts beyond the ADC's ±%d", meter.ErrCalibration, r, c.O[r], MaxOffsetCounts)
		}
		fs := fullScale(c.R[r])
		for _, v := range []float64{0.8, 5} {
			if off := c.S[r]*v + c.I[r]; !(math.Abs(off) < fs) {
				return fmt.Errorf("ppk2: %w: metadata S%d, I%d: offset S·VDD + I = %.4g A at %g V beyond range %d's full scale %.4g A",
					meter.ErrCalibration, r, r, off, v, r, fs)
			}
		}
	}
	return nil
}
