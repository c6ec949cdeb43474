package drivesim

import (
	"fmt"
	"math"
	"time"

	"github.com/idlewatt/idlewatt/units"
)

// Profile is the data that makes a simulated drive behave like one model of
// real drive. Every numeric field carries its unit in its name and its config
// key; docs/drive-profiles.md explains each one and where the built-in values
// come from. Powers are totals over all rails; a 5v+12v drive splits them as
// described at SpindleW and Active12VShare.
type Profile struct {
	Name        string `yaml:"name" json:"name"`               // set from the config map key; not a config key
	Base        string `yaml:"base" json:"base,omitempty"`     // config only: inherit every unset key from this profile
	Description string `yaml:"description" json:"description"` // free text for `idlewatt profiles`

	FormFactor string `yaml:"form_factor" json:"form_factor"` // "2.5" or "3.5" (inches)
	Rails      string `yaml:"rails" json:"rails"`             // "5v" or "5v+12v"; default from form_factor

	// Power levels (W, total over the rails).
	ActiveIdleW units.Watts `yaml:"active_idle_w" json:"active_idle_w"` // PHY ready, no command in flight
	PartialW    units.Watts `yaml:"partial_w" json:"partial_w"`
	SlumberW    units.Watts `yaml:"slumber_w" json:"slumber_w"`
	DevSlpW     units.Watts `yaml:"devslp_w" json:"devslp_w"`

	// Active power: active_idle_w + w_per_mbps × throughput, capped at
	// peak_write_w. The drive moves data at its max rate, so a sample that
	// sees the drive saturated shows the peak; the mean rises linearly with
	// the workload's throughput.
	ReadWPerMBps  float64     `yaml:"read_w_per_mbps" json:"read_w_per_mbps"`   // W per MB/s read
	WriteWPerMBps float64     `yaml:"write_w_per_mbps" json:"write_w_per_mbps"` // W per MB/s written
	PeakWriteW    units.Watts `yaml:"peak_write_w" json:"peak_write_w"`         // ceiling of any active power
	MaxReadMBps   float64     `yaml:"max_read_mbps" json:"max_read_mbps"`       // MB/s (10^6 B/s)
	MaxWriteMBps  float64     `yaml:"max_write_mbps" json:"max_write_mbps"`     // MB/s

	// Exit latencies: how long an I/O that arrives in the state waits.
	PartialExitUs float64 `yaml:"partial_exit_us" json:"partial_exit_us"` // µs, spec < 10
	SlumberExitMs float64 `yaml:"slumber_exit_ms" json:"slumber_exit_ms"` // ms, spec < 10
	DevSlpExitMs  float64 `yaml:"devslp_exit_ms" json:"devslp_exit_ms"`   // ms, must be ≤ deto_ms
	DetoMs        float64 `yaml:"deto_ms" json:"deto_ms"`                 // ms, DevSlp exit timeout the drive reports (log 30h p8)
	MdatMs        float64 `yaml:"mdat_ms" json:"mdat_ms"`                 // ms, minimum DEVSLP assertion time (nominal 10)
	ReadyMs       float64 `yaml:"ready_ms" json:"ready_ms"`               // ms from power-on to ready (SSD; HDDs use spinup_ms)

	// Idle timers, counted from the moment the last command completed.
	HipmPartialAfterMs float64 `yaml:"hipm_partial_after_ms" json:"hipm_partial_after_ms"` // host-initiated Partial (or Slumber under min_power)
	DipmPartialAfterMs float64 `yaml:"dipm_partial_after_ms" json:"dipm_partial_after_ms"` // device-initiated Partial
	DipmSlumberAfterMs float64 `yaml:"dipm_slumber_after_ms" json:"dipm_slumber_after_ms"` // device-initiated Slumber
	DitoMs             float64 `yaml:"dito_ms" json:"dito_ms"`                             // HBA auto-DevSlp idle time under min_power* (libahci default 1000)

	WakeSpikeW  units.Watts `yaml:"wake_spike_w" json:"wake_spike_w"`   // power while the drive wakes from Slumber/DevSlp/power-off
	WakeSpikeMs float64     `yaml:"wake_spike_ms" json:"wake_spike_ms"` // ms the spike lasts

	NoiseMA float64 `yaml:"noise_ma" json:"noise_ma"` // mA, standard deviation of the Gaussian sensor noise per rail
	// Noise is the meter noise model on top of noise_ma (config: a map of
	// its keys under noise:); the zero value adds nothing.
	Noise Noise `yaml:"noise" json:"noise,omitzero"`

	// Background garbage collection while idle: bursts arrive at random
	// (exponential gaps, mean gc_every_s, counted from the last command),
	// at most 16 per idle period (then the drive has nothing left to collect).
	GCEveryS float64     `yaml:"gc_every_s" json:"gc_every_s"` // s, 0 = never
	GCMs     float64     `yaml:"gc_ms" json:"gc_ms"`           // ms per burst
	GCW      units.Watts `yaml:"gc_w" json:"gc_w"`             // W during a burst

	DESO            bool `yaml:"deso" json:"deso"`                         // DEVSLP honoured only from Slumber (AHCI CAP2.DESO)
	DevSlpSupported bool `yaml:"devslp_supported" json:"devslp_supported"` // IDENTIFY word 78 bit 8
	DevSlpBroken    bool `yaml:"devslp_broken" json:"devslp_broken"`       // claims DevSlp but ignores the pin

	// HDDs (rails "5v+12v").
	SpinupMs       float64     `yaml:"spinup_ms" json:"spinup_ms"`               // ms from standby/power-on to ready
	SpinupW        units.Watts `yaml:"spinup_w" json:"spinup_w"`                 // W on 12 V while spinning up
	SpindleW       units.Watts `yaml:"spindle_w" json:"spindle_w"`               // W on 12 V while spinning (part of every spinning state's total)
	Active12VShare float64     `yaml:"active_12v_share" json:"active_12v_share"` // fraction of the active power above idle drawn from 12 V (actuator)
	StandbyAfterS  float64     `yaml:"standby_after_s" json:"standby_after_s"`   // s idle before the spindle stops, 0 = never
	StandbyW       units.Watts `yaml:"standby_w" json:"standby_w"`               // W in standby (5 V only)
}

// Rails returned by Profile.RailSet.
const (
	Rails5V    = "5v"
	Rails5V12V = "5v+12v"
)

// RailSet returns the rails the drive draws from, defaulting from the form factor.
func (p *Profile) RailSet() string {
	if p.Rails != "" {
		return p.Rails
	}
	if p.FormFactor == "3.5" {
		return Rails5V12V
	}
	return Rails5V
}

// HDD reports whether the drive has a 12 V spindle (spin-up and standby apply).
func (p *Profile) HDD() bool { return p.RailSet() == Rails5V12V }

// DevSlpWorks reports whether the drive honours the DEVSLP pin.
func (p *Profile) DevSlpWorks() bool { return p.DevSlpSupported && !p.DevSlpBroken }

// MDAT is mdat_ms as a duration: the minimum DEVSLP assertion time the
// drive reports (0: not given).
func (p *Profile) MDAT() time.Duration { return msDuration(p.MdatMs) }

// DETO is deto_ms as a duration: the DevSlp exit timeout the drive reports
// (0: not given).
func (p *Profile) DETO() time.Duration { return msDuration(p.DetoMs) }

// msDuration converts a profile's millisecond figure, truncating below 1 ns.
func msDuration(ms float64) time.Duration { return time.Duration(ms * float64(time.Millisecond)) }

// ValidationError names the profile and the config key that is wrong.
type ValidationError struct {
	Profile string
	Key     string
	Msg     string
}

func (e *ValidationError) Error() string {
	return fmt.Sprintf("profile %q: %s: %s", e.Profile, e.Key, e.Msg)
}

// Validate checks p for values the model cannot run with. The error is a
// *ValidationError naming the profile and the first bad key.
func (p *Profile) Validate() error {
	for _, check := range []func() error{p.checkNumbers, p.checkKinds, p.checkPositive, p.checkLevels, p.checkDevSlp, p.checkBursts, p.checkHDD} {
		if err := check(); err != nil {
			return err
		}
	}
	return nil
}

// bad is a ValidationError for key.
func (p *Profile) bad(key, format string, a ...any) error {
	return &ValidationError{Profile: p.Name, Key: key, Msg: fmt.Sprintf(format, a...)}
}

// checkNumbers: every numeric field finite, not negative, within its
// limit.
func (p *Profile) checkNumbers() error {
	for _, f := range p.numbers() {
		if math.IsNaN(f.v) || math.IsInf(f.v, 0) {
			return p.bad(f.key, "%v is not a finite number", f.v)
		}
		if f.v < 0 {
			return p.bad(f.key, "%g must not be negative", f.v)
		}
		if l, ok := limits[f.key]; ok && f.v > l.max {
			return p.bad(f.key, "%g is above %g (%s)", f.v, l.max, l.why)
		}
	}
	return nil
}

// checkKinds: the name, the noise, the form factor and the rails.
func (p *Profile) checkKinds() error {
	if p.Name == "" {
		return p.bad("name", "missing")
	}
	if k, msg := p.Noise.validate(); k != "" {
		return p.bad("noise."+k, "%s", msg)
	}
	switch p.FormFactor {
	case "2.5", "3.5":
	default:
		return p.bad("form_factor", "%q is not one of 2.5, 3.5", p.FormFactor)
	}
	switch p.RailSet() {
	case Rails5V, Rails5V12V:
	default:
		return p.bad("rails", "%q is not one of 5v, 5v+12v", p.Rails)
	}
	return nil
}

// checkPositive: the fields every drive needs above 0.
func (p *Profile) checkPositive() error {
	positive := []struct {
		key string
		v   float64
		why string
	}{
		{"active_idle_w", float64(p.ActiveIdleW), "a powered drive draws something"},
		{"partial_w", float64(p.PartialW), "a powered drive draws something"},
		{"slumber_w", float64(p.SlumberW), "a powered drive draws something"},
		{"read_w_per_mbps", p.ReadWPerMBps, "reads cost power"},
		{"write_w_per_mbps", p.WriteWPerMBps, "writes cost power"},
		{"peak_write_w", float64(p.PeakWriteW), "the active ceiling"},
		{"max_read_mbps", p.MaxReadMBps, "transfers take time"},
		{"max_write_mbps", p.MaxWriteMBps, "transfers take time"},
		{"partial_exit_us", p.PartialExitUs, "leaving Partial takes time"},
		{"slumber_exit_ms", p.SlumberExitMs, "leaving Slumber takes time"},
	}
	for _, c := range positive {
		if c.v == 0 {
			return p.bad(c.key, "missing or 0 (must be > 0: %s)", c.why)
		}
	}
	return nil
}

// checkLevels: partial, slumber and peak write in order about active idle.
func (p *Profile) checkLevels() error {
	if p.PartialW > p.ActiveIdleW {
		return p.bad("partial_w", "%v is above active_idle_w %v", p.PartialW, p.ActiveIdleW)
	}
	if p.SlumberW > p.PartialW {
		return p.bad("slumber_w", "%v is above partial_w %v", p.SlumberW, p.PartialW)
	}
	if p.PeakWriteW < p.ActiveIdleW {
		return p.bad("peak_write_w", "%v is below active_idle_w %v", p.PeakWriteW, p.ActiveIdleW)
	}
	return nil
}

// checkDevSlp: a supported DevSlp's floor and timings; a broken one must
// claim support.
func (p *Profile) checkDevSlp() error {
	if p.DevSlpSupported {
		if p.DevSlpW > p.SlumberW {
			return p.bad("devslp_w", "%v is above slumber_w %v (DevSlp is the deepest state)", p.DevSlpW, p.SlumberW)
		}
		if p.DevSlpExitMs == 0 {
			return p.bad("devslp_exit_ms", "missing or 0 (must be > 0: leaving DevSlp takes time)")
		}
		if p.DetoMs == 0 {
			return p.bad("deto_ms", "missing or 0 (must be > 0; nominal 20)")
		}
		if p.DevSlpExitMs > p.DetoMs {
			return p.bad("devslp_exit_ms", "%g is above deto_ms %g (the drive must answer within DETO)", p.DevSlpExitMs, p.DetoMs)
		}
		if p.MdatMs == 0 {
			return p.bad("mdat_ms", "missing or 0 (must be > 0; nominal 10)")
		}
	} else if p.DevSlpBroken {
		return p.bad("devslp_broken", "set but devslp_supported is false (a broken DevSlp must claim support)")
	}
	return nil
}

// checkBursts: a wake spike and GC bursts need their length (and power).
func (p *Profile) checkBursts() error {
	if p.WakeSpikeW > 0 && p.WakeSpikeMs == 0 {
		return p.bad("wake_spike_ms", "missing or 0 while wake_spike_w is %v", p.WakeSpikeW)
	}
	if p.GCEveryS > 0 {
		if p.GCMs == 0 {
			return p.bad("gc_ms", "missing or 0 while gc_every_s is %g", p.GCEveryS)
		}
		if p.GCW == 0 {
			return p.bad("gc_w", "missing or 0 while gc_every_s is %g", p.GCEveryS)
		}
	}
	return nil
}

// checkHDD: a 5v+12v drive's spindle; standby only on one.
func (p *Profile) checkHDD() error {
	if p.HDD() {
		if p.SpinupMs == 0 {
			return p.bad("spinup_ms", "missing or 0 (must be > 0 for a 5v+12v drive)")
		}
		if p.SpinupW == 0 {
			return p.bad("spinup_w", "missing or 0 (must be > 0 for a 5v+12v drive)")
		}
		if p.SpindleW == 0 {
			return p.bad("spindle_w", "missing or 0 (must be > 0 for a 5v+12v drive)")
		}
		if p.SpindleW > p.SlumberW {
			return p.bad("spindle_w", "%v is above slumber_w %v (the spindle's 12 V draw is part of every spinning state)", p.SpindleW, p.SlumberW)
		}
		if p.StandbyW > p.SlumberW {
			return p.bad("standby_w", "%v is above slumber_w %v", p.StandbyW, p.SlumberW)
		}
	} else if p.StandbyAfterS > 0 {
		return p.bad("standby_after_s", "set on a 5v-only drive (standby stops a spindle)")
	}
	return nil
}

type numField struct {
	key string
	v   float64
}

func (p *Profile) numbers() []numField {
	return []numField{
		{"active_idle_w", float64(p.ActiveIdleW)}, {"partial_w", float64(p.PartialW)},
		{"slumber_w", float64(p.SlumberW)}, {"devslp_w", float64(p.DevSlpW)},
		{"read_w_per_mbps", p.ReadWPerMBps}, {"write_w_per_mbps", p.WriteWPerMBps},
		{"peak_write_w", float64(p.PeakWriteW)}, {"max_read_mbps", p.MaxReadMBps},
		{"max_write_mbps", p.MaxWriteMBps}, {"partial_exit_us", p.PartialExitUs},
		{"slumber_exit_ms", p.SlumberExitMs}, {"devslp_exit_ms", p.DevSlpExitMs},
		{"deto_ms", p.DetoMs}, {"mdat_ms", p.MdatMs}, {"ready_ms", p.ReadyMs},
		{"hipm_partial_after_ms", p.HipmPartialAfterMs}, {"dipm_partial_after_ms", p.DipmPartialAfterMs},
		{"dipm_slumber_after_ms", p.DipmSlumberAfterMs}, {"dito_ms", p.DitoMs},
		{"wake_spike_w", float64(p.WakeSpikeW)}, {"wake_spike_ms", p.WakeSpikeMs},
		{"noise_ma", p.NoiseMA}, {"gc_every_s", p.GCEveryS}, {"gc_ms", p.GCMs}, {"gc_w", float64(p.GCW)},
		{"spinup_ms", p.SpinupMs}, {"spinup_w", float64(p.SpinupW)}, {"spindle_w", float64(p.SpindleW)},
		{"active_12v_share", p.Active12VShare}, {"standby_after_s", p.StandbyAfterS},
		{"standby_w", float64(p.StandbyW)},
	}
}

// limits are the upper bounds of the model space (docs/drive-profiles.md,
// "Parameter space"): beyond them a value is a typo or a unit mistake (mW
// for W, µs for ms), or cannot be represented where the model's value goes.
var limits = func() map[string]struct {
	max float64
	why string
} {
	type lim = struct {
		max float64
		why string
	}
	m := map[string]lim{
		"read_w_per_mbps":  {1, "W per MB/s"},
		"write_w_per_mbps": {1, "W per MB/s"},
		"max_read_mbps":    {600, "SATA 6 Gb/s carries at most 600 MB/s"},
		"max_write_mbps":   {600, "SATA 6 Gb/s carries at most 600 MB/s"},
		"partial_exit_us":  {10000, "µs; the spec asks < 10"},
		"slumber_exit_ms":  {1000, "ms; the spec asks < 10"},
		"devslp_exit_ms":   {1000, "ms; it must be within deto_ms"},
		"deto_ms":          {1000, "ms; log 30h page 08h holds up to 255"},
		"mdat_ms":          {31, "ms; MDAT is a 5-bit field"},
		"dito_ms":          {1023, "ms; DITO is a 10-bit field of PxDEVSLP"},
		"ready_ms":         {60000, "ms"},
		"wake_spike_ms":    {1000, "ms"},
		"noise_ma":         {100, "mA"},
		"gc_every_s":       {86400, "s"},
		"gc_ms":            {60000, "ms"},
		"spinup_ms":        {60000, "ms"},
		"standby_after_s":  {86400, "s"},
		"active_12v_share": {1, "a fraction"},
	}
	for _, k := range []string{"hipm_partial_after_ms", "dipm_partial_after_ms", "dipm_slumber_after_ms"} {
		m[k] = lim{60000, "ms"}
	}
	// A SATA power connector carries 4.5 A per rail (3 pins of 1.5 A):
	// 22.5 W at 5 V plus 54 W at 12 V.
	for _, k := range []string{"active_idle_w", "partial_w", "slumber_w", "devslp_w", "peak_write_w",
		"wake_spike_w", "gc_w", "spinup_w", "spindle_w", "standby_w"} {
		m[k] = lim{76.5, "W; a SATA power connector carries 4.5 A per rail"}
	}
	return m
}()
