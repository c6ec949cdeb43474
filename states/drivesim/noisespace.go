package drivesim

import (
	"fmt"
	"math"
	"math/rand/v2"
	"slices"

	"github.com/idlewatt/idlewatt/units"
)

// Meter noise families of the campaign space (docs/drive-profiles.md,
// "Meter noise"): each drive of `idlewatt accuracy` gets one, drawn with
// DrawNoise. Ranges are for the campaign's 10 kS/s.
const (
	FamilyWhite     = "white"      // noise_ma alone, as before the noise models
	FamilyAR1       = "ar1"        // exponentially correlated noise
	FamilyFlicker   = "flicker"    // 1/f noise
	FamilyHumRipple = "hum+ripple" // mains hum with harmonics, aliased switching ripple
	FamilyQuantised = "quantised"  // noise under one LSB of a coarse meter, a floor near or under one LSB
	FamilyBandwidth = "bandwidth"  // a first-order sensor bandwidth over the current and white noise
	FamilyDrift     = "drift"      // gain and offset error with slow offset drift, within the stated calibration
	FamilySteps     = "steps"      // level steps (a random telegraph) in the reading
)

// Families lists the noise families in a fixed order.
var Families = []string{FamilyWhite, FamilyAR1, FamilyFlicker, FamilyHumRipple, FamilyQuantised, FamilyBandwidth, FamilyDrift, FamilySteps}

// Bounds of the noise families' draws.
const (
	// SpaceRateHz is the rate the noise draws are made for.
	SpaceRateHz = 10000
	// SpaceLongRunMaxMA bounds every drawn model's LongRunMA at
	// SpaceRateHz: the correlated parts make a long mean no noisier than
	// the white family's worst (3 mA), so the campaign's phases, sized for
	// it, resolve every family's means equally.
	SpaceLongRunMaxMA = SpaceNoiseMaxMA
	// SpaceWhiteFloorMA is the white noise under the ar1, flicker,
	// hum+ripple and steps families (a converter's own).
	SpaceWhiteFloorMA = 0.3
	// A quantised drive's noise is under half an LSB; its DevSlp floor
	// lies between SpaceDevSlpQuantMinW and three LSBs at 5 V.
	SpaceQuantNoiseMaxLSB = 0.5
	SpaceDevSlpQuantMinW  = 0.00005
	// The stated calibration of the drift family's meter: the gain and
	// offset (constant + drift) errors drawn stay within it.
	SpaceCalGainPct  = 0.1
	SpaceCalOffsetUA = 10.0
	// A ripple whose alias falls under SpaceRippleAliasMinHz is a wander
	// no window of the campaign averages out (an offset the drift family
	// covers within a calibration): the draw avoids it.
	SpaceRippleAliasMinHz = 10.0
)

// Alias is the frequency at which a tone at f appears sampled at fs: |f − k·fs|, k the nearest.
func Alias(f, fs float64) float64 { return math.Abs(f - math.Round(f/fs)*fs) }

// DrawNoise draws family's noise model into p (Noise and noise_ma; for
// the quantised family a DevSlp floor near the LSB too) from r. lsb5 is
// the meter's 5 V current LSB (A), which the quantised family scales to.
// The model stays within the space (InSpace).
func DrawNoise(r *rand.Rand, family string, p *Profile, lsb5 float64) error {
	u := func(lo, hi float64) float64 { return lo + (hi-lo)*r.Float64() }
	logu := func(lo, hi float64) float64 { return math.Exp(u(math.Log(lo), math.Log(hi))) }
	round := func(x, q float64) float64 { return math.Round(x/q) * q }
	var n Noise
	floor := func() { p.NoiseMA = round(u(0, SpaceWhiteFloorMA), 0.001) }
	// capped scales an amplitude down until the long-run σ is within the space.
	capped := func(set func(scale float64)) {
		set(1)
		if lr := n.LongRunMA(p.NoiseMA, SpaceRateHz); lr > SpaceLongRunMaxMA {
			// Components add in variance; the white floor is left as it is.
			w := p.NoiseMA
			set(math.Sqrt((SpaceLongRunMaxMA*SpaceLongRunMaxMA - w*w) / (lr*lr - w*w) * 0.999))
		}
	}
	switch family {
	case FamilyWhite:
	case FamilyAR1:
		floor()
		n.AR1TauMs = round(logu(0.1, 20), 0.001)
		s := logu(0.1, 3)
		capped(func(k float64) { n.AR1MA = s * k })
	case FamilyFlicker:
		floor()
		n.FlickerLoMs, n.FlickerHiMs = round(logu(0.1, 0.5), 0.001), round(logu(2, 20), 0.01)
		s := logu(0.1, 3)
		capped(func(k float64) { n.FlickerMA = s * k })
	case FamilyHumRipple:
		floor()
		n.HumHz = []float64{50, 60}[r.IntN(2)]
		n.HumMA, n.HumHarmonics = round(u(0.1, 2), 0.001), float64(1+r.IntN(5))
		n.RippleMA = round(u(0.1, 2), 0.001)
		for {
			n.RippleKHz = round(logu(20, 500), 0.0001)
			if Alias(n.RippleKHz*1e3, SpaceRateHz) >= SpaceRippleAliasMinHz {
				break
			}
		}
	case FamilyQuantised:
		if !(lsb5 > 0) {
			return fmt.Errorf("the quantised family needs the meter's LSB")
		}
		p.NoiseMA = math.Floor(u(0.02, SpaceQuantNoiseMaxLSB)*lsb5*1e3/1e-5) * 1e-5 // whole 10 nA, under half an LSB
		if p.DevSlpSupported {
			hi := math.Min(math.Min(SpaceDevSlpMaxW, float64(p.SlumberW)/2), 3*lsb5*5)
			p.DevSlpW = units.Watts(logu(SpaceDevSlpQuantMinW, math.Max(hi, SpaceDevSlpQuantMinW)))
		}
	case FamilyBandwidth:
		n.BandwidthKHz = round(logu(1, 20), 0.01)
	case FamilyDrift:
		n.GainPct = round(u(-SpaceCalGainPct, SpaceCalGainPct), 0.0001)
		n.OffsetUA = round(u(-SpaceCalOffsetUA/2, SpaceCalOffsetUA/2), 0.01)
		n.DriftUA, n.DriftS = round(u(1, SpaceCalOffsetUA/2), 0.01), round(logu(10, 100), 0.1)
	case FamilySteps:
		floor()
		n.StepMs = round(logu(1, 100), 0.01)
		s := logu(0.2, 3)
		capped(func(k float64) { n.StepMA = s * k })
	default:
		return fmt.Errorf("unknown noise family %q (%v)", family, Families)
	}
	p.Noise = n
	return nil
}

// inNoiseSpace checks the noise model against the families' ranges.
func (p *Profile) inNoiseSpace() error {
	n := p.Noise
	out := func(key string, v, lo, hi float64) error {
		return &ValidationError{Profile: p.Name, Key: "noise." + key,
			Msg: fmt.Sprintf("%g is outside the campaign space %g–%g", v, lo, hi)}
	}
	for _, c := range []struct {
		key       string
		v, lo, hi float64
		set       bool // the component is present: then lo applies
	}{
		{"ar1_ma", n.AR1MA, 0, 3, true}, {"ar1_tau_ms", n.AR1TauMs, 0.1, 20, n.AR1MA > 0},
		{"flicker_ma", n.FlickerMA, 0, 3, true}, {"flicker_lo_ms", n.FlickerLoMs, 0.1, 0.5, n.FlickerMA > 0},
		{"flicker_hi_ms", n.FlickerHiMs, 2, 20, n.FlickerMA > 0},
		{"hum_ma", n.HumMA, 0, 2, true}, {"hum_harmonics", n.HumHarmonics, 0, 5, true},
		{"ripple_ma", n.RippleMA, 0, 2, true}, {"ripple_khz", n.RippleKHz, 20, 500, n.RippleMA > 0},
		{"bandwidth_khz", n.BandwidthKHz, 1, 20, n.BandwidthKHz > 0},
		{"gain_pct", n.GainPct, -SpaceCalGainPct, SpaceCalGainPct, true},
		{"drift_s", n.DriftS, 10, 100, n.DriftUA > 0},
		{"step_ma", n.StepMA, 0, 3, true}, {"step_ms", n.StepMs, 1, 100, n.StepMA > 0},
	} {
		lo := c.lo
		if !c.set {
			lo = math.Min(c.lo, 0)
			if c.v != 0 {
				continue // a parameter of an absent component: unused
			}
		}
		if c.v < lo*(1-1e-9)-1e-12 || c.v > c.hi*(1+1e-9)+1e-12 {
			return out(c.key, c.v, c.lo, c.hi)
		}
	}
	if n.HumMA > 0 && !slices.Contains([]float64{50, 60}, n.HumHz) {
		return out("hum_hz", n.HumHz, 50, 60)
	}
	if n.RippleMA > 0 && Alias(n.RippleKHz*1e3, SpaceRateHz) < SpaceRippleAliasMinHz {
		return &ValidationError{Profile: p.Name, Key: "noise.ripple_khz",
			Msg: fmt.Sprintf("%g kHz aliases to %.2f Hz at %d S/s, under the campaign space's %g Hz", n.RippleKHz, Alias(n.RippleKHz*1e3, SpaceRateHz), SpaceRateHz, SpaceRippleAliasMinHz)}
	}
	if off := math.Abs(n.OffsetUA) + n.DriftUA; off > SpaceCalOffsetUA*(1+1e-9) {
		return &ValidationError{Profile: p.Name, Key: "noise.offset_ua",
			Msg: fmt.Sprintf("|offset| + drift = %g µA is outside the campaign's stated calibration ±%g µA", off, SpaceCalOffsetUA)}
	}
	if lr := n.LongRunMA(p.NoiseMA, SpaceRateHz); lr > SpaceLongRunMaxMA*(1+1e-6) {
		return &ValidationError{Profile: p.Name, Key: "noise",
			Msg: fmt.Sprintf("long-run σ %.3f mA at %d S/s is above the campaign space's %g mA", lr, SpaceRateHz, SpaceLongRunMaxMA)}
	}
	return nil
}
