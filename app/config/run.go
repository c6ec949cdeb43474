package config

// The set-ups of the commands that run the rig, decoded from the
// configuration and their settings, checked before anything is opened.

import (
	"math"
	"strconv"
	"strings"
	"time"

	"github.com/idlewatt/idlewatt/app/rig"
	"github.com/idlewatt/idlewatt/capture"
	"github.com/idlewatt/idlewatt/internal/settings"
	"github.com/idlewatt/idlewatt/internal/textsafe"
	"github.com/idlewatt/idlewatt/meter/registry"
	nvmesim "github.com/idlewatt/idlewatt/states/nvme/sim"
)

// Bounds of the battery: section (a laptop has well under 1 kWh and 1 kW):
// 1e308 Wh made the battery life +Inf, which measure.json cannot hold, and
// was found after the whole run.
const maxBatteryWh, maxPlatformW = 1e6, 1e6

// Measure is the set-up of measure (and the base of devslp verify): the
// whole configuration, its battery: section, the user's profiles and the
// drivers' settings (g), with the defaults, validated. who is the command
// ("idlewatt measure").
func Measure(src Source, g settings.Getter, who string) (rig.Config, rig.Plan, error) {
	var rc rig.Config
	plan := rig.Plan{Workload: true, DevSlp: true}
	if err := Decode(src, "", &rc); err != nil {
		return rc, plan, err
	}
	if err := Decode(src, "battery", &plan.Battery); err != nil {
		return rc, plan, err
	}
	if b := plan.Battery; !(b.CapacityWh >= 0) || !(b.PlatformIdleW >= 0) || math.IsInf(b.CapacityWh+b.PlatformIdleW, 0) {
		return rc, plan, settings.Usagef("config: battery.capacity_wh %g and battery.platform_idle_w %g must be numbers ≥ 0", b.CapacityWh, b.PlatformIdleW)
	}
	if b := plan.Battery; b.CapacityWh > maxBatteryWh || b.PlatformIdleW > maxPlatformW {
		return rc, plan, settings.Usagef("config: battery.capacity_wh %g (at most %g) or battery.platform_idle_w %g (at most %g) is implausible",
			b.CapacityWh, float64(maxBatteryWh), b.PlatformIdleW, float64(maxPlatformW))
	}
	var err error
	if rc.Profiles, err = Profiles(src); err != nil {
		return rc, plan, settings.Input(err)
	}
	if rc.Meter.Settings, err = registry.Read(g, rc.Meter.Rate); err != nil {
		return rc, plan, err
	}
	if len(rc.Drives) == 0 {
		return rc, plan, settings.Usagef("%s: no drives configured; see docs/config.md (or run 'idlewatt demo')", who)
	}
	return rc, plan, validate(&rc, "config")
}

// validate fills c's defaults and checks it, naming the config in the
// message (what: "config", "demo").
func validate(c *rig.Config, what string) error {
	c.Defaults()
	if err := c.Validate(); err != nil {
		return settings.Usagef("%s: %w", what, err)
	}
	return nil
}

// DevSlpVerify is devslp verify's set-up: measure's without the workload
// and the idle phases, with --cycles and --max-cycles (config
// devslp.cycles, devslp.max_cycles; 10 cycles when neither says).
func DevSlpVerify(src Source, g settings.Getter, who string) (rig.Config, rig.Plan, error) {
	rc, plan, err := Measure(src, g, who)
	if err != nil {
		return rc, plan, err
	}
	plan.Workload = false
	rc.Workload.Trace = "none"
	for _, o := range []struct {
		flag string
		to   *int
	}{{"cycles", &rc.DevSlp.Cycles}, {"max-cycles", &rc.DevSlp.MaxCycles}} {
		if n, err := g.Int(o.flag); err != nil {
			return rc, plan, err
		} else if n < 0 {
			return rc, plan, settings.Usagef("devslp verify: --%s %d is negative", o.flag, n)
		} else if n > 0 {
			*o.to = n
		}
		if rc.DevSlp.Cycles == 0 {
			rc.DevSlp.Cycles = 10
		}
	}
	rc.Idle = 0
	if err := rc.Validate(); err != nil { // the DevSlp settings, now with the cycles
		return rc, plan, settings.Usagef("config: %w", err)
	}
	return rc, plan, nil
}

// Idle is idle's set-up: the configuration with --meter, --port,
// --sysfs-root and the drivers' settings, no workload, and one drive named
// after a one-port meter when the configuration names none.
func Idle(src Source, g settings.Getter) (rig.Config, error) {
	var rc rig.Config
	if err := Decode(src, "", &rc); err != nil {
		return rc, err
	}
	if k := g.String("meter"); k != "" {
		rc.Meter.Kind = k
	}
	if p := g.String("port"); p != "" {
		rc.Meter.Port = p
	}
	if s := g.String("sysfs-root"); s != "" {
		rc.SysfsRoot = s
	}
	var err error
	if rc.Profiles, err = Profiles(src); err != nil {
		return rc, settings.Input(err)
	}
	mo, err := registry.Read(g, rc.Meter.Rate)
	if err != nil {
		return rc, err
	}
	if err := registry.Foreign(rc.Meter.Kind, g); err != nil {
		return rc, err
	}
	rc.Meter.Settings = mo
	if d, ok := registry.Lookup(rc.Meter.Kind); ok && len(rc.Drives) == 0 && d.OnePort {
		rc.Drives = []rig.DriveConfig{{Name: rc.Meter.Kind, Port: 1}}
	}
	rc.Workload.Trace = "none"
	rc.Policy = ""
	return rc, validate(&rc, "config")
}

// Demo is demo's set-up (the reference review's, rig's Demo), with the
// simulated NVMe drive --nvme names on port 2 when given, and the user's
// profiles.
func Demo(src Source, g settings.Getter) (rig.Config, rig.Plan, error) {
	rc := demo()
	plan := rig.Plan{Workload: true, DevSlp: true, Battery: rig.Battery{CapacityWh: 45, PlatformIdleW: 4.5}}
	if g.Changed("nvme") {
		name := g.String("nvme")
		p, ok := nvmesim.ProfileByName(name)
		if !ok {
			var names []string
			for _, p := range nvmesim.Profiles() {
				names = append(names, p.Name)
			}
			return rc, plan, settings.Usagef("--nvme: no simulated NVMe profile %q (have %s)", name, strings.Join(names, ", "))
		}
		// On an M.2 interposer behind the hub's 3.3 V rail, in place of
		// the 256 GB SATA drive: the same phases play on both; it is
		// programmed as Linux does by default (APST for a 100000 µs
		// latency tolerance, ASPM powersupersave) and has no DevSlp.
		rc.Drives[1] = rig.DriveConfig{Name: p.Identify.Model + " (simulated NVMe)", Port: 2, NVMe: name, SizeBytes: 1 << 30}
	}
	var err error
	if rc.Profiles, err = Profiles(src); err != nil {
		return rc, plan, settings.Input(err)
	}
	return rc, plan, validate(&rc, "demo")
}

// demo reproduces the reference review set-up: the two JMF667H A19
// drives, active idle with the link kept up, PCMark-7-like bursts, DevSlp.
func demo() rig.Config {
	return rig.Config{
		Meter:    rig.MeterConfig{Kind: "emulator", Rate: 10000},
		Emulator: rig.EmulatorConfig{Seed: 1},
		Drives: []rig.DriveConfig{
			{Name: "JMF667H 128GB (Toshiba A19)", Port: 1, Profile: "jmf667h-128-a19", SizeBytes: 1 << 30},
			{Name: "JMF667H 256GB (Toshiba A19)", Port: 2, Profile: "jmf667h-256-a19", SizeBytes: 1 << 30},
		},
		// Reviews measure active idle with the link up; DevSlp cycles need
		// Slumber first, which DIPM gives without the HBA's own DevSlp timer.
		Policy: "max_performance",
		Workload: rig.WorkloadConfig{Trace: "pcmark7", App: "all", Scale: 0.1,
			Timing: "compress-idle=1500ms", QD: 1, Seed: 7},
		Idle: 4 * time.Second,
		DevSlp: rig.DevSlpConfig{Cycles: 3, Policy: "med_power_with_dipm",
			Settle: 800 * time.Millisecond, Hold: 300 * time.Millisecond, Return: 500 * time.Millisecond},
	}
}

// DevSlpVerifyFlags are devslp verify's own settings (with rig.RunFlags).
var DevSlpVerifyFlags = []settings.Flag{
	{Name: "cycles", Key: "devslp.cycles", Kind: settings.Int, Help: "DevSlp cycles (default: devslp.cycles, else 10)"},
	{Name: "max-cycles", Key: "devslp.max_cycles", Kind: settings.Int, Help: "run more cycles, up to this many, while the entry latency is not resolved to devslp.entry_u95 (default: devslp.max_cycles, else --cycles)"},
}

// DemoFlags are demo's own settings (with rig.RunFlags).
var DemoFlags = []settings.Flag{
	{Name: "nvme", Kind: settings.String, NoOptDefault: "980pro-1tb", Help: "put a simulated NVMe drive (980pro-1tb, 660p-1tb) on port 2, on the hub's 3.3 V rail, in place of the 256 GB SATA drive"},
}

// RecordDrives names the drives on the ports of a plain recording from
// the configuration's drives[] (name, port, profile, target) and names
// (--drive-name PORT=NAME), which win: a plain record then says the
// drive's name, not "port 1", everywhere.
func RecordDrives(src Source, names []string) ([]capture.DriveInfo, error) {
	var cfg []rig.DriveConfig
	if err := Decode(src, "drives", &cfg); err != nil {
		return nil, err
	}
	var ds []capture.DriveInfo
	at := map[int]int{}
	for k, d := range cfg {
		if d.Port <= 0 {
			return nil, settings.Usagef("config drives[%d].port: %d, want a port from 1", k, d.Port)
		}
		if _, dup := at[d.Port]; dup {
			return nil, settings.Usagef("config drives[%d].port: port %d is named twice", k, d.Port)
		}
		at[d.Port] = len(ds)
		ds = append(ds, capture.DriveInfo{Port: d.Port, Name: d.Name, Profile: d.Profile, Target: d.Target, Model: d.Model, Firmware: d.Firmware})
	}
	named := map[int]string{}
	for _, full := range names {
		p, name, ok := strings.Cut(full, "=")
		nv := textsafe.Clip(full, 80) // quoted in messages
		port, err := strconv.Atoi(strings.TrimSpace(p))
		if !ok || err != nil || port <= 0 || strings.TrimSpace(name) == "" {
			return nil, settings.Usagef("--drive-name %q: want PORT=NAME, e.g. 1=\"Samsung 870 EVO\"", nv)
		}
		if prev, dup := named[port]; dup { // the last one silently won
			return nil, settings.Usagef("--drive-name %q: port %d is already named %q", nv, port, prev)
		}
		if n := len(strings.TrimSpace(name)); n > capture.MaxNameBytes {
			return nil, settings.Usagef("--drive-name for port %d: %d bytes, at most %d (a capture header's name bound)", port, n, capture.MaxNameBytes)
		}
		named[port] = strings.TrimSpace(name)
		if k, ok := at[port]; ok {
			ds[k].Name = strings.TrimSpace(name)
			continue
		}
		at[port] = len(ds)
		ds = append(ds, capture.DriveInfo{Port: port, Name: strings.TrimSpace(name)})
	}
	return ds, nil
}
