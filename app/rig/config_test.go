package rig

import (
	"math"
	"strings"
	"testing"
	"time"
)

// TestValidateNamesEveryKey: every value is checked up front under its own
// key, so a bad one is found before a recording, not after it.
func TestValidateNamesEveryKey(t *testing.T) {
	base := func() Config {
		c := Config{Drives: []DriveConfig{{Port: 1, Profile: "ssd340"}}}
		return c
	}
	for _, c := range []struct {
		key string
		mod func(*Config)
	}{
		{"meter.rate_hz", func(c *Config) { c.Meter.Rate = math.NaN() }},
		{"meter.rate_hz", func(c *Config) { c.Meter.Rate = -1 }},
		{"emulator.drift_ppm", func(c *Config) { c.Emulator.DriftPPM = 1e6 }},
		{"emulator.corrupt_rate", func(c *Config) { c.Emulator.CorruptRate = 2 }},
		{"workload.scale", func(c *Config) { c.Workload.Scale = -1 }},
		{"workload.scale", func(c *Config) { c.Workload.Scale = math.Inf(1) }},
		{"workload.speed", func(c *Config) { c.Workload.Speed = math.NaN() }},
		{"workload.timing", func(c *Config) { c.Workload.Timing = "sometimes" }},
		{"workload.engine", func(c *Config) { c.Workload.Engine = "spdk" }},
		{"workload.app", func(c *Config) { c.Workload.App = "photoshop" }},
		{"workload.trace", func(c *Config) { c.Workload.Trace = "/nonexistent/x.trace" }},
		{"workload.trace", func(c *Config) { c.Workload.Trace = t.TempDir() }},
		{"devslp.hold", func(c *Config) { c.DevSlp.Hold = -300 * time.Millisecond }},
		{"devslp.settle", func(c *Config) { c.DevSlp.Settle = -time.Second }},
		{"devslp.hold / devslp.mdat", func(c *Config) { c.DevSlp.Cycles, c.DevSlp.Hold = 3, 5*time.Millisecond }},
		{"devslp.entry_hold", func(c *Config) { c.DevSlp.EntryHold = -time.Millisecond }},
		{"devslp.hold / devslp.entry_hold / devslp.mdat", func(c *Config) {
			c.DevSlp.Cycles, c.DevSlp.Hold, c.DevSlp.EntryHold = 3, 300*time.Millisecond, 400*time.Millisecond
		}},
		{"devslp.hold / devslp.entry_hold / devslp.mdat", func(c *Config) {
			c.DevSlp.Cycles, c.DevSlp.MDAT, c.DevSlp.EntryHold = 3, 20*time.Millisecond, 10*time.Millisecond
		}},
		{"devslp.limit_mw", func(c *Config) { c.DevSlp.LimitMW = math.NaN() }},
		{"idle", func(c *Config) { c.Idle = -time.Second }},
		{"drives[1].nvme", func(c *Config) { c.Drives = append(c.Drives, DriveConfig{Port: 2, NVMe: "970evo"}) }},
		{"drives[1].nvme and drives[1].profile", func(c *Config) {
			c.Drives = append(c.Drives, DriveConfig{Port: 2, NVMe: "980pro-1tb", Profile: "ssd340"})
		}},
		{"drives[1].nvme", func(c *Config) { c.Drives = append(c.Drives, DriveConfig{Port: 6, NVMe: "980pro-1tb"}) }},
		{"drives[1].nvme", func(c *Config) {
			c.Meter.Kind, c.Meter.Port, c.Workload.Trace = "hub", "/dev/null", "none"
			c.Drives = append(c.Drives, DriveConfig{Port: 2, NVMe: "980pro-1tb"})
		}},
		{"sysfs_root", func(c *Config) {
			c.Meter.Kind, c.Meter.Port, c.Workload.Trace, c.SysfsRoot = "hub", "/dev/null", "none", "/nonexistent"
		}},
	} {
		cfg := base()
		c.mod(&cfg)
		cfg.Defaults()
		err := cfg.Validate()
		if err == nil || !strings.HasPrefix(err.Error(), c.key+":") && !strings.HasPrefix(err.Error(), c.key+" ") {
			t.Errorf("%s: Validate() = %v, want an error naming the key", c.key, err)
		}
	}
	ok := base()
	ok.Defaults()
	if err := ok.Validate(); err != nil {
		t.Fatalf("a good config: %v", err)
	}
	ok.Drives = append(ok.Drives, DriveConfig{Port: 2, NVMe: "660p-1tb", SizeBytes: 1 << 30})
	if err := ok.Validate(); err != nil {
		t.Fatalf("a good config with an NVMe drive: %v", err)
	}
}

// TestRunWrites: the names a run writes, which an input in the run
// directory may not have when --overwrite lets the run write there.
func TestRunWrites(t *testing.T) {
	for _, n := range []string{"capture.iwcap", "report.md", "report.json", "summary.csv", "states.json", "measure.json", "idle.json", "truth-p3.jsonl", "devslp-p1.png", "drive-p12.img", "power.png"} {
		if !RunWrites(n) {
			t.Errorf("%s: not a run output", n)
		}
	}
	for _, n := range []string{"my.yaml", "capture.iwcap.bak", "truth-px.jsonl", "drive-p1.img.old", "notes.md"} {
		if RunWrites(n) {
			t.Errorf("%s: taken for a run output", n)
		}
	}
}
