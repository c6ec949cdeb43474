package noisegen

import (
	"fmt"
	"math"
	"math/rand/v2"
)

// Family is a kind of meter noise; each is tested on its own.
type Family int

// The families, with the ranges Draw uses.
const (
	// White: gaussian, 1–3 mA σ.
	White Family = iota
	// AR1: AR(1), correlation time 0.1–20 ms (log-uniform), 1–3 mA σ.
	AR1
	// Flicker: 1/f between the corners of 0.1 and 20 ms correlation —
	// eight AR(1) components of equal power at correlation times
	// log-spaced over 0.1–20 ms — 1–3 mA σ in all.
	Flicker
	// Hum: mains at 50 or 60 Hz with its 2nd and 3rd harmonics (0.5–2 mA
	// fundamental, harmonics 10–50 % of it, random phases), a switching
	// regulator's ripple at 20–500 kHz (0.2–1 mA) aliased by the sampling,
	// and 0.3–1 mA of white noise.
	Hum
	// LSB: an ADC of 1–50 µA LSB with white noise of 0–0.3 LSB σ, so that
	// a floor under one LSB reads as 0 or 1 LSB.
	LSB
	// Bandwidth: a first-order sensor bandwidth of 1–20 kHz
	// (log-uniform) on the true current and 1–3 mA σ of white noise at
	// its input.
	Bandwidth
	// Steps: AR(1) noise of 0.1–5 ms, 1–3 mA σ, on a drive whose power
	// steps between levels (the caller's truth holds the steps).
	Steps
	NumFamilies
)

func (f Family) String() string {
	return [...]string{"white", "ar1", "1/f", "hum+ripple", "lsb", "bandwidth", "steps"}[f]
}

// Meter is one drawn meter on one rail.
type Meter struct {
	Family  Family
	RateHz  float64
	Volts   float64 // the rail's voltage (read exactly)
	SigmaA  float64 // white or AR(1) σ (A)
	TauS    []float64
	SigmasA []float64 // per AR(1) component
	// Hum and ripple.
	MainsHz, RippleHz    float64
	HumA                 [3]float64
	HumPh                [3]float64
	RippleA, RipplePh    float64
	LSBA                 float64 // 0: no quantisation
	CutoffHz             float64 // 0: no bandwidth limit
	GainErr, OffsetA     float64 // the calibration error actually present
	GainLimit, OffLimitA float64 // the limits a header would state
	state                []float64
	filt                 float64
	n                    int
	started              bool
}

// Draw draws a meter of family f at rateHz on a rail of volts.
func Draw(rng *rand.Rand, f Family, rateHz, volts float64) *Meter {
	u := func(a, b float64) float64 { return a + (b-a)*rng.Float64() }
	lu := func(a, b float64) float64 { return math.Exp(u(math.Log(a), math.Log(b))) }
	m := &Meter{Family: f, RateHz: rateHz, Volts: volts}
	switch f {
	case White:
		m.SigmaA = u(1e-3, 3e-3)
	case AR1:
		m.TauS, m.SigmasA = []float64{lu(1e-4, 20e-3)}, []float64{u(1e-3, 3e-3)}
	case Flicker:
		s := u(1e-3, 3e-3) / math.Sqrt(8)
		for k := range 8 {
			m.TauS = append(m.TauS, 1e-4*math.Pow(200, float64(k)/7))
			m.SigmasA = append(m.SigmasA, s)
		}
	case Hum:
		m.MainsHz = []float64{50, 60}[rng.IntN(2)]
		m.HumA[0] = u(0.5e-3, 2e-3)
		m.HumA[1], m.HumA[2] = m.HumA[0]*u(0.1, 0.5), m.HumA[0]*u(0.1, 0.5)
		for k := range m.HumPh {
			m.HumPh[k] = u(0, 2*math.Pi)
		}
		m.RippleHz, m.RippleA, m.RipplePh = u(20e3, 500e3), u(0.2e-3, 1e-3), u(0, 2*math.Pi)
		m.SigmaA = u(0.3e-3, 1e-3)
	case LSB:
		m.LSBA = lu(1e-6, 50e-6)
		m.SigmaA = u(0, 0.3) * m.LSBA
	case Bandwidth:
		m.CutoffHz = lu(1e3, 20e3)
		m.SigmaA = u(1e-3, 3e-3)
	case Steps:
		m.TauS, m.SigmasA = []float64{lu(1e-4, 5e-3)}, []float64{u(1e-3, 3e-3)}
	}
	return m
}

// WithCalibration gives the meter a gain error and a current offset drawn
// uniformly within the limits it states (gain limit a fraction, offset
// limit in A).
func (m *Meter) WithCalibration(rng *rand.Rand, gainLimit, offLimitA float64) *Meter {
	m.GainLimit, m.OffLimitA = gainLimit, offLimitA
	m.GainErr = gainLimit * (2*rng.Float64() - 1)
	m.OffsetA = offLimitA * (2*rng.Float64() - 1)
	return m
}

func (m *Meter) String() string {
	switch m.Family {
	case AR1, Steps:
		return fmt.Sprintf("%s τ %.2f ms σ %.2f mA", m.Family, m.TauS[0]*1e3, m.SigmasA[0]*1e3)
	case Flicker:
		return fmt.Sprintf("%s σ %.2f mA", m.Family, m.SigmasA[0]*math.Sqrt(8)*1e3)
	case Hum:
		return fmt.Sprintf("%s %g Hz %.2f mA, ripple %.1f kHz %.2f mA, white %.2f mA", m.Family, m.MainsHz, m.HumA[0]*1e3, m.RippleHz/1e3, m.RippleA*1e3, m.SigmaA*1e3)
	case LSB:
		return fmt.Sprintf("%s %.1f µA, σ %.2f LSB", m.Family, m.LSBA*1e6, m.SigmaA/m.LSBA)
	case Bandwidth:
		return fmt.Sprintf("%s %.1f kHz σ %.2f mA", m.Family, m.CutoffHz/1e3, m.SigmaA*1e3)
	}
	return fmt.Sprintf("%s σ %.2f mA", m.Family, m.SigmaA*1e3)
}

// Read returns what the meter reads (W) for the true power truth (W), one
// value per sample, continuing from the samples it read before (the noise
// processes and the filter keep their state).
func (m *Meter) Read(rng *rand.Rand, truth []float64) []float64 {
	out := make([]float64, len(truth))
	dt := 1 / m.RateHz
	if m.state == nil {
		m.state = make([]float64, len(m.TauS))
		for k := range m.state {
			m.state[k] = m.SigmasA[k] * rng.NormFloat64()
		}
	}
	alpha := 1.0
	if m.CutoffHz > 0 {
		alpha = 1 - math.Exp(-2*math.Pi*m.CutoffHz*dt)
	}
	for i, p := range truth {
		t := float64(m.n) * dt
		m.n++
		cur := p / m.Volts
		noise := m.SigmaA * rng.NormFloat64()
		for k, tau := range m.TauS {
			rho := math.Exp(-dt / tau)
			m.state[k] = rho*m.state[k] + m.SigmasA[k]*math.Sqrt(1-rho*rho)*rng.NormFloat64()
			noise += m.state[k]
		}
		if m.MainsHz > 0 {
			for h := range m.HumA {
				noise += m.HumA[h] * math.Sin(2*math.Pi*float64(h+1)*m.MainsHz*t+m.HumPh[h])
			}
			noise += m.RippleA * math.Sin(2*math.Pi*m.RippleHz*t+m.RipplePh)
		}
		x := cur + noise
		if m.CutoffHz > 0 {
			if !m.started {
				m.filt = x
			}
			m.filt += alpha * (x - m.filt)
			x = m.filt
		}
		m.started = true
		x = x*(1+m.GainErr) + m.OffsetA
		if m.LSBA > 0 {
			x = math.Round(x/m.LSBA) * m.LSBA
		}
		out[i] = x * m.Volts
	}
	return out
}

// NoiseSigmaW is the standard deviation of one reading's noise (W), as the
// meter adds it: every component's, the bandwidth's smoothing of white
// noise included, the quantiser's ±½ LSB (q/√12) added when the noise
// dithers it (σ ≥ ½ LSB), none below — a reading then does not scatter.
func (m *Meter) NoiseSigmaW() float64 {
	v := m.SigmaA * m.SigmaA
	if m.CutoffHz > 0 {
		a := 1 - math.Exp(-2*math.Pi*m.CutoffHz/m.RateHz)
		v *= a / (2 - a)
	}
	for _, s := range m.SigmasA {
		v += s * s
	}
	for _, a := range m.HumA {
		v += a * a / 2
	}
	v += m.RippleA * m.RippleA / 2
	if m.LSBA > 0 && m.SigmaA >= m.LSBA/2 {
		v += m.LSBA * m.LSBA / 12
	}
	return math.Sqrt(v) * m.Volts
}

// HumVarW is the variance (W²) of one reading's mains hum, its harmonics
// together: the part of NoiseSigmaW² an analysis that removes the hum no
// longer sees.
func (m *Meter) HumVarW() float64 {
	var v float64
	for _, a := range m.HumA {
		v += a * a / 2
	}
	return v * m.Volts * m.Volts
}
