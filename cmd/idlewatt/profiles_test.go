package main

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"sync"
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

// TestCommandLinesAtOnce runs command lines with different configs at the
// same time in one process: each sees its own config (a cli value per
// command line), the one with a bad config alone fails, and outputs do not
// mix. With the old global viper the configs overwrote each other.
func TestCommandLinesAtOnce(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	confs := map[string]string{"a": "profiles:\n  lab-a:\n    base: ssd340\n", "b": "profiles:\n  lab-b:\n    base: hdd-7200\n",
		"bad": "profiles:\n  lab-x:\n    base: nope\n"}
	for name, body := range confs {
		if err := os.WriteFile(filepath.Join(dir, name+".yaml"), []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	type result struct {
		conf, out, errOut string
		code              int
	}
	results := make(chan result, 30)
	var wg sync.WaitGroup
	for i := range 30 {
		conf := []string{"a", "b", "bad"}[i%3]
		wg.Add(1)
		go func() {
			defer wg.Done()
			var o, e bytes.Buffer
			c := newCLI(&o, &e)
			_, err := c.execute(context.Background(), []string{"profiles", "--json", "--config", filepath.Join(dir, conf+".yaml")})
			code := c.exitCode(err)
			results <- result{conf, o.String(), e.String(), code}
		}()
	}
	wg.Wait()
	close(results)
	for r := range results {
		hasA, hasB := strings.Contains(r.out, `"lab-a"`), strings.Contains(r.out, `"lab-b"`)
		switch {
		case r.conf == "bad":
			if r.code != 2 || !strings.Contains(r.errOut, "profiles.lab-x.base") || r.out != "" {
				t.Errorf("bad config: exit %d, stdout %d bytes, stderr %q", r.code, len(r.out), r.errOut)
			}
		case r.code != 0 || hasA != (r.conf == "a") || hasB != (r.conf == "b"):
			t.Errorf("config %s: exit %d, lab-a listed %v, lab-b listed %v: %s", r.conf, r.code, hasA, hasB, r.errOut)
		}
	}
}
