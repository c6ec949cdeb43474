package rig

import (
	"fmt"
	"math"
	"os"
	"slices"
	"strings"
	"time"

	"github.com/idlewatt/idlewatt/internal/outfile"
	"github.com/idlewatt/idlewatt/meter/hub"
	"github.com/idlewatt/idlewatt/meter/hub/hubemu"
	"github.com/idlewatt/idlewatt/meter/registry"
	"github.com/idlewatt/idlewatt/states/alpm"
	"github.com/idlewatt/idlewatt/states/devslp"
	"github.com/idlewatt/idlewatt/states/drivesim"
	nvmesim "github.com/idlewatt/idlewatt/states/nvme/sim"
	"github.com/idlewatt/idlewatt/units"
	"github.com/idlewatt/idlewatt/workload/gen"
	"github.com/idlewatt/idlewatt/workload/replay"
	"github.com/idlewatt/idlewatt/workload/trace"
)

// Config is one measurement set-up. cmd/idlewatt decodes it from the config
// file (keys in mapstructure tags; docs/config.md) and flags.
type Config struct {
	Meter     MeterConfig    `mapstructure:"meter"`
	Emulator  EmulatorConfig `mapstructure:"emulator"`
	Drives    []DriveConfig  `mapstructure:"drives"`
	Policy    string         `mapstructure:"policy"`     // ALPM policy during the run; "" leaves it alone
	SysfsRoot string         `mapstructure:"sysfs_root"` // default /sys (emulator: its simulated tree)
	Workload  WorkloadConfig `mapstructure:"workload"`
	Idle      time.Duration  `mapstructure:"idle"` // idle phase before and after the workload
	// ActiveIdle, with a Policy other than max_performance, is an idle
	// phase under max_performance first (phase idle:max_performance):
	// a drive that leaves active idle within ms of each I/O under a
	// power-saving policy shows no active-idle level in its idle phases,
	// and the report's active_idle_w would be null. 0: none.
	ActiveIdle time.Duration `mapstructure:"active_idle"`
	// ActiveIdleMax > ActiveIdle: after ActiveIdle, the phase runs on (in
	// steps of 500 ms, up to ActiveIdleMax) while the live estimate of some
	// drive's active idle has a 95 % half-width wider than
	// ActiveIdleU95Pct % of its level (default 0.5: half the ±1 % a
	// reviewer quotes). 0 = ActiveIdle, a fixed length.
	ActiveIdleMax    time.Duration `mapstructure:"active_idle_max"`
	ActiveIdleU95Pct float64       `mapstructure:"active_idle_u95_pct"`
	DevSlp           DevSlpConfig  `mapstructure:"devslp"`
	// KeepScratch keeps the emulator's scratch drive images (drive-pN.img
	// in the output directory); by default they are removed when the run
	// ends.
	KeepScratch bool `mapstructure:"keep_scratch"`
	// Out says what the run may replace in its output directory
	// (internal/outfile): without Out.Overwrite the directory must be new
	// or empty. Inputs are added by the rig (config, trace, targets).
	Out outfile.Options `mapstructure:"-" json:"-"`
	// Observer, if set, sees every record as it is written (live metrics).
	Observer Observer `mapstructure:"-" json:"-"`
	// Profiles are user-defined drive profiles (drivesim), by name.
	Profiles map[string]drivesim.Profile `mapstructure:"-"`
}

// MeterConfig selects the meter.
type MeterConfig struct {
	// Kind is "emulator" (the built-in emulated hub with simulated drives)
	// or a meter/registry kind ("hub", "ppk2", "battery", "line", "scpi").
	Kind string  `mapstructure:"kind"`
	Port string  `mapstructure:"port"`    // the meter's port (default the kind's; emulator: its pty)
	Rate float64 `mapstructure:"rate_hz"` // samples/s per channel; default 10000 (emulator), else the meter's default
	// Settings are the kind's own options (meter/registry.Settings; the
	// command line fills them from its flags and the meter.* keys).
	Settings registry.Settings `mapstructure:"-" json:"-"`
}

// EmulatorConfig tunes the built-in emulated hub.
type EmulatorConfig struct {
	Seed        int64         `mapstructure:"seed"`
	DriftPPM    float64       `mapstructure:"drift_ppm"`
	Offset      time.Duration `mapstructure:"offset" settings:"signed"` // either sign (a clock offset)
	CorruptRate float64       `mapstructure:"corrupt_rate"`             // per byte
	// Formats, CurrentLSB and WideLSB are the hub's sample formats and
	// nominal current LSBs (hubemu.Options; zero: the defaults). Not
	// config keys: the accuracy campaign draws them.
	Formats             uint8         `mapstructure:"-"`
	CurrentLSB, WideLSB [3]units.Amps `mapstructure:"-"`
	// Accuracy is what the hub states of its channels' accuracy
	// (READ_ACCURACY; hubemu.Options.Accuracy): the campaign's drift
	// family states the calibration its gain and offset errors lie within.
	// Not a config key.
	Accuracy []hub.AccEntry `mapstructure:"-"`
}

// DriveConfig is one drive on one meter port.
type DriveConfig struct {
	Name    string `mapstructure:"name"`
	Port    int    `mapstructure:"port"`    // meter port, 1-based
	Profile string `mapstructure:"profile"` // drivesim profile: the simulated drive (emulator) or known levels (real)
	// Sim, if set, is the simulated drive itself (emulator only; the
	// accuracy campaign's drawn drives): the emulator builds it and the
	// simulated host reports what the drive would (IDENTIFY, MDAT, DETO),
	// but it is no known profile — nothing else in the rig, the capture or
	// the analysis sees it, and Profile (if set) names no profile.
	Sim *drivesim.Profile `mapstructure:"-" json:"-"`
	// NVMe is a simulated NVMe drive's profile (states/nvme/sim:
	// 980pro-1tb, 660p-1tb) on the port's 3.3 V rail, an M.2 interposer;
	// emulator only, in place of Profile.
	NVMe   string `mapstructure:"nvme"`
	Target string `mapstructure:"target"` // block device or file for the workload (emulator: backing file, default a scratch image in the output dir)
	Host   string `mapstructure:"host"`   // SATA host for the policy, e.g. host1 (emulator: automatic)
	// Model and Firmware name a real drive in the capture's run metadata.
	Model    string `mapstructure:"model"`
	Firmware string `mapstructure:"firmware"`
	// AllowDestructive must name Target exactly for writes to a block device.
	AllowDestructive string `mapstructure:"allow_destructive"`
	SizeBytes        int64  `mapstructure:"size_bytes"` // workload span (file targets are created this size); default 1 GiB
	// Expect are figures the user knows beforehand (a datasheet's): the
	// capture records them and reports show them beside the measured
	// values; no estimator reads them (analysis.Expectation).
	Expect ExpectConfig `mapstructure:"expect"`
}

// ExpectConfig is drives[].expect: declared figures, 0 = none.
type ExpectConfig struct {
	DevSlpMW    float64 `mapstructure:"devslp_mw" json:"devslp_mw,omitempty"`         // the DevSlp floor, mW
	ActiveIdleW float64 `mapstructure:"active_idle_w" json:"active_idle_w,omitempty"` // active idle, W
}

// WorkloadConfig is the workload played on every drive.
type WorkloadConfig struct {
	Trace  string  `mapstructure:"trace"`  // "pcmark7" (generated), "none", or a trace file (any supported format)
	App    string  `mapstructure:"app"`    // pcmark7 application, or "all"
	Scale  float64 `mapstructure:"scale"`  // pcmark7 bursts multiplier (0.1 = a tenth)
	Timing string  `mapstructure:"timing"` // recorded | afap | compress-idle=DUR
	Speed  float64 `mapstructure:"speed"`  // trace-time divisor
	QD     int     `mapstructure:"qd"`
	Seed   int64   `mapstructure:"seed"`
	Engine string  `mapstructure:"engine"` // uring | sync | "" (best)
}

// DevSlpConfig is the DevSlp cycle phase.
type DevSlpConfig struct {
	Cycles int `mapstructure:"cycles"` // 0 = no DevSlp phase
	// Policy is the ALPM policy for the DevSlp phase ("" = keep the run's):
	// the drive must reach Slumber before the pin is asserted, which needs a
	// policy with DIPM or HIPM Slumber, and min_power would let the HBA assert
	// DevSlp by itself after DITO.
	Policy     string        `mapstructure:"policy"`
	Settle     time.Duration `mapstructure:"settle"`
	Hold       time.Duration `mapstructure:"hold"`
	Return     time.Duration `mapstructure:"return"`
	EntryBound time.Duration `mapstructure:"entry_bound"`
	LimitMW    float64       `mapstructure:"limit_mw"`
	MDAT       time.Duration `mapstructure:"mdat"` // default: the profile's, else 10 ms
	DETO       time.Duration `mapstructure:"deto"` // default: the profile's, else 20 ms
	// MaxCycles > Cycles: after Cycles, run more cycles (up to MaxCycles)
	// while the live estimate of the entry latency's 95 % half-width is
	// wider than EntryU95 (default 1 ms). 0 = Cycles, a fixed count.
	MaxCycles int           `mapstructure:"max_cycles"`
	EntryU95  time.Duration `mapstructure:"entry_u95"`
	// EntryHold > 0: the cycles after Cycles hold the pin only as long as
	// the entry needs (at least EntryHold, at most Hold): entry cycles
	// (devslp.Options.EntryHold). 0 = every cycle holds for Hold.
	EntryHold time.Duration `mapstructure:"entry_hold"`
}

// Defaults fills unset fields.
func (c *Config) Defaults() {
	if c.Meter.Kind == "" {
		c.Meter.Kind = "emulator"
	}
	if c.Meter.Rate == 0 && c.Meter.Kind == "emulator" {
		c.Meter.Rate = 10000
	}
	if c.Workload.Trace == "" {
		c.Workload.Trace = "pcmark7"
	}
	if c.Workload.App == "" {
		c.Workload.App = "all"
	}
	if c.Workload.Scale == 0 {
		c.Workload.Scale = 1
	}
	if c.Workload.Timing == "" {
		c.Workload.Timing = "recorded"
	}
	if c.Workload.Speed == 0 {
		c.Workload.Speed = 1
	}
	if c.Workload.QD == 0 {
		c.Workload.QD = 1
	}
	for i := range c.Drives {
		d := &c.Drives[i]
		if d.SizeBytes == 0 {
			d.SizeBytes = 1 << 30
		}
		if d.Name == "" {
			d.Name = d.Profile
			if d.Name == "" {
				d.Name = fmt.Sprintf("port %d", d.Port)
			}
		}
	}
}

// Validate checks the set-up before anything is opened; errors name the
// config key.
func (c *Config) Validate() error {
	if c.Meter.Kind != "emulator" {
		d, ok := registry.Lookup(c.Meter.Kind)
		if !ok {
			return fmt.Errorf("meter.kind: %q is not a meter kind (emulator, %s)", c.Meter.Kind, strings.Join(registry.Kinds(), ", "))
		}
		if c.Meter.Port == "" && d.Port == "" {
			return fmt.Errorf("meter.port: required for meter kind %s (a serial port such as /dev/ttyACM0)", c.Meter.Kind)
		}
	}
	if !(c.Meter.Rate >= 0) || math.IsInf(c.Meter.Rate, 0) {
		return fmt.Errorf("meter.rate_hz: %g is not a rate (≥ 0 samples/s; 0 = the meter's default)", c.Meter.Rate)
	}
	if c.Meter.Kind == "emulator" && c.Meter.Rate != 0 && !slices.Contains(hubemu.DefaultRates, units.Hertz(c.Meter.Rate)) {
		// Found only once the emulator ran, after its truth files were written.
		return fmt.Errorf("meter.rate_hz: %g Hz is not a rate of the emulated hub (%v)", c.Meter.Rate, strings.Trim(fmt.Sprint(hubemu.DefaultRates), "[]"))
	}
	if err := c.Emulator.validate(); err != nil {
		return err
	}
	if len(c.Drives) == 0 {
		return fmt.Errorf("drives: no drive configured (a list of {name, port, profile, target})")
	}
	seen := map[int]bool{}
	for i, d := range c.Drives {
		key := fmt.Sprintf("drives[%d]", i)
		if d.Port < 1 || d.Port > 8 {
			return fmt.Errorf("%s.port: %d is not a hub port (1–8)", key, d.Port)
		}
		if seen[d.Port] {
			return fmt.Errorf("%s.port: port %d is configured twice", key, d.Port)
		}
		seen[d.Port] = true
		if d.SizeBytes < 1<<20 {
			return fmt.Errorf("%s.size_bytes: %d is below 1 MiB", key, d.SizeBytes)
		}
		for k, x := range map[string]float64{"devslp_mw": d.Expect.DevSlpMW, "active_idle_w": d.Expect.ActiveIdleW} {
			if !(x >= 0) || x > 1e6 || math.IsInf(x, 0) {
				return fmt.Errorf("%s.expect.%s: %g is not a declared figure (> 0, or 0 for none)", key, k, x)
			}
		}
		if d.NVMe != "" {
			if err := c.validateNVMe(key, d); err != nil {
				return err
			}
		} else if c.Meter.Kind == "emulator" {
			if d.Profile == "" && d.Sim == nil {
				return fmt.Errorf("%s.profile: the emulator needs a drive profile (see idlewatt profiles)", key)
			}
		} else if d.Target == "" && c.Workload.Trace != "none" {
			return fmt.Errorf("%s.target: a block device or file is needed to play the workload", key)
		}
		if fi, err := os.Stat(d.Target); d.Target != "" && err == nil && fi.IsDir() {
			return fmt.Errorf("%s.target: %s is a directory; name a block device or a file", key, d.Target)
		}
		if d.Sim != nil {
			if err := d.Sim.Validate(); err != nil {
				return fmt.Errorf("%s (simulated drive): %w", key, err)
			}
		} else if d.Profile != "" {
			if _, err := drivesim.Lookup(d.Profile, c.Profiles); err != nil {
				return fmt.Errorf("%s.profile: %w", key, err)
			}
		}
	}
	for key, p := range map[string]string{"policy": c.Policy, "devslp.policy": c.DevSlp.Policy} {
		if p != "" {
			if _, err := alpm.ParseWritablePolicy(p); err != nil {
				return fmt.Errorf("%s: %w", key, err)
			}
		}
	}
	if err := c.Workload.validate(); err != nil {
		return err
	}
	if c.ActiveIdle < 0 {
		return fmt.Errorf("active_idle: %v is negative", c.ActiveIdle)
	}
	if c.ActiveIdleMax != 0 && c.ActiveIdleMax < c.ActiveIdle {
		return fmt.Errorf("active_idle_max: %v is shorter than active_idle (%v); 0 = as long as active_idle", c.ActiveIdleMax, c.ActiveIdle)
	}
	if u := c.ActiveIdleU95Pct; u != 0 && !(u > 0 && u < 100) {
		return fmt.Errorf("active_idle_u95_pct: %v is not a percentage above 0 and below 100 (default %v)", u, DefaultActiveIdleU95Pct)
	}
	if c.Idle < 0 {
		return fmt.Errorf("idle: %v is negative", c.Idle)
	}
	if c.SysfsRoot != "" && c.Meter.Kind != "emulator" {
		if fi, err := os.Stat(c.SysfsRoot); err != nil {
			return fmt.Errorf("sysfs_root: %w", err)
		} else if !fi.IsDir() {
			return fmt.Errorf("sysfs_root: %s is not a directory", c.SysfsRoot)
		}
	}
	return c.validateDevSlp()
}

// maxNVMePort: with a 3.3 V rail a hub has at most 5 ports (3 rails × 5
// ports ≤ 16 channels, docs/hub-protocol.md).
const maxNVMePort = 5

// validateNVMe checks a simulated NVMe drive's entry.
func (c *Config) validateNVMe(key string, d DriveConfig) error {
	if c.Meter.Kind != "emulator" {
		return fmt.Errorf("%s.nvme: a simulated NVMe drive needs meter.kind emulator (have %s)", key, c.Meter.Kind)
	}
	if d.Profile != "" {
		return fmt.Errorf("%s.nvme and %s.profile: give one (a simulated NVMe or SATA drive)", key, key)
	}
	if _, ok := nvmesim.ProfileByName(d.NVMe); !ok {
		var names []string
		for _, p := range nvmesim.Profiles() {
			names = append(names, p.Name)
		}
		return fmt.Errorf("%s.nvme: no simulated NVMe profile %q (have %s)", key, d.NVMe, strings.Join(names, ", "))
	}
	for _, o := range c.Drives {
		if o.Port > maxNVMePort {
			return fmt.Errorf("%s.nvme: with an NVMe drive the hub has a 3.3 V rail and at most %d ports (a drive is on port %d)", key, maxNVMePort, o.Port)
		}
	}
	return nil
}

func (e EmulatorConfig) validate() error {
	switch {
	case math.IsNaN(e.DriftPPM) || math.Abs(e.DriftPPM) > 100000:
		return fmt.Errorf("emulator.drift_ppm: %g ppm is not a plausible clock drift (±100000 at most)", e.DriftPPM)
	case !(e.CorruptRate >= 0 && e.CorruptRate <= 1):
		return fmt.Errorf("emulator.corrupt_rate: %g is not a probability (0–1)", e.CorruptRate)
	}
	return nil
}

// validate checks the workload up front, so that a bad value is found
// before the recording starts, not when the workload phase reaches it.
func (w WorkloadConfig) validate() error {
	if w.QD < 1 || w.QD > 1024 {
		return fmt.Errorf("workload.qd: %d is outside 1–1024", w.QD)
	}
	if !(w.Speed > 0) || math.IsInf(w.Speed, 0) {
		return fmt.Errorf("workload.speed: %g must be a positive number", w.Speed)
	}
	if w.Speed < replay.MinSpeed || w.Speed > replay.MaxSpeed {
		return fmt.Errorf("workload.speed: %g is outside %g–%g", w.Speed, replay.MinSpeed, replay.MaxSpeed)
	}
	if !(w.Scale > 0) || math.IsInf(w.Scale, 0) {
		return fmt.Errorf("workload.scale: %g must be a positive number (0.1 = a tenth as long)", w.Scale)
	}
	if w.Scale > gen.MaxScale {
		return fmt.Errorf("workload.scale: %g is above %g", w.Scale, float64(gen.MaxScale))
	}
	if _, err := replay.ParseTiming(w.Timing); err != nil {
		return fmt.Errorf("workload.timing: %w", err)
	}
	switch w.Engine {
	case "", "uring", "sync":
	default:
		return fmt.Errorf("workload.engine: %q is not an engine (uring, sync, or empty for the best)", w.Engine)
	}
	switch {
	case strings.EqualFold(w.Trace, "none"):
	case strings.EqualFold(w.Trace, "pcmark7"):
		if _, err := gen.PCMark7(w.App, w.Seed, 1<<20, w.Scale); err != nil {
			return fmt.Errorf("workload.app: %w (known: %s)", err, strings.Join(gen.AppNames(), ", "))
		}
	case w.Trace == "":
		return fmt.Errorf("workload.trace: empty")
	default:
		fi, err := os.Stat(w.Trace)
		if err != nil {
			return fmt.Errorf("workload.trace: %w", err)
		}
		if !fi.Mode().IsRegular() {
			return fmt.Errorf("workload.trace: %s is not a regular file", w.Trace)
		}
		f, err := trace.Open(w.Trace, "")
		if err != nil {
			return fmt.Errorf("workload.trace: %w", err)
		}
		f.Close()
	}
	return nil
}

// validateDevSlp checks the DevSlp phase's settings for every drive the
// way the phase will use them (with the profile's MDAT and DETO), before
// the recording whose end they would otherwise fail.
func (c *Config) validateDevSlp() error {
	d := c.DevSlp
	if d.Cycles < 0 {
		return fmt.Errorf("devslp.cycles: %d is negative", d.Cycles)
	}
	if d.MaxCycles != 0 && d.MaxCycles < d.Cycles {
		return fmt.Errorf("devslp.max_cycles: %d is fewer than devslp.cycles (%d); 0 = as many as devslp.cycles", d.MaxCycles, d.Cycles)
	}
	for _, kv := range []struct {
		key string
		v   time.Duration
	}{{"devslp.settle", d.Settle}, {"devslp.hold", d.Hold}, {"devslp.return", d.Return},
		{"devslp.entry_bound", d.EntryBound}, {"devslp.mdat", d.MDAT}, {"devslp.deto", d.DETO},
		{"devslp.entry_u95", d.EntryU95}, {"devslp.entry_hold", d.EntryHold}} {
		if kv.v < 0 {
			return fmt.Errorf("%s: %v is negative", kv.key, kv.v)
		}
	}
	if !(d.LimitMW >= 0) || math.IsInf(d.LimitMW, 0) {
		return fmt.Errorf("devslp.limit_mw: %g must be a positive number of milliwatts (0 = 5 mW)", d.LimitMW)
	}
	if d.Cycles == 0 {
		return nil
	}
	for i, dc := range c.Drives {
		prof := dc.Sim
		if p, err := drivesim.Lookup(dc.Profile, c.Profiles); prof == nil && err == nil && dc.Profile != "" {
			prof = &p
		}
		if err := d.options(prof).Validate(); err != nil {
			key := "devslp.hold / devslp.mdat"
			if d.EntryHold > 0 {
				key = "devslp.hold / devslp.entry_hold / devslp.mdat"
			}
			return fmt.Errorf("%s (drives[%d]): %w", key, i, err)
		}
	}
	return nil
}

// options is the phase's devslp.Options for a drive of profile p (nil:
// none known): the config's, with the profile's MDAT and DETO where the
// config leaves them unset.
func (c DevSlpConfig) options(p *drivesim.Profile) devslp.Options {
	o := devslp.Options{
		Cycles: c.Cycles, Settle: c.Settle, Hold: c.Hold, Return: c.Return, EntryBound: c.EntryBound,
		MDAT: c.MDAT, DETO: c.DETO, MaxCycles: c.MaxCycles, EntryU95: c.EntryU95, EntryHold: c.EntryHold,
	}
	if c.LimitMW > 0 {
		o.Limit = unitsMW(c.LimitMW)
	}
	if p != nil {
		if o.MDAT == 0 && p.MdatMs > 0 {
			o.MDAT = p.MDAT()
		}
		if o.DETO == 0 && p.DetoMs > 0 {
			o.DETO = p.DETO()
		}
	}
	return o
}
