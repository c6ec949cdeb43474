package drivesim

import (
	"fmt"
	"math"
	"math/rand/v2"

	"github.com/idlewatt/idlewatt/units"
)

// The campaign space: the region of profile parameters that `idlewatt
// accuracy` draws random drives from (docs/drive-profiles.md, "Parameter
// space", has the same table). Draw picks a profile inside it; InSpace
// refuses a profile outside it, naming the key. It is a subset of what
// Validate accepts: Validate bounds what the model and the meters can
// represent, the space bounds what the estimators are held to.

// Space bounds, one per drawn quantity. Powers in W, times in the key's unit.
const (
	SpaceSSDIdleMinW, SpaceSSDIdleMaxW = 0.02, 3.0 // SSD active idle (log-uniform)
	SpaceHDDIdleMinW, SpaceHDDIdleMaxW = 3.0, 8.0  // HDD active idle (log-uniform)
	SpaceDevSlpMinW, SpaceDevSlpMaxW   = 0.0003, 0.010
	SpaceNoiseMaxMA                    = 3.0
	SpaceGCEveryMinS, SpaceGCEveryMaxS = 0.3, 10.0
	SpaceExitMinMs, SpaceExitMaxMs     = 1.0, 300.0 // Slumber and DevSlp exit
	// Powers a 5 V-only drive may reach: the 5 V sensor of the hub reads up to
	// 1.638 A (8.19 W); the space stays under it with a margin.
	Space5VMaxW = 7.5
)

// DevSlp modes of a drawn drive.
const (
	DevSlpModeWorking     = "working"
	DevSlpModeUnsupported = "unsupported"
	DevSlpModeBroken      = "broken"
)

// DevSlpMode names the profile's DevSlp behaviour: working, unsupported or broken.
func (p *Profile) DevSlpMode() string {
	switch {
	case !p.DevSlpSupported:
		return DevSlpModeUnsupported
	case p.DevSlpBroken:
		return DevSlpModeBroken
	}
	return DevSlpModeWorking
}

// Draw returns a random profile from the campaign space, named name. The
// same generator state gives the same profile: seed r with
// rand.NewPCG(seed, index) to replay a drive exactly. 70 % are SSDs
// (2.5", 5 V), 30 % HDDs (3.5", 5 V + 12 V, no DevSlp); an SSD's DevSlp is
// working (60 %), unsupported (20 %) or broken (20 %).
func Draw(r *rand.Rand, name string) Profile {
	u := func(lo, hi float64) float64 { return lo + (hi-lo)*r.Float64() }
	logu := func(lo, hi float64) float64 { return math.Exp(u(math.Log(lo), math.Log(hi))) }
	round := func(x float64, q float64) float64 { return math.Round(x/q) * q }

	p := Profile{Name: name}
	hdd := r.Float64() < 0.3
	if hdd {
		p.FormFactor, p.Rails = "3.5", Rails5V12V
		p.ActiveIdleW = units.Watts(logu(SpaceHDDIdleMinW, SpaceHDDIdleMaxW))
		p.PartialW = p.ActiveIdleW * units.Watts(u(0.95, 0.99))
		p.SlumberW = p.PartialW * units.Watts(u(0.95, 0.99))
		p.SpindleW = p.ActiveIdleW * units.Watts(u(0.5, 0.7))
		p.SpinupMs, p.SpinupW = round(u(3000, 10000), 1), units.Watts(u(15, 25))
		p.Active12VShare = u(0.4, 0.8)
		p.StandbyW = units.Watts(u(0.5, 1.0))
		p.ReadWPerMBps, p.WriteWPerMBps = u(0.005, 0.012), u(0.006, 0.014)
		p.MaxReadMBps, p.MaxWriteMBps = round(u(120, 260), 1), round(u(110, 250), 1)
		p.PeakWriteW = p.ActiveIdleW + units.Watts(u(1, 3))
		p.WakeSpikeW = p.ActiveIdleW * units.Watts(u(1.05, 1.3))
		p.Description = "random HDD"
	} else {
		p.FormFactor, p.Rails = "2.5", Rails5V
		p.ActiveIdleW = units.Watts(logu(SpaceSSDIdleMinW, SpaceSSDIdleMaxW))
		p.PartialW = p.ActiveIdleW * units.Watts(u(0.3, 0.9))
		// Slumber at least 2 mW, so a DevSlp floor of up to half of it fits.
		lo := math.Max(0.002, 0.05*float64(p.PartialW))
		hi := math.Max(lo, 0.6*float64(p.PartialW))
		p.SlumberW = units.Watts(logu(lo, hi))
		p.ReadWPerMBps, p.WriteWPerMBps = u(0.0005, 0.004), u(0.002, 0.009)
		p.MaxReadMBps, p.MaxWriteMBps = round(u(200, 560), 1), round(u(100, 520), 1)
		top := math.Max(p.ReadWPerMBps*p.MaxReadMBps, p.WriteWPerMBps*p.MaxWriteMBps)
		p.PeakWriteW = units.Watts(math.Min(Space5VMaxW, float64(p.ActiveIdleW)+top))
		p.WakeSpikeW = units.Watts(math.Min(Space5VMaxW, float64(p.ActiveIdleW)*u(1.5, 4)))
		p.ReadyMs = round(u(50, 500), 1)
		p.Description = "random SSD"
		switch x := r.Float64(); {
		case x < 0.6:
			p.DevSlpSupported = true
		case x < 0.8:
		default:
			p.DevSlpSupported, p.DevSlpBroken = true, true
		}
	}
	p.PartialExitUs = round(u(1, 10), 0.1)
	p.SlumberExitMs = round(logu(SpaceExitMinMs, SpaceExitMaxMs), 0.1)
	p.DESO = r.Float64() < 0.5
	if p.DevSlpSupported {
		p.DevSlpW = units.Watts(logu(SpaceDevSlpMinW, math.Min(SpaceDevSlpMaxW, float64(p.SlumberW)/2)))
		p.DevSlpExitMs = round(logu(SpaceExitMinMs, SpaceExitMaxMs), 0.1)
		p.DetoMs = math.Ceil(p.DevSlpExitMs * u(1.1, 1.5))
		p.MdatMs = round(u(5, 20), 1)
	}
	p.HipmPartialAfterMs = round(u(0.5, 5), 0.1)
	p.DipmPartialAfterMs = round(u(1, 20), 0.1)
	p.DipmSlumberAfterMs = round(u(10, 200), 1)
	p.DitoMs = round(u(100, 1000), 1)
	p.WakeSpikeMs = round(u(0.2, math.Min(5, 0.5*math.Min(p.SlumberExitMs, nonzero(p.DevSlpExitMs, p.SlumberExitMs)))), 0.1)
	p.NoiseMA = round(u(0, SpaceNoiseMaxMA), 0.01)
	p.GCEveryS = round(logu(SpaceGCEveryMinS, SpaceGCEveryMaxS), 0.01)
	p.GCMs = round(math.Min(u(10, 200), 300*p.GCEveryS), 1)
	if hdd {
		p.GCW = p.ActiveIdleW * units.Watts(u(1.05, 1.3)) // background media work on a spinning drive
	} else {
		p.GCW = min(p.ActiveIdleW*units.Watts(u(1.5, 3)), Space5VMaxW)
	}
	return p
}

func nonzero(x, alt float64) float64 {
	if x > 0 {
		return x
	}
	return alt
}

// InSpace reports whether p lies inside the campaign space: it must pass
// Validate and keep every drawn quantity within the bounds above. The
// error is a *ValidationError naming the first key outside.
func (p *Profile) InSpace() error {
	if err := p.Validate(); err != nil {
		return err
	}
	out := func(key string, v, lo, hi float64, unit string) error {
		return &ValidationError{Profile: p.Name, Key: key,
			Msg: fmt.Sprintf("%g %s is outside the campaign space %g–%g %s", v, unit, lo, hi, unit)}
	}
	check := func(key string, v, lo, hi float64, unit string) error {
		// A relative slack covers the rounding of values written to text.
		if v < lo*(1-1e-9) || v > hi*(1+1e-9) {
			return out(key, v, lo, hi, unit)
		}
		return nil
	}
	idle := float64(p.ActiveIdleW)
	var err error
	if p.HDD() {
		err = check("active_idle_w", idle, SpaceHDDIdleMinW, SpaceHDDIdleMaxW, "W")
		if err == nil && p.DevSlpSupported {
			err = &ValidationError{Profile: p.Name, Key: "devslp_supported", Msg: "the campaign space has no HDD with DevSlp"}
		}
	} else {
		err = check("active_idle_w", idle, SpaceSSDIdleMinW, SpaceSSDIdleMaxW, "W")
	}
	// What each power puts on the 5 V rail (a 5v+12v drive's spindle is on
	// 12 V) must stay inside the 5 V sensor's range.
	on5 := func(w units.Watts) float64 {
		if p.HDD() {
			return float64(w - p.SpindleW)
		}
		return float64(w)
	}
	peak5 := on5(p.PeakWriteW)
	if p.HDD() {
		peak5 = on5(p.ActiveIdleW) + (1-p.Active12VShare)*float64(p.PeakWriteW-p.ActiveIdleW)
	}
	for _, c := range []struct {
		key string
		v   float64
	}{{"peak_write_w", peak5}, {"wake_spike_w", on5(p.WakeSpikeW)}, {"gc_w", on5(p.GCW)}} {
		if err == nil && c.v > Space5VMaxW*(1+1e-9) {
			err = &ValidationError{Profile: p.Name, Key: c.key,
				Msg: fmt.Sprintf("puts %.3g W on the 5 V rail, above the campaign space's %g W (the hub's 5 V sensor reads up to 8.19 W)", c.v, Space5VMaxW)}
		}
	}
	if err == nil && p.DevSlpSupported {
		// Draw's floors start at SpaceDevSlpMinW; the quantised noise
		// family's (DrawNoise) go down to SpaceDevSlpQuantMinW.
		err = check("devslp_w", float64(p.DevSlpW), SpaceDevSlpQuantMinW, SpaceDevSlpMaxW, "W")
		if err == nil {
			err = check("devslp_exit_ms", p.DevSlpExitMs, SpaceExitMinMs, SpaceExitMaxMs, "ms")
		}
	}
	if err == nil {
		err = check("slumber_exit_ms", p.SlumberExitMs, SpaceExitMinMs, SpaceExitMaxMs, "ms")
	}
	if err == nil {
		err = check("noise_ma", p.NoiseMA, 0, SpaceNoiseMaxMA, "mA")
	}
	if err == nil {
		err = check("gc_every_s", p.GCEveryS, SpaceGCEveryMinS, SpaceGCEveryMaxS, "s")
	}
	if err == nil {
		err = p.inNoiseSpace()
	}
	if err == nil && p.StandbyAfterS > 0 {
		err = &ValidationError{Profile: p.Name, Key: "standby_after_s", Msg: "the campaign space has no standby (a spin-down inside a short run)"}
	}
	return err
}
