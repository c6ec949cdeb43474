package main

import (
	"context"
	"encoding/json"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/idlewatt/idlewatt/app/rig"
)

// TestIdleLeavesOutGCBursts runs `idle` on the emulated hub with a 200 mW
// drive that draws 1 W in 120 ms GC bursts every 1.5 s (on average): the idle
// power per policy is the quiet level, within 1 % of the model's 200 mW and
// inside its stated interval, with the bursts reported beside it; the plain
// mean (bursts in) is well above it.
func TestIdleLeavesOutGCBursts(t *testing.T) {
	t.Parallel()
	if testing.Short() {
		t.Skip("runs idle on the emulator for about 8 s")
	}
	dir := t.TempDir()
	cfg := filepath.Join(dir, "gc.yaml")
	if err := os.WriteFile(cfg, []byte(`meter:
  kind: emulator
  rate_hz: 10000
emulator:
  seed: 3
profiles:
  gc-ssd:
    base: jmf667h-256-a19
    gc_every_s: 1.5
    gc_ms: 120
    gc_w: 1.0
drives:
  - name: GC SSD
    port: 1
    profile: gc-ssd
workload:
  trace: none
`), 0o644); err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(dir, "out")
	stdout, stderr, code := run(t, context.Background(), "idle", "--config", cfg, "--policies", "max_performance",
		"--settle", "500ms", "--measure", "6s", "--out", out, "--json")
	if code != 0 {
		t.Fatalf("idle exit %d: %s%s", code, stdout, stderr)
	}
	// The progress lines are the recorder's one format (record.ProgressLine):
	// label, elapsed time, phase, samples, the port's power.
	progress := 0
	for _, l := range strings.Split(stderr, "\n") {
		if strings.HasPrefix(l, "idle ") && strings.Contains(l, "  idle:max_performance") && strings.Contains(l, " samples  p1 ") {
			progress++
		}
	}
	if progress < 3 {
		t.Errorf("%d progress lines in the 6 s window, want about 6:\n%s", progress, stderr)
	}
	var res rig.IdleResult
	if err := json.Unmarshal([]byte(stdout), &res); err != nil {
		t.Fatalf("idle --json: %v\n%s", err, stdout)
	}
	if len(res.Results) != 1 {
		t.Fatalf("results %+v", res.Results)
	}
	ip := res.Results[0]
	t.Logf("%+v", ip)
	if ip.U95W == nil {
		t.Fatalf("no interval: %s", ip.Note)
	}
	const truth = 0.200
	if d := math.Abs(ip.MeanW - truth); d > 0.01*truth || d > *ip.U95W {
		t.Errorf("idle power %.5f ± %.5f W, model %.3f W", ip.MeanW, *ip.U95W, truth)
	}
	if ip.Bursts < 1 || ip.BurstShare <= 0 || ip.BurstEnergyJ <= 0 {
		t.Errorf("bursts not reported: %d, share %v, energy %v J", ip.Bursts, ip.BurstShare, ip.BurstEnergyJ)
	}
	if ip.AllMeanW < ip.MeanW+0.005 {
		t.Errorf("plain mean %.4f W barely above the quiet level %.4f W: the test saw no bursts to leave out", ip.AllMeanW, ip.MeanW)
	}
}
