package drivesim

import (
	"fmt"
	"math"
	"reflect"
)

// Sensor noise is counter-based: sample n's noise is a hash of (seed, n)
// looked up in a table of standard-normal quantiles. So the samples depend
// only on the seed and the sample index, not on how the emulator chunks its
// Render calls, and a sample costs one hash and two loads (no allocation,
// no locking of a shared generator).

const gaussBits = 14

const gaussMask = 1<<gaussBits - 1

// gaussTable holds the standard-normal quantiles at (i+0.5)/N: a uniform
// index gives an exactly normal distribution, discretised to N levels and
// truncated at ±4.0 σ (the outermost quantile for N = 16384).
var gaussTable = func() (t [1 << gaussBits]float32) {
	n := float64(len(t))
	for i := range t {
		p := (float64(i) + 0.5) / n
		t[i] = float32(math.Sqrt2 * math.Erfinv(2*p-1))
	}
	return t
}()

// splitmix is SplitMix64's output function: a fast, well-mixed 64-bit hash.
func splitmix(x uint64) uint64 {
	x += 0x9e3779b97f4a7c15
	x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9
	x = (x ^ (x >> 27)) * 0x94d049bb133111eb
	return x ^ (x >> 31)
}

// gauss is a standard-normal draw from a hash.
func gauss(h uint64) float64 { return float64(gaussTable[h&gaussMask]) }

// unit is a uniform draw in [0, 1) from a hash.
func unit(h uint64) float64 { return float64(h>>11) / (1 << 53) }

// Noise is a meter noise model (docs/drive-profiles.md, "Meter noise"): what
// a real current sensor adds to the drive's current, on every rail that
// carries noise_ma's white noise (the 5 V rail; the 12 V rail too on a
// 5v+12v drive). The zero value adds nothing, so a profile without `noise:`
// renders exactly as before. Currents in mA (µA for the calibration),
// times in the key's unit. Every component is a deterministic function of
// the model's seed and the sample's index on the emulator clock
// (round(t / period)), whatever the chunking of Render.
//
// The reading of sample n is
//
//	(1 + gain_pct/100) · LP(drive's mean current + white) + offset + drift(t) + AR(1) + 1/f + hum(t) + ripple(t) + steps
//
// where LP is the sensor's first-order bandwidth (none when bandwidth_khz
// is 0) and white is noise_ma's noise. Quantisation is the meter's (the
// hub emulator's LSB, stated in the capture header).
type Noise struct {
	// AR(1): exponentially correlated noise, stationary σ ar1_ma,
	// correlation time ar1_tau_ms (lag-1 correlation exp(−T/τ) at period T).
	AR1MA    float64 `yaml:"ar1_ma" json:"ar1_ma,omitempty"`
	AR1TauMs float64 `yaml:"ar1_tau_ms" json:"ar1_tau_ms,omitempty"`
	// 1/f (flicker): σ flicker_ma over the band of correlation times
	// flicker_lo_ms … flicker_hi_ms (a power spectrum ∝ 1/f between
	// 1/(2π hi) and 1/(2π lo)), as a sum of AR(1) processes one octave apart.
	FlickerMA   float64 `yaml:"flicker_ma" json:"flicker_ma,omitempty"`
	FlickerLoMs float64 `yaml:"flicker_lo_ms" json:"flicker_lo_ms,omitempty"`
	FlickerHiMs float64 `yaml:"flicker_hi_ms" json:"flicker_hi_ms,omitempty"`
	// Mains hum: a tone at hum_hz (50 or 60) of amplitude hum_ma, and
	// hum_harmonics − 1 harmonics, the k-th of amplitude hum_ma / k.
	HumMA        float64 `yaml:"hum_ma" json:"hum_ma,omitempty"`
	HumHz        float64 `yaml:"hum_hz" json:"hum_hz,omitempty"`
	HumHarmonics float64 `yaml:"hum_harmonics" json:"hum_harmonics,omitempty"` // count, 1 = the fundamental alone; 0 = 1
	// Switching ripple: a tone at ripple_khz of amplitude ripple_ma, taken
	// at the sample instants, so it appears at |f − k·fs| (aliased).
	RippleMA  float64 `yaml:"ripple_ma" json:"ripple_ma,omitempty"`
	RippleKHz float64 `yaml:"ripple_khz" json:"ripple_khz,omitempty"`
	// Sensor bandwidth: a first-order low-pass (−3 dB at bandwidth_khz)
	// on the drive's current and the white noise; 0 = none.
	BandwidthKHz float64 `yaml:"bandwidth_khz" json:"bandwidth_khz,omitempty"`
	// Calibration: a gain error (%), a constant offset (µA) and a slow
	// offset drift of amplitude drift_ua and period drift_s (two
	// sinusoids, drift_s and drift_s/e, 0.6 and 0.4 of drift_ua: within
	// ±drift_ua). gain_pct and offset_ua may be negative.
	GainPct  float64 `yaml:"gain_pct" json:"gain_pct,omitempty"`
	OffsetUA float64 `yaml:"offset_ua" json:"offset_ua,omitempty"`
	DriftUA  float64 `yaml:"drift_ua" json:"drift_ua,omitempty"`
	DriftS   float64 `yaml:"drift_s" json:"drift_s,omitempty"`
	// Steps (burst or popcorn noise, a range switch): the reading's offset
	// is ±step_ma/2, drawn afresh at random instants, step_ms apart on
	// average (a random telegraph; half the draws keep the level).
	StepMA float64 `yaml:"step_ma" json:"step_ma,omitempty"`
	StepMs float64 `yaml:"step_ms" json:"step_ms,omitempty"`
}

// IsZero reports whether n adds nothing.
func (n Noise) IsZero() bool { return n == Noise{} }

// noiseLimits bound each key: beyond them a value is a unit mistake.
// A key not listed must be ≥ 0; gain_pct and offset_ua are signed.
var noiseLimits = map[string]struct{ lo, hi float64 }{
	"ar1_ma": {0, 100}, "ar1_tau_ms": {0, 10000},
	"flicker_ma": {0, 100}, "flicker_lo_ms": {0, 10000}, "flicker_hi_ms": {0, 10000},
	"hum_ma": {0, 100}, "hum_hz": {0, 1000}, "hum_harmonics": {0, 20},
	"ripple_ma": {0, 100}, "ripple_khz": {0, 10000},
	"bandwidth_khz": {0, 10000},
	"gain_pct":      {-10, 10}, "offset_ua": {-100000, 100000}, "drift_ua": {0, 100000}, "drift_s": {0, 100000},
	"step_ma": {0, 100}, "step_ms": {0, 1e6},
}

// noiseKeys are Noise's config keys in field order.
var noiseKeys = func() []string {
	t := reflect.TypeFor[Noise]()
	ks := make([]string, t.NumField())
	for i := range ks {
		ks[i] = t.Field(i).Tag.Get("yaml")
	}
	return ks
}()

// values returns each key's value, in noiseKeys order.
func (n *Noise) values() []float64 {
	v := reflect.ValueOf(n).Elem()
	out := make([]float64, v.NumField())
	for i := range out {
		out[i] = v.Field(i).Float()
	}
	return out
}

// validate checks n; key is the failing key (without the "noise." prefix).
func (n *Noise) validate() (key, msg string) {
	for i, x := range n.values() {
		k := noiseKeys[i]
		l := noiseLimits[k]
		switch {
		case math.IsNaN(x) || math.IsInf(x, 0):
			return k, fmt.Sprintf("%v is not a finite number", x)
		case x < l.lo && l.lo == 0:
			return k, fmt.Sprintf("%g must not be negative", x)
		case x < l.lo || x > l.hi:
			return k, fmt.Sprintf("%g is outside %g … %g", x, l.lo, l.hi)
		}
	}
	need := func(amp float64, key string, v float64, what string) (string, string) {
		if amp > 0 && v == 0 {
			return key, "missing or 0 while " + what
		}
		return "", ""
	}
	for _, c := range []struct {
		amp  float64
		key  string
		v    float64
		what string
	}{
		{n.AR1MA, "ar1_tau_ms", n.AR1TauMs, fmt.Sprintf("ar1_ma is %g", n.AR1MA)},
		{n.FlickerMA, "flicker_lo_ms", n.FlickerLoMs, fmt.Sprintf("flicker_ma is %g", n.FlickerMA)},
		{n.FlickerMA, "flicker_hi_ms", n.FlickerHiMs, fmt.Sprintf("flicker_ma is %g", n.FlickerMA)},
		{n.HumMA, "hum_hz", n.HumHz, fmt.Sprintf("hum_ma is %g", n.HumMA)},
		{n.RippleMA, "ripple_khz", n.RippleKHz, fmt.Sprintf("ripple_ma is %g", n.RippleMA)},
		{n.DriftUA, "drift_s", n.DriftS, fmt.Sprintf("drift_ua is %g", n.DriftUA)},
		{n.StepMA, "step_ms", n.StepMs, fmt.Sprintf("step_ma is %g", n.StepMA)},
	} {
		if k, m := need(c.amp, c.key, c.v, c.what); k != "" {
			return k, m
		}
	}
	if n.FlickerMA > 0 && n.FlickerHiMs < n.FlickerLoMs {
		return "flicker_hi_ms", fmt.Sprintf("%g is below flicker_lo_ms %g", n.FlickerHiMs, n.FlickerLoMs)
	}
	if n.HumHarmonics != math.Trunc(n.HumHarmonics) {
		return "hum_harmonics", fmt.Sprintf("%g is not a whole number of tones", n.HumHarmonics)
	}
	return "", ""
}

// flickerBand returns the correlation times (ms) of the AR(1) components
// of the 1/f noise: one per octave from lo to hi (at least two, at most
// 16), log-spaced, each carrying an equal share of the variance, so the
// spectrum falls as 1/f between the band's corners.
func flickerBand(lo, hi float64) []float64 {
	k := int(math.Ceil(math.Log2(hi/lo))) + 1
	k = max(2, min(k, 16))
	taus := make([]float64, k)
	for i := range taus {
		taus[i] = lo * math.Pow(hi/lo, float64(i)/float64(k-1))
	}
	return taus
}

// LongRunMA is the σ (mA) of white noise at rate hz whose long means vary as
// much as those of the noise's correlated components and noise_ma's white
// noise together (white ⊕ AR(1) ⊕ 1/f ⊕ steps): the σ an interval from
// N independent samples would need. For an AR(1) part of σ and lag-1
// correlation ρ it is σ·√((1 + ρ)/(1 − ρ)). Tones, the bandwidth (unity
// gain at 0 Hz) and the calibration do not enter.
func (n Noise) LongRunMA(whiteMA float64, hz float64) float64 {
	dt := 1e3 / hz // ms
	v := whiteMA * whiteMA
	ar := func(s, tau float64) {
		if s > 0 && tau > 0 {
			r := math.Exp(-dt / tau)
			v += s * s * (1 + r) / (1 - r)
		}
	}
	ar(n.AR1MA, n.AR1TauMs)
	if n.FlickerMA > 0 && n.FlickerLoMs > 0 {
		taus := flickerBand(n.FlickerLoMs, n.FlickerHiMs)
		s := n.FlickerMA / math.Sqrt(float64(len(taus)))
		for _, tau := range taus {
			ar(s, tau)
		}
	}
	if n.StepMA > 0 && n.StepMs > 0 {
		// A level redrawn with probability p per sample: lag-k correlation (1 − p)^k.
		ar(n.StepMA/2, -dt/math.Log1p(-min(dt/n.StepMs, 1-1e-12)))
	}
	return math.Sqrt(v)
}
