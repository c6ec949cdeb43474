package main

import (
	"context"
	"encoding/json"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/idlewatt/idlewatt/states/drivesim"
	"github.com/idlewatt/idlewatt/states/nvme"
	nvmesim "github.com/idlewatt/idlewatt/states/nvme/sim"
)

// TestDemoNVMe runs `demo --nvme` end to end (the emulated protocol-3 hub
// with the JMF667H 128 GB SATA drive on port 1 and the simulated 980 PRO
// on port 2's 3.3 V rail) and checks that one report holds both drives
// with the powers their models predict: the SATA drive's active idle is
// its profile's, the NVMe drive's is the model's deepest APST state (PS4
// with the link in L1.2), its idle phases lie between PS4 and PS0's idle
// draw, and the workload raises it.
func TestDemoNVMe(t *testing.T) {
	if testing.Short() {
		t.Skip("a whole demo run (about 45 s)")
	}
	out := filepath.Join(t.TempDir(), "run")
	so, se, code := run(t, context.Background(), "demo", "--nvme", "--out", out, "--quiet")
	if code != 0 {
		t.Fatalf("demo --nvme: exit %d\n%s\n%s", code, so, lastLines(se, 5))
	}
	var rep struct {
		Drives []struct {
			Name        string   `json:"name"`
			Port        int      `json:"port"`
			Profile     string   `json:"profile"`
			Interface   string   `json:"interface"`
			Rails       []string `json:"rails"`
			ActiveIdleW float64  `json:"active_idle_w"`
			AverageW    float64  `json:"average_w"`
			Phases      []struct {
				Name     string  `json:"name"`
				AverageW float64 `json:"average_w"`
			} `json:"phases"`
		} `json:"drives"`
		Notes []string `json:"notes"`
	}
	b, err := os.ReadFile(filepath.Join(out, "report.json"))
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(b, &rep); err != nil {
		t.Fatal(err)
	}
	if len(rep.Drives) != 2 {
		t.Fatalf("%d drives in report.json, want 2", len(rep.Drives))
	}
	sata, nv := rep.Drives[0], rep.Drives[1]
	if sata.Port != 1 || sata.Interface != "" || nv.Port != 2 || nv.Interface != "nvme" || nv.Profile != "980pro-1tb" {
		t.Fatalf("drives: %+v / %+v", sata, nv)
	}
	if !slices.Contains(nv.Rails, "3v3") {
		t.Errorf("NVMe drive rails %v: no 3v3", nv.Rails)
	}
	phase := func(ph []struct {
		Name     string  `json:"name"`
		AverageW float64 `json:"average_w"`
	}, name string) float64 {
		for _, p := range ph {
			if p.Name == name {
				return p.AverageW
			}
		}
		t.Fatalf("no phase %s", name)
		return 0
	}

	sp, err := drivesim.Lookup(sata.Profile, nil)
	if err != nil {
		t.Fatal(err)
	}
	if want := float64(sp.ActiveIdleW); math.Abs(sata.ActiveIdleW-want) > 0.01*want {
		t.Errorf("SATA active idle %.5f W, profile %.5f W", sata.ActiveIdleW, want)
	}

	// The model's truth, programmed as the rig programs it.
	p, _ := nvmesim.ProfileByName("980pro-1tb")
	d := nvmesim.NewHubDrive(p, nvme.DefaultPSMaxLatencyUs, 0, 1).Drive()
	deepest := float64(d.Power(time.Hour))
	ps0Idle := float64(d.Power(0))
	t.Logf("NVMe active idle %.4f mW, model PS4+L1.2 %.4f mW, PS0 idle %.1f mW; SATA active idle %.5f W (profile %.5f W)",
		nv.ActiveIdleW*1e3, deepest*1e3, ps0Idle*1e3, sata.ActiveIdleW, float64(sp.ActiveIdleW))
	if math.Abs(nv.ActiveIdleW-deepest) > 0.05*deepest {
		t.Errorf("NVMe active idle %.4f mW, model's deepest state %.4f mW", nv.ActiveIdleW*1e3, deepest*1e3)
	}
	for _, name := range []string{"idle", "idle:after-workload"} {
		if w := phase(nv.Phases, name); !(w >= deepest*0.95 && w < ps0Idle) {
			t.Errorf("NVMe %s phase average %.4f mW outside [PS4 %.4f mW, PS0 idle %.1f mW)", name, w*1e3, deepest*1e3, ps0Idle*1e3)
		}
	}
	if wl, idle := phase(nv.Phases, "workload:pcmark7:all"), phase(nv.Phases, "idle"); !(wl > 2*idle) {
		t.Errorf("NVMe workload average %.4f W not above its idle %.4f W: the workload did not play on it", wl, idle)
	}
	if !slices.ContainsFunc(rep.Notes, func(s string) bool { return strings.Contains(s, "NVMe drive: state detection") }) {
		t.Errorf("no note that NVMe state detection is not run: %q", rep.Notes)
	}
	md, _ := os.ReadFile(filepath.Join(out, "report.md"))
	if !strings.Contains(string(md), "Samsung SSD 980 PRO 1TB") || !strings.Contains(string(md), "JMF667H 128GB") {
		t.Errorf("report.md does not name both drives")
	}
	if !strings.Contains(so, "DevSlp port 2: NOT SUPPORTED") {
		t.Errorf("headline: NVMe DevSlp not reported as not supported:\n%s", so)
	}
}

func TestDemoNVMeUnknownProfile(t *testing.T) {
	_, se, code := run(t, context.Background(), "demo", "--nvme=nope", "--out", filepath.Join(t.TempDir(), "run"), "--quiet")
	if code != 2 || !strings.Contains(se, `--nvme: no simulated NVMe profile "nope"`) || !strings.Contains(se, "980pro-1tb") {
		t.Errorf("exit %d: %s", code, se)
	}
}
