package stat

import "math"

// Rail is one measured rail of a drive as the capture header states it:
// its nominal voltage, the meter's resolution (LSBs) and the meter's stated
// calibration limits. A zero means "not stated".
type Rail struct {
	NominalV float64 // V
	// VoltLSB and CurrentLSB are the resolution of one reading (V, A).
	VoltLSB, CurrentLSB float64
	// VoltGainErr and CurrentGainErr bound the gain error of the readings
	// (a fraction: 0.001 = ±0.1 %); CurrentOffsetA bounds the current
	// offset (A). They do not shrink with the number of readings averaged.
	VoltGainErr, CurrentGainErr float64
	CurrentOffsetA              float64
}

// HasLSB reports whether any rail of known voltage states an LSB.
func HasLSB(rails []Rail) bool {
	for _, r := range rails {
		if r.NominalV > 0 && (r.VoltLSB > 0 || r.CurrentLSB > 0) {
			return true
		}
	}
	return false
}

// HasCalibration reports whether any rail of known voltage states a
// calibration limit.
func HasCalibration(rails []Rail) bool {
	for _, r := range rails {
		if r.NominalV > 0 && (r.VoltGainErr > 0 || r.CurrentGainErr > 0 || r.CurrentOffsetA > 0) {
			return true
		}
	}
	return false
}

// QuantStep is the drive-power step of one current LSB over the rails, in
// quadrature (W): the quantisation a sum of the rails' readings carries.
func QuantStep(rails []Rail) float64 {
	var v float64
	for _, r := range rails {
		if r.NominalV > 0 {
			q := r.NominalV * r.CurrentLSB
			v += q * q
		}
	}
	return math.Sqrt(v)
}

// ResolutionU is the standard uncertainty of a mean drive power p (W) from
// the meter's resolution: per rail, current LSB × nominal voltage and
// voltage LSB × the current the whole power p would draw at it (a bound:
// the split between rails is not known), each a rectangular ±LSB/2 bias of
// every reading (u = LSB/√12), in quadrature, plus float32 storage rounding.
// A bias of the quantiser does not average out: a level under one LSB with
// little noise reads as 0 or 1 LSB, whatever how many readings. Noise of σ
// (W per reading, the marginal σ: not its long-run part) dithers the
// current readings, and the part of an LSB that survives averaging shrinks
// as exp(−2π²σᵢ²/q²) (the first Fourier term of the quantiser's bias), σᵢ
// the current noise per rail, σ shared equally between the rails. known is
// false when no rail states an LSB.
func ResolutionU(rails []Rail, p, sigma float64) (u float64, known bool) {
	var v, vv float64
	for _, r := range rails {
		if r.NominalV > 0 {
			vv += r.NominalV * r.NominalV
		}
	}
	for _, r := range rails {
		if r.NominalV <= 0 {
			continue // a rail of unknown voltage: its LSBs cannot be turned into watts
		}
		if r.CurrentLSB > 0 || r.VoltLSB > 0 {
			known = true
		}
		cur := math.Abs(p) / r.NominalV
		qi := r.NominalV * r.CurrentLSB
		if r.CurrentLSB > 0 && sigma > 0 {
			si := sigma / math.Sqrt(vv)
			qi *= math.Min(1, 2*math.Exp(-2*math.Pi*math.Pi*si*si/(r.CurrentLSB*r.CurrentLSB)))
		}
		v += qi*qi + (cur*r.VoltLSB)*(cur*r.VoltLSB)
	}
	// Values stored as float32 (a chunk that is not all LSB counts) are
	// rounded to 2^-24 of V and of I.
	f := 2 * math.Abs(p) * 0x1p-24
	v += 2 * f * f
	return math.Sqrt(v / 12), known
}

// CalibrationU is the standard uncertainty of a mean drive power p (W) from
// the meter's stated calibration limits, each a rectangular bound
// (u = limit/√3): the gain errors of voltage and current (taken at the rail
// whose limits are widest, as the split of p between rails is not known)
// and each rail's current offset × its nominal voltage, in quadrature.
// known is false when no rail states a limit.
func CalibrationU(rails []Rail, p float64) (u float64, known bool) {
	var rel2, off2 float64
	for _, r := range rails {
		if r.NominalV <= 0 {
			continue
		}
		if r.VoltGainErr > 0 || r.CurrentGainErr > 0 || r.CurrentOffsetA > 0 {
			known = true
		}
		rel2 = math.Max(rel2, r.VoltGainErr*r.VoltGainErr+r.CurrentGainErr*r.CurrentGainErr)
		o := r.NominalV * r.CurrentOffsetA
		off2 += o * o
	}
	return math.Sqrt((p*p*rel2 + off2) / 3), known
}

// DitherSigma is the noise σ (W) that dithers a quantiser of drive-power
// step q (QuantStep) given the standard deviation s of the readings about
// their level: s² less the quantisation's own q²/12, never below 0 — a
// level read without noise (s ≈ 0, or s from the quantisation alone) is
// not dithered, and its LSB bias stays whole.
func DitherSigma(s, q float64) float64 {
	return math.Sqrt(math.Max(0, s*s-q*q/12))
}
