package main

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"math"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/idlewatt/idlewatt/capture"
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
//
// It runs in parallel with the package's other tests: it spends most of its
// 45 s waiting on the emulated hub's real time. A host too loaded to read
// promptly makes the SATA drive's DevSlp verdict inconclusive, naming the
// overloaded host (exit 1); only that is excused.
func TestDemoNVMe(t *testing.T) {
	t.Parallel()
	if testing.Short() {
		t.Skip("a whole demo run (about 45 s)")
	}
	out := filepath.Join(t.TempDir(), "run")
	so, se, code := run(t, context.Background(), "demo", "--nvme", "--out", out, "--quiet")
	if code != 0 && !(code == 1 && strings.Contains(so, "overloaded host")) {
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
				Name        string   `json:"name"`
				AverageW    float64  `json:"average_w"`
				AverageU95W *float64 `json:"average_u95_w"`
				DurationS   float64  `json:"duration_s"`
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
	phase := func(name string) float64 {
		for _, p := range nv.Phases {
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
		if w := phase(name); !(w >= deepest*0.95 && w < ps0Idle) {
			t.Errorf("NVMe %s phase average %.4f mW outside [PS4 %.4f mW, PS0 idle %.1f mW)", name, w*1e3, deepest*1e3, ps0Idle*1e3)
		}
	}
	if wl, idle := phase("workload:pcmark7:all"), phase("idle"); !(wl > 2*idle) {
		t.Errorf("NVMe workload average %.4f W not above its idle %.4f W: the workload did not play on it", wl, idle)
	}

	// Against the model's truth (truth-p2.jsonl) over each phase's own
	// spans on the emulator's clock, within the report's 95 % uncertainty
	// of the phase average plus what the phase edges' clock uncertainty
	// (measure.json) can move the truth by.
	truth := readNVMeTruth(t, filepath.Join(out, "truth-p2.jsonl"), 2)
	spans, clockUnc := phaseSpans(t, out, "measure.json", nv.Port)
	for _, ph := range nv.Phases {
		if ph.Name != "idle" && ph.Name != "idle:after-workload" && ph.Name != "workload:pcmark7:all" {
			continue
		}
		sp := spans[ph.Name]
		if len(sp) == 0 {
			t.Errorf("phase %s: no spans in the capture", ph.Name)
			continue
		}
		want, ok := truthMean(truth, sp, 0)
		if !ok {
			t.Errorf("phase %s: the truth does not cover %v", ph.Name, sp)
			continue
		}
		edge := 0.0
		for _, d := range []time.Duration{-clockUnc, clockUnc} {
			if w, ok := truthMean(truth, sp, d); ok {
				edge = max(edge, math.Abs(w-want))
			}
		}
		if ph.AverageU95W == nil {
			t.Errorf("phase %s: no average_u95_w", ph.Name)
			continue
		}
		// Twice the 95 % interval (≈ 3.9 σ): a test of agreement, not of
		// coverage — at 1 × U95 each phase misses 5 % of runs by design (three
		// phases: one run in seven failed; seen in CI at 1.03 × U95). Coverage
		// is what the accuracy campaign measures.
		tol := 2**ph.AverageU95W + edge
		t.Logf("NVMe phase %-22s report %.5f mW ± %.5f (U95) vs truth %.5f mW (edges ±%v move it %.5f mW): error %+.5f mW",
			ph.Name, ph.AverageW*1e3, *ph.AverageU95W*1e3, want*1e3, clockUnc, edge*1e3, (ph.AverageW-want)*1e3)
		if math.Abs(ph.AverageW-want) > tol {
			t.Errorf("NVMe phase %s average %.5f mW, truth %.5f mW: off by more than %.5f mW", ph.Name, ph.AverageW*1e3, want*1e3, tol*1e3)
		}
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
	t.Parallel()
	_, se, code := run(t, context.Background(), "demo", "--nvme=nope", "--out", filepath.Join(t.TempDir(), "run"), "--quiet")
	if code != 2 || !strings.Contains(se, `--nvme: no simulated NVMe profile "nope"`) || !strings.Contains(se, "980pro-1tb") {
		t.Errorf("exit %d: %s", code, se)
	}
}

func readNVMeTruth(t *testing.T, path string, port int) []nvmesim.Segment {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	h, segs, err := nvmesim.ReadTruth(f)
	if err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	if h.Port != port || h.Profile != "980pro-1tb" {
		t.Errorf("%s: header %+v", path, h)
	}
	return segs
}

// phaseSpans returns each phase's spans for port on the emulator's clock
// (from its StatePhase event to the next one for the port, within the
// port's samples; the last open phase is left out) and the run's clock uncertainty, from measure.json
// and the capture.
func phaseSpans(t *testing.T, out, file string, port int) (map[string][][2]time.Duration, time.Duration) {
	t.Helper()
	var meas struct {
		Capture  string  `json:"capture"`
		EmuEpoch int64   `json:"emu_epoch_host_ns"`
		ClockMs  float64 `json:"clock_uncertainty_ms"`
	}
	b, err := os.ReadFile(filepath.Join(out, file))
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(b, &meas); err != nil || meas.EmuEpoch == 0 {
		t.Fatalf("%s: %v (emu_epoch_host_ns %d)", file, err, meas.EmuEpoch)
	}
	path := meas.Capture
	if !filepath.IsAbs(path) {
		path = filepath.Join(out, path)
	}
	r, err := capture.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	type ev struct {
		at   time.Duration
		name string
	}
	var evs []ev
	// The port's samples, placed on the emulator's clock by the mark echo
	// with the shortest round trip (the hub stamps a mark with the index of
	// the next sample due): the report's phases hold only these.
	rate := float64(r.Header().RateHz)
	first, last, seen := uint64(0), uint64(0), false
	bestRTT, bestMid, bestIdx := int64(math.MaxInt64), int64(0), uint64(0)
	chans := map[int]bool{}
	for i, c := range r.Header().Channels {
		chans[i] = c.Port == port
	}
	for {
		rec, err := r.Next()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			t.Fatalf("%s: %v", path, err)
		}
		if rec.Kind == capture.KindSamples && chans[rec.Block.Channel] && rec.Block.Len() > 0 {
			a, b := rec.Block.Start, rec.Block.Start+uint64(rec.Block.Len())
			if !seen || a < first {
				first = a
			}
			last, seen = max(last, b), true
		}
		if m := rec.Mark; rec.Kind == capture.KindMark && !m.Synthetic && m.HostRecv >= m.HostSent {
			if rtt := int64(m.HostRecv - m.HostSent); rtt < bestRTT {
				bestRTT, bestMid, bestIdx = rtt, int64(m.HostSent)+rtt/2, m.MeterIndex
			}
		}
		if rec.Kind == capture.KindState && rec.State.Kind == capture.StatePhase && (rec.State.Port == 0 || rec.State.Port == port) {
			evs = append(evs, ev{time.Duration(int64(rec.State.Host) - meas.EmuEpoch), rec.State.Value})
		}
	}
	sort.SliceStable(evs, func(i, j int) bool { return evs[i].at < evs[j].at })
	if !seen || bestRTT == math.MaxInt64 || rate <= 0 {
		t.Fatalf("%s: no samples for port %d or no mark echo", path, port)
	}
	at := func(idx uint64) time.Duration {
		return time.Duration(bestMid-meas.EmuEpoch) + time.Duration((float64(idx)-float64(bestIdx))/rate*1e9)
	}
	s0, s1 := at(first), at(last)
	spans := map[string][][2]time.Duration{}
	for i := 0; i+1 < len(evs); i++ {
		if a, b := max(evs[i].at, s0), min(evs[i+1].at, s1); a < b {
			spans[evs[i].name] = append(spans[evs[i].name], [2]time.Duration{a, b})
		}
	}
	// The file's bound, or (idle.json has none) the placement's own: half
	// the best round trip and a sample.
	return spans, max(time.Duration(meas.ClockMs*float64(time.Millisecond)), time.Duration(bestRTT/2)+time.Duration(1e9/rate))
}

// truthMean is the truth's mean draw over spans, each shifted by d.
func truthMean(segs []nvmesim.Segment, spans [][2]time.Duration, d time.Duration) (float64, bool) {
	var e, T float64
	for _, s := range spans {
		w, ok := nvmesim.MeanPower(segs, s[0]+d, s[1]+d)
		if !ok {
			return 0, false
		}
		dt := (s[1] - s[0]).Seconds()
		e, T = e+float64(w)*dt, T+dt
	}
	return e / T, T > 0
}
