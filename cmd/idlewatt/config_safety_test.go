package main

import (
	"bytes"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/spf13/viper"
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
		err := checkConfigFile(cfg, "fuzz.yaml")
		if err != nil {
			var ce *codedError
			if !errors.As(err, &ce) || ce.code != exitUsage || !strings.Contains(err.Error(), "fuzz.yaml") {
				t.Fatalf("config check error %v is not a usage error naming the file", err)
			}
			return
		}
		rc, _, err := measureConfig(testCmd("measure", cfg))
		if err != nil {
			var ce *codedError
			if !errors.As(err, &ce) || ce.code == exitOK {
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

// FuzzParseDuration: the one duration grammar never panics, and what it
// accepts prints back (time.Duration.String) to the same value.
func FuzzParseDuration(f *testing.F) {
	for _, s := range []string{"5", "1.5", "0", "500ms", "-5s", "1h30m", "NaN", "1e300", "9223372036", "0x10", "+Inf", "1e-9", ".5h"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		d, err := parseDuration(s)
		if err != nil {
			return
		}
		back, err := parseDuration(d.String())
		if err != nil || back != d {
			t.Fatalf("%q → %v → %q → %v, %v", s, d, d.String(), back, err)
		}
		var v time.Duration
		if err := (durationValue{d: &v}).Set(s); (err == nil) != (d >= 0) {
			t.Fatalf("flag Set(%q) = %v for %v", s, err, d)
		}
	})
}
