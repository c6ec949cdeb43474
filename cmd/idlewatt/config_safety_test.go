package main

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/spf13/viper"

	"github.com/idlewatt/idlewatt/app/config"
)

// FuzzConfig feeds arbitrary YAML through measure's config decoding and
// validation (measureConfig with a fresh viper config per input):
// any input must give a config or an error with an exit code, never a panic.
func FuzzConfig(f *testing.F) {
	files, _ := filepath.Glob("../../fixtures/configs/*.yaml")
	for _, p := range files {
		b, err := os.ReadFile(p)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(b)
	}
	for _, s := range []string{
		"meter: {kind: emulator}\ndrives: [{port: 9, profile: ssd340}]\n",
		"meter: {kind: emulator}\ndrives: [{port: 1, profile: ssd340}]\npolicy: min_powr\n",
		"meter: {kind: hub}\ndrives: [{port: 1, target: /tmp/x}]\n",
		"meter: {kind: emulator}\ndrives: [{port: 1, profile: ssd340, size_bytes: -1}]\nidle: -1s\n",
		"meter: {kind: emulator}\ndrives: [{port: 1, profile: ssd340}]\nworkload: {qd: 0, speed: .nan}\n",
		"drives: {port: 1}\nprofiles: [1, 2]\nbattery: x\n",
		"profiles:\n  my: {base: ssd340, devslp_w: 1e400}\ndrives: [{port: 1, profile: my}]\nmeter: {kind: emulator}\n",
		"a: &a [*a]\n",
		"meter: {kind: emulator, rate_hz: -5}\ndrives: [{port: 1, profile: ssd340, target: ../../etc/passwd}]\n",
		"",
		"- 1\n- 2\n",
		"idel: 1s\nmeter: {kind: emulator}\ndrives: [{port: 1, profile: ssd340, nmae: x}]\n",
		"meter: 5\nrecord: {overwrite: yes please}\nidle: 5\n",
		"meter: {kind: emulator}\ndrives: [{port: 1, profile: ssd340, expect: {devslp_mw: -1, active_idle_w: 1e400}}]\n",
		"meter: {kind: emulator}\ndrives: [{port: 1, profile: ssd340, expect: {devslp_mx: 5}}, {port: 2, profile: ssd340, expect: [1]}]\n",
		"workload: {scale: -1}\ndevslp: {hold: -300ms, cycles: 2}\nmeter: {kind: emulator}\ndrives: [{port: 1, profile: ssd340}]\n",
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		cfg := viper.New()
		cfg.SetConfigType("yaml")
		if err := cfg.ReadConfig(bytes.NewReader(data)); err != nil {
			return // not YAML, or not a mapping: loadConfig reports it
		}
		err := config.CheckFile(cfg, "fuzz.yaml")
		if err != nil {
			if classify(err, true) != exitUsage || !strings.Contains(err.Error(), "fuzz.yaml") {
				t.Fatalf("config check error %v is not a usage error naming the file", err)
			}
			return
		}
		rc, _, err := measureConfig(testCmd("measure", cfg))
		if err != nil {
			if classify(err, true) == exitOK {
				t.Fatalf("config error %v carries no exit code", err)
			}
			return
		}
		// A config that validates has what measure relies on.
		if len(rc.Drives) == 0 {
			t.Fatalf("validated config without drives: %q", data)
		}
		for _, d := range rc.Drives {
			if d.Port < 1 || d.Port > 8 {
				t.Fatalf("validated config with drive port %d", d.Port)
			}
		}
	})
}
