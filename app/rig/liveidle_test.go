package rig

import (
	"context"
	"encoding/json"
	"math"
	"strings"
	"testing"
	"time"

	"github.com/idlewatt/idlewatt/states/drivesim"
)

// A noisy low-power SSD beside a quiet one: the active-idle phase runs on
// until the noisy drive's active idle is known to ±0.5 % (95 %), and the
// report's interval, over all the run's quiet time, is within it.
func TestActiveIdleRunsUntilResolved(t *testing.T) {
	t.Parallel() // the emulator runs in real time: most of the test is waiting
	if testing.Short() {
		t.Skip("end-to-end run on the emulator")
	}
	noisy, err := drivesim.Lookup("jmf667h-256-a19", nil)
	if err != nil {
		t.Fatal(err)
	}
	noisy.Name, noisy.NoiseMA = "noisy", 2.6
	noisy.ActiveIdleW, noisy.PartialW, noisy.SlumberW, noisy.DevSlpW = 0.0279, 0.0176, 0.0030, 0.0013
	run := func(maxD time.Duration) (*Result, float64) {
		cfg := Config{
			Meter: MeterConfig{Kind: "emulator", Rate: 10000},
			Drives: []DriveConfig{{Name: "noisy", Port: 1, Profile: "noisy", SizeBytes: 64 << 20},
				{Name: "256", Port: 2, Profile: "jmf667h-256-a19", SizeBytes: 64 << 20}},
			Profiles:   map[string]drivesim.Profile{"noisy": noisy},
			Policy:     "min_power",
			Workload:   WorkloadConfig{Trace: "none"},
			ActiveIdle: 500 * time.Millisecond, ActiveIdleMax: maxD,
		}
		res, err := Run(context.Background(), cfg, t.TempDir(), Plan{})
		if err != nil {
			t.Fatal(err)
		}
		for _, ph := range res.Report.Drives[0].Phases {
			if ph.Name == "idle:max_performance" {
				return res, float64(ph.DurationS)
			}
		}
		t.Fatal("no idle:max_performance phase")
		return nil, 0
	}
	res, dur := run(6 * time.Second)
	d := res.Report.Drives[0]
	if d.ActiveIdleU95W == nil {
		t.Fatalf("no active-idle interval: %+v", d)
	}
	rel := 100 * *d.ActiveIdleU95W / d.ActiveIdleW
	t.Logf("phase %.2f s, active idle %.5f ± %.3f %% W (truth %.5f), notes %q", dur, d.ActiveIdleW, rel, float64(noisy.ActiveIdleW), res.Notes)
	if dur < 1 || dur > 6.3 {
		t.Errorf("active-idle phase %.2f s, want longer than active_idle (0.5 s), at most active_idle_max (6 s)", dur)
	}
	if rel > DefaultActiveIdleU95Pct {
		// What the report's interval was made of, for a failure seen once
		// in CI (±0.72 % against a live ±0.41 %) and not reproduced since.
		js, _ := json.Marshal(struct{ Uncertainty, Bursts, Quiet any }{d.Uncertainty, d.Bursts, d.Quiet})
		t.Errorf("active idle ±%.3f %%, want within ±%v %% after running on; %s, report notes %q",
			rel, DefaultActiveIdleU95Pct, js, res.Report.Notes)
	}
	if !strings.Contains(strings.Join(res.Notes, "\n"), "active-idle phase") {
		t.Errorf("no note on why the phase stopped: %q", res.Notes)
	}
	// Without active_idle_max the same drive is not resolved in 0.5 s.
	res, dur = run(0)
	d = res.Report.Drives[0]
	// The phase's length is wall-clock time on a loaded machine (0.78 s seen
	// at load 20 for 0.5 s asked): the check is that it was not extended
	// (the extension runs it to several seconds), not its exact length.
	if dur > 2 || d.ActiveIdleU95W == nil || 100**d.ActiveIdleU95W/d.ActiveIdleW <= DefaultActiveIdleU95Pct {
		u := math.NaN()
		if d.ActiveIdleU95W != nil {
			u = float64(*d.ActiveIdleU95W)
		}
		t.Errorf("fixed phase %.2f s gave ±%g W: the test does not need the extension", dur, u)
	}
}

// active_idle_max shorter than active_idle, or a percentage out of range,
// is refused naming the key.
func TestActiveIdleMaxBadInput(t *testing.T) {
	for _, c := range []struct {
		cfg  Config
		want string
	}{
		{Config{ActiveIdle: time.Second, ActiveIdleMax: 500 * time.Millisecond}, "active_idle_max"},
		{Config{ActiveIdle: time.Second, ActiveIdleU95Pct: -1}, "active_idle_u95_pct"},
		{Config{ActiveIdle: time.Second, ActiveIdleU95Pct: 100}, "active_idle_u95_pct"},
	} {
		c.cfg.Drives = []DriveConfig{{Name: "a", Port: 1, Profile: "jmf667h-256-a19"}}
		c.cfg.Defaults()
		err := c.cfg.Validate()
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%+v: %v, want an error naming %s", c.cfg, err, c.want)
		}
	}
}
