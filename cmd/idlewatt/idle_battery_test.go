package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io/fs"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/idlewatt/idlewatt/app/rig"
	"github.com/idlewatt/idlewatt/states/nvme"
	nvmesim "github.com/idlewatt/idlewatt/states/nvme/sim"
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
	t.Parallel()
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
	var res rig.IdleResult
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

// TestIdleBatteryNVMe runs idle's NVMe mode with the battery meter on a
// simulated NVMe laptop: a goroutine acts out the laptop, setting
// power_now to a 5 W base plus the simulated 980 PRO's steady idle power
// (states/nvme/sim, under the APST table the kernel builds for the
// tolerance in force and the link states the ASPM policy allows), so each
// combination's idle power and saving must be the model's. Every NVMe and
// ASPM file must be back afterwards, byte for byte.
func TestIdleBatteryNVMe(t *testing.T) {
	t.Parallel()
	if testing.Short() {
		t.Skip("runs idle for about 7 s")
	}
	dir := t.TempDir()
	bat, sys, out := filepath.Join(dir, "bat"), filepath.Join(dir, "sys"), filepath.Join(dir, "out")
	copyTree(t, "../../fixtures/battery/power_now", bat)
	if _, e, code := run(t, context.Background(), "states", "simulate", sys, "--drives", "0", "--nvme", "980pro-1tb"); code != 0 {
		t.Fatalf("states simulate: %s", e)
	}
	before := treeBytes(t, sys)
	prof, _ := nvmesim.ProfileByName("980pro-1tb")
	model := func(tol string, policy string) float64 {
		tv, err := nvme.ParseTolerance(tol)
		if err != nil {
			return -1
		}
		plan := nvme.PlanAPST(prof.Identify, tv.Us, 0, nvme.ModuleParams{})
		d := nvmesim.New(prof)
		e := make([]nvme.APSTEntry, 32)
		copy(e, plan.Entries)
		d.SetAPST(0, plan.Enabled, e)
		switch policy {
		case "powersupersave", "default": // the simulated firmware left every link state on
			d.SetASPM(0, true, true)
		case "powersave":
			d.SetASPM(0, true, false)
		}
		return 5 + float64(d.Power(10*time.Second))
	}
	tolFile := filepath.Join(sys, "class/nvme/nvme0/power/pm_qos_latency_tolerance_us")
	polFile := filepath.Join(sys, "module/pcie_aspm/parameters/policy")
	power := filepath.Join(bat, "class", "power_supply", "BAT0", "power_now")
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() {
		defer close(done)
		last := ""
		for ctx.Err() == nil {
			tb, err1 := os.ReadFile(tolFile)
			pb, err2 := os.ReadFile(polFile)
			if err1 == nil && err2 == nil {
				pol, _ := nvme.ParseASPMPolicy(strings.TrimSpace(string(pb)))
				key := strings.TrimSpace(string(tb)) + "/" + pol.Current
				if w := model(strings.TrimSpace(string(tb)), pol.Current); key != last && w > 0 {
					tmp := power + ".tmp"
					if os.WriteFile(tmp, []byte(fmt.Sprintf("%d\n", int64(math.Round(w*1e6)))), 0o644) == nil && os.Rename(tmp, power) == nil {
						last = key
					}
				}
			}
			time.Sleep(2 * time.Millisecond)
		}
	}()
	stdout, stderr, code := run(t, context.Background(), "idle", "--meter", "battery", "--port", bat,
		"--sysfs-root", sys, "--nvme-latency-us", "0,100000", "--aspm", "performance,powersupersave",
		"--settle", "100ms", "--measure", "1500ms", "--out", out, "--json", "--quiet")
	cancel()
	<-done
	if code != 0 {
		t.Fatalf("idle exit %d: %s%s", code, stdout, stderr)
	}
	var res rig.IdleResult
	if err := json.Unmarshal([]byte(stdout), &res); err != nil {
		t.Fatalf("idle --json: %v\n%s", err, stdout)
	}
	type combo struct{ tol, pol string }
	want := []combo{{"0", "performance"}, {"0", "powersupersave"}, {"100000", "performance"}, {"100000", "powersupersave"}}
	if len(res.Results) != len(want) {
		t.Fatalf("%d results: %+v", len(res.Results), res.Results)
	}
	first := model(want[0].tol, want[0].pol)
	for i, c := range want {
		ip := res.Results[i]
		label := "nvme_latency_us=" + c.tol + ",aspm=" + c.pol
		w := model(c.tol, c.pol)
		t.Logf("%-45s measured %.4f W, model %.4f W, saving %.4f W", ip.Policy, ip.MeanW, w, ip.SavingW)
		if ip.Policy != label || ip.Samples < 1 || math.Abs(ip.MeanW-w) > 1e-6 || math.Abs(ip.SavingW-(first-w)) > 1e-6 {
			t.Errorf("result %d: %+v, want %s at %.6f W", i, ip, label, w)
		}
	}
	if string(treeBytes(t, sys)) != string(before) {
		t.Error("NVMe/ASPM files not restored after idle")
	}
	// Refusals before the rig opens.
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"--meter", "battery", "--port", bat, "--nvme-latency-us", "-1"}, "--nvme-latency-us"},
		{[]string{"--meter", "battery", "--port", bat, "--aspm", "fast"}, `unknown ASPM policy "fast"`},
		{[]string{"--config", "../../fixtures/configs/emulator.yaml", "--nvme-latency-us", "0"}, "the emulator has no simulated NVMe drive"},
		{[]string{"--meter", "battery", "--port", bat, "--aspm", "default", "--policies", "min_power"}, "not both"},
	} {
		_, e, code := run(t, context.Background(), append([]string{"idle", "--sysfs-root", sys, "--out", filepath.Join(dir, "x")}, tc.args...)...)
		if code != 2 || !strings.Contains(e, tc.want) {
			t.Errorf("%v: exit %d %q", tc.args, code, e)
		}
	}
}
