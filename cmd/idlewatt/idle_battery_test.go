package main

import (
	"context"
	"encoding/json"
	"io/fs"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// copyTree copies the regular files and directories under src to dst.
func copyTree(t *testing.T, src, dst string) {
	t.Helper()
	err := filepath.WalkDir(src, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(src, p)
		if d.IsDir() {
			return os.MkdirAll(filepath.Join(dst, rel), 0o755)
		}
		b, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		return os.WriteFile(filepath.Join(dst, rel), b, 0o644)
	})
	if err != nil {
		t.Fatal(err)
	}
}

// laptopDraw is the whole laptop's draw the test's gauge reports under each
// policy (µW, as power_now holds it): min_power lets the links sleep.
var laptopDraw = map[string]string{"max_performance": "6000000", "min_power": "4500000", "med_power_with_dipm": "5000000"}

// TestIdleBattery runs `idle --meter battery` on a copy of the discharging
// power_now fixture with a simulated host's sysfs tree: the laptop is the
// drive. A goroutine acts out the laptop, setting power_now from the
// policy host0's file holds, so each policy's idle power is what the gauge
// said while it was in force. The policies in force before the run must be
// back afterwards. The gauge is polled once a second (idle opens meters
// with their default options), so a 1.5 s window holds at least one poll
// however late a loaded machine runs the ticker.
func TestIdleBattery(t *testing.T) {
	if testing.Short() {
		t.Skip("runs idle for about 3 s")
	}
	dir := t.TempDir()
	bat, sys, out := filepath.Join(dir, "bat"), filepath.Join(dir, "sys"), filepath.Join(dir, "out")
	copyTree(t, "../../fixtures/battery/power_now", bat)
	if _, e, code := run(t, context.Background(), "states", "simulate", sys); code != 0 {
		t.Fatalf("states simulate: %s", e)
	}
	policyFiles, _ := filepath.Glob(filepath.Join(sys, "devices", "*", "*", "*", "host*", "scsi_host", "host*", "link_power_management_policy"))
	if len(policyFiles) != 2 {
		t.Fatalf("simulated tree has %d policy files, want 2", len(policyFiles))
	}
	before := map[string]string{}
	for _, p := range policyFiles {
		before[p] = readPolicy(t, p)
	}
	power := filepath.Join(bat, "class", "power_supply", "BAT0", "power_now")

	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() {
		defer close(done)
		last := ""
		for ctx.Err() == nil {
			b, err := os.ReadFile(policyFiles[0])
			if p := strings.TrimSpace(string(b)); err == nil && p != last && laptopDraw[p] != "" {
				// Rename, so the meter never reads a half-written file.
				tmp := power + ".tmp"
				if os.WriteFile(tmp, []byte(laptopDraw[p]+"\n"), 0o644) == nil && os.Rename(tmp, power) == nil {
					last = p
				}
			}
			time.Sleep(2 * time.Millisecond)
		}
	}()
	stdout, stderr, code := run(t, context.Background(), "idle", "--meter", "battery", "--port", bat,
		"--sysfs-root", sys, "--policies", "max_performance,min_power", "--settle", "100ms", "--measure", "1500ms",
		"--out", out, "--json", "--quiet")
	cancel()
	<-done
	if code != 0 {
		t.Fatalf("idle exit %d: %s%s", code, stdout, stderr)
	}
	var res idleResult
	if err := json.Unmarshal([]byte(stdout), &res); err != nil {
		t.Fatalf("idle --json: %v\n%s", err, stdout)
	}
	if len(res.Results) != 2 {
		t.Fatalf("%d results, want one per policy: %+v", len(res.Results), res.Results)
	}
	t.Logf("results: %+v", res.Results)
	for i, want := range []struct {
		policy  string
		w, save float64
	}{{"max_performance", 6, 0}, {"min_power", 4.5, 1.5}} {
		ip := res.Results[i]
		if ip.Policy != want.policy || ip.Name != "battery" || ip.Port != 1 || ip.Samples < 1 {
			t.Errorf("result %d: %+v, want %s on the battery", i, ip, want.policy)
			continue
		}
		if math.Abs(ip.MeanW-want.w) > 1e-6 || math.Abs(ip.SavingW-want.save) > 1e-6 || ip.MinW != ip.MaxW {
			t.Errorf("%s: mean %v W (%v–%v), saving %v W; want %v W, saving %v W",
				ip.Policy, ip.MeanW, ip.MinW, ip.MaxW, ip.SavingW, want.w, want.save)
		}
	}
	for _, p := range policyFiles {
		if got := readPolicy(t, p); got != before[p] {
			t.Errorf("%s: policy %q after idle, want %q restored", p, got, before[p])
		}
	}
	if _, err := os.Stat(filepath.Join(out, "idle.json")); err != nil {
		t.Error(err)
	}
}
