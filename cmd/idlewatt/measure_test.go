package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/spf13/cobra"
	"github.com/spf13/viper"

	"github.com/idlewatt/idlewatt/app/config"
	"github.com/idlewatt/idlewatt/app/rig"
)

// loadConfigFile reads path into a fresh config and returns a measure
// command running with it.
func loadConfigFile(t *testing.T, path string) *cobra.Command {
	t.Helper()
	cfg := viper.New()
	cfg.SetConfigFile(path)
	cfg.SetConfigType("yaml")
	if err := cfg.ReadInConfig(); err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	return testCmd("measure", cfg)
}

func TestExampleConfigsValidate(t *testing.T) {
	t.Parallel()
	files, _ := filepath.Glob("../../fixtures/configs/*.yaml")
	if len(files) < 3 {
		t.Fatalf("example configs missing: %v", files)
	}
	for _, f := range files {
		t.Run(filepath.Base(f), func(t *testing.T) {
			cmd := loadConfigFile(t, f)
			rc, _, err := measureConfig(cmd)
			if err != nil {
				t.Fatalf("%s: %v", f, err)
			}
			if len(rc.Drives) == 0 || rc.Drives[0].Port != 1 {
				t.Fatalf("%s: drives not decoded: %+v", f, rc.Drives)
			}
		})
	}
	cmd := loadConfigFile(t, "../../fixtures/configs/emulator.yaml")
	rc, plan, _ := measureConfig(cmd)
	if rc.Idle.Seconds() != 4 || rc.DevSlp.Hold.Milliseconds() != 300 || rc.Workload.Scale != 0.1 || plan.Battery.CapacityWh != 45 {
		t.Errorf("durations/numbers not decoded: idle %v hold %v scale %v battery %+v", rc.Idle, rc.DevSlp.Hold, rc.Workload.Scale, plan.Battery)
	}
	cmd = loadConfigFile(t, "../../fixtures/configs/profiles.yaml")
	rc, _, _ = measureConfig(cmd)
	if p, ok := rc.Profiles["my-ssd"]; !ok || float64(p.DevSlpW) != 0.0015 || float64(p.ActiveIdleW) != 0.2 {
		t.Errorf("user profile not decoded with its base: %+v", rc.Profiles["my-ssd"])
	}
}

func TestBadConfigsNameTheKey(t *testing.T) {
	t.Parallel()
	cases := []struct{ yaml, want string }{
		{"meter: {kind: emulator}\ndrives: [{port: 9, profile: ssd340}]\n", "drives[0].port"},
		{"meter: {kind: emulator}\ndrives: [{port: 1, profile: ssd-340}]\n", "drives[0].profile"},
		{"meter: {kind: emulator}\ndrives: [{port: 1, profile: ssd340}]\npolicy: min_powr\n", "did you mean"},
		{"meter: {kind: hub}\ndrives: [{port: 1, target: /tmp/x}]\n", "meter.port"},
		{"meter: {kind: emulator}\ndrives: [{port: 1, profile: ssd340}, {port: 1, profile: ssd340}]\n", "configured twice"},
		{"meter: {kind: emulator}\ndrives: [{port: 1, profile: ssd340}]\nidle: forever\n", "idle"},
		{"meter: {kind: emulator}\n", "no drives"},
		{"meter: {kind: emulator}\ndrives: [{port: 1, profile: ssd340, expect: {devslp_mw: -1}}]\n", "drives[0].expect.devslp_mw"},
	}
	dir := t.TempDir()
	for i, c := range cases {
		p := filepath.Join(dir, "c.yaml")
		if err := os.WriteFile(p, []byte(c.yaml), 0o644); err != nil {
			t.Fatal(err)
		}
		cmd := loadConfigFile(t, p)
		_, _, err := measureConfig(cmd)
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("case %d: error %v, want it to mention %q", i, err, c.want)
			continue
		}
		if classify(err, true) != exitUsage {
			t.Errorf("case %d: %v is not a usage error (exit 2)", i, err)
		}
	}
}

// TestExpectKeysChecked: drives[].expect's keys are checked like every
// other key — a misspelt one is named with a suggestion, a value of the
// wrong kind is refused, a dotted key written flat is not taken for it.
func TestExpectKeysChecked(t *testing.T) {
	t.Parallel()
	for _, c := range []struct{ yaml, want string }{
		{"drives: [{port: 1, profile: ssd340, expect: {devslp_mx: 5}}]\n", "unknown key drives[0].expect.devslp_mx (did you mean expect.devslp_mw?)"},
		{"drives: [{port: 1, profile: ssd340, expect: {devslp_mw: five}}]\n", "drives[0].expect.devslp_mw"},
		{"drives: [{port: 1, profile: ssd340, expect: 5}]\n", "drives[0].expect: want a mapping"},
		{"drives: [{port: 1, profile: ssd340, expect.devslp_mw: 5}]\n", "unknown key drives[0].expect.devslp_mw"},
	} {
		cfg := viper.New()
		cfg.SetConfigType("yaml")
		if err := cfg.ReadConfig(strings.NewReader(c.yaml)); err != nil {
			t.Fatal(err)
		}
		err := config.CheckFile(cfg, "c.yaml")
		if err == nil || !strings.Contains(err.Error(), c.want) || classify(err, true) != exitUsage {
			t.Errorf("%q: error %v, want a usage error saying %q", c.yaml, err, c.want)
		}
	}
	cfg := viper.New()
	cfg.SetConfigType("yaml")
	if err := cfg.ReadConfig(strings.NewReader("drives: [{port: 1, profile: ssd340, expect: {devslp_mw: 5, active_idle_w: 0.4}}]\n")); err != nil {
		t.Fatal(err)
	}
	if err := config.CheckFile(cfg, "c.yaml"); err != nil {
		t.Errorf("a good expect block: %v", err)
	}
}

// measureConfig is measure's set-up from cmd's configuration.
func measureConfig(cmd *cobra.Command) (rig.Config, rig.Plan, error) {
	return config.Measure(cliOf(cmd).cfg, get(cmd), cmd.CommandPath())
}
