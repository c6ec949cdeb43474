package main

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func runProfilesCmd(t *testing.T, args ...string) (string, string, int) {
	t.Helper()
	return run(t, context.Background(), args...)
}

func TestProfilesListsBuiltinAndConfigured(t *testing.T) {
	t.Parallel()
	conf := filepath.Join(t.TempDir(), "c.yaml")
	os.WriteFile(conf, []byte("profiles:\n  lab-ssd:\n    base: ssd340\n    slumber_w: 0.03\n"), 0o644)
	out, errOut, code := runProfilesCmd(t, "profiles", "--json", "--config", conf)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	var doc struct {
		Profiles []struct {
			Name     string  `json:"name"`
			Source   string  `json:"source"`
			SlumberW float64 `json:"slumber_w"`
			DevSlpW  float64 `json:"devslp_w"`
		} `json:"profiles"`
	}
	if err := json.Unmarshal([]byte(out), &doc); err != nil {
		t.Fatal(err)
	}
	got := map[string]string{}
	for _, p := range doc.Profiles {
		got[p.Name] = p.Source
		if p.Name == "lab-ssd" && (p.SlumberW != 0.03 || p.DevSlpW != 0.0025) {
			t.Errorf("lab-ssd = %+v", p)
		}
	}
	if got["jmf667h-128-a19"] != "builtin" || got["hdd-7200"] != "builtin" || got["lab-ssd"] != "config" {
		t.Fatalf("profiles = %v", got)
	}
	out, _, code = runProfilesCmd(t, "profiles")
	if code != 0 || !strings.Contains(out, "broken-devslp") || !strings.Contains(out, "2.5 mW") {
		t.Fatalf("table (exit %d):\n%s", code, out)
	}
}

func TestProfilesBadConfigNamesKey(t *testing.T) {
	t.Parallel()
	conf := filepath.Join(t.TempDir(), "c.yaml")
	os.WriteFile(conf, []byte("profiles:\n  lab:\n    base: ssd340\n    devslp_w: 0.5\n"), 0o644)
	_, errOut, code := runProfilesCmd(t, "profiles", "--config", conf)
	if code != 2 || !strings.Contains(errOut, "profiles.lab.devslp_w") {
		t.Fatalf("exit %d: %s", code, errOut)
	}
}

func TestProfileDrivesPerPort(t *testing.T) {
	t.Parallel()
	cmd := testCmd("measure", nil)
	if _, err := profileDrives(cmd, []string{"ssd340", "hdd-7200", "x"}, 2, 1); err == nil {
		t.Fatal("3 profiles for 2 ports accepted")
	}
	d, err := profileDrives(cmd, []string{"hdd-7200"}, 3, 1)
	if err != nil || len(d) != 3 {
		t.Fatalf("%d drives, %v", len(d), err)
	}
	if _, err := profileDrives(cmd, []string{"nope"}, 1, 1); err == nil || !strings.Contains(err.Error(), "unknown drive profile") {
		t.Fatalf("unknown profile: %v", err)
	}
}
