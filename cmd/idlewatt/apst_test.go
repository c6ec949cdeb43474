package main

import (
	"context"
	"encoding/json"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/idlewatt/idlewatt/analysis/judge"
	"github.com/idlewatt/idlewatt/app/apst"
	"github.com/idlewatt/idlewatt/states/nvme"
	nvmesim "github.com/idlewatt/idlewatt/states/nvme/sim"
)

// TestAPSTVerifyVerdicts runs `apst verify` on the simulated drives in
// each situation the verdict must tell apart, and checks outcome, exit
// code, the state reached and the reason against what the model was told.
func TestAPSTVerifyVerdicts(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name    string
		args    []string
		outcome judge.Outcome
		code    int
		reached int // every cycle's reached state
		reason  []string
	}{
		{"980 PRO within spec", []string{"--sim", "980pro-1tb"}, judge.Pass, 0, 4, nil},
		{"660p within spec, learned levels", []string{"--sim", "660p-1tb", "--levels", "learned"}, judge.Pass, 0, 4, nil},
		{"660p ASPM powersave (link in L1)", []string{"--sim", "660p-1tb", "--aspm", "powersave"}, judge.Pass, 0, 4, nil},
		{"quirked off", []string{"--quirk", "NO_APST"}, judge.NotSupported, 1, 0, []string{"NO_APST"}},
		{"tolerance excludes PS4", []string{"--latency-us", "5500"}, judge.Fail, 1, 3,
			[]string{"never enters PS4", "9500 µs > latency tolerance 5500 µs", "stayed in PS3"}},
		{"tolerance 0", []string{"--sim", "660p-1tb", "--latency-us", "0"}, judge.Fail, 1, 0, []string{"APST off", "stayed in PS0"}},
		{"exit beyond the descriptor", []string{"--exit-scale", "1.5"}, judge.Fail, 1, 4,
			[]string{"waited 14.35", "exit latency is 9.50 ms"}},
		{"entry beyond the descriptor", []string{"--sim", "660p-1tb", "--entry-scale", "1.4"}, judge.Fail, 1, 4,
			[]string{"entered PS4 7.00", "entry latency is 5.00 ms"}},
		{"NO_DEEPEST_PS expects PS3", []string{"--quirk", "NO_DEEPEST_PS"}, judge.Pass, 0, 3, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			out, e, code := run(t, context.Background(), append([]string{"apst", "verify", "--cycles", "4", "--json"}, tc.args...)...)
			var res apst.VerifyResult
			if err := json.Unmarshal([]byte(out), &res); err != nil {
				t.Fatalf("exit %d: %v\n%s%s", code, err, out, e)
			}
			v := res.Verdict
			if code != tc.code || v.Outcome != tc.outcome || len(v.Cycles) != 4 {
				t.Fatalf("exit %d, %s (%d cycles): %s; want exit %d, %s", code, v.Outcome, len(v.Cycles), v.String(), tc.code, tc.outcome)
			}
			for _, c := range v.Cycles {
				if c.ReachedPS != tc.reached {
					t.Errorf("cycle %d reached PS%d, want PS%d", c.Cycle, c.ReachedPS, tc.reached)
				}
			}
			for _, r := range tc.reason {
				if !strings.Contains(v.Reason, r) {
					t.Errorf("reason %q lacks %q", v.Reason, r)
				}
			}
			if tc.code != 0 && !strings.Contains(e, "APST verification: "+strings.ToUpper(strings.ReplaceAll(string(tc.outcome), "_", " "))) {
				t.Errorf("stderr %q", e)
			}
		})
	}
}

// TestAPSTVerifyMeasuresModel checks the figures of a passing verdict
// against the model: the floor is PS4's draw, the entry the actual entry
// latency (0.6 × declared), the exit 0.6 × declared plus the L1.2 exit.
func TestAPSTVerifyMeasuresModel(t *testing.T) {
	t.Parallel()
	for _, name := range []string{"980pro-1tb", "660p-1tb"} {
		out, e, code := run(t, context.Background(), "apst", "verify", "--sim", name, "--cycles", "5", "--json")
		var res apst.VerifyResult
		if err := json.Unmarshal([]byte(out), &res); err != nil || code != 0 {
			t.Fatalf("%s: exit %d %v %s", name, code, err, e)
		}
		p, _ := nvmesim.ProfileByName(name)
		ps4 := p.Identify.PowerStates[4]
		v := res.Verdict
		within := func(what string, ok bool, x, u, want, slack float64) {
			if !ok || math.Abs(x-want) > u+slack {
				t.Errorf("%s %s: %v ± %v, model %v", name, what, x, u, want)
			}
		}
		within("floor W", v.FloorW.Ok(), float64(v.FloorW), float64(v.FloorU95W), float64(ps4.MaxPower), 0)
		// The step is located to within a sample (50 µs).
		within("entry ms", v.EntryMs.Ok(), float64(v.EntryMs), float64(v.EntryU95Ms), 0.6*float64(ps4.EntryLatencyUs)/1e3, 0.05)
		within("exit ms", v.ExitMs.Ok(), float64(v.ExitMs), float64(v.ExitU95Ms), 0.6*float64(ps4.ExitLatencyUs)/1e3+float64(p.L12Exit)/1e6, 1e-9)
	}
}

func TestAPSTVerifyBadInput(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct{ args []string }{
		{[]string{"--sim", "970evo"}},
		{[]string{"--latency-us", "-5"}},
		{[]string{"--quirk", "NO_SLEEP"}},
		{[]string{"--aspm", "fast"}},
		{[]string{"--cycles", "0"}},
		{[]string{"--levels", "guess"}},
		{[]string{"--exit-scale", "0"}},
		{[]string{"--expect-ps", "1"}},
	} {
		_, e, code := run(t, context.Background(), append([]string{"apst", "verify"}, tc.args...)...)
		if code != 2 || !strings.Contains(e, tc.args[0]) {
			t.Errorf("%v: exit %d %q", tc.args, code, e)
		}
	}
}

// TestAPSTIdleRecoversTruth is the truth campaign of docs/states.md: idle
// power per latency tolerance × ASPM policy for both built-in profiles,
// recovered from the simulated meter's samples. Each must lie within its
// own 95 % interval of the model's mean over the same window, and that
// mean must be the steady draw the model's parts add up to (the state's
// power plus the link's under the policy), so a biased estimate, a wrong
// uncertainty or a wrong APST plan each fail it.
func TestAPSTIdleRecoversTruth(t *testing.T) {
	t.Parallel()
	for _, name := range []string{"980pro-1tb", "660p-1tb"} {
		out, e, code := run(t, context.Background(), "apst", "idle", "--sim", name, "--settle", "500ms", "--measure", "2s", "--json")
		var res struct {
			Rows []apst.IdleRow `json:"results"`
		}
		if err := json.Unmarshal([]byte(out), &res); err != nil || code != 0 {
			t.Fatalf("%s: exit %d %v %s", name, code, err, e)
		}
		if len(res.Rows) != 9 {
			t.Fatalf("%s: %d rows", name, len(res.Rows))
		}
		p, _ := nvmesim.ProfileByName(name)
		for _, r := range res.Rows {
			tol, _ := nvme.ParseTolerance(r.Tolerance)
			plan := nvme.PlanAPST(p.Identify, tol.Us, 0, nvme.ModuleParams{})
			state := float64(p.OperationalIdle[0])
			if plan.Enabled {
				for _, e := range plan.Entries[:1] {
					state = float64(p.Identify.PowerStates[e.ITPS].MaxPower)
				}
			}
			link := map[string]float64{"performance": float64(p.LinkL0), "powersave": float64(p.LinkL1), "powersupersave": 0}[r.ASPM]
			if math.Abs(r.TruthW-(state+link)) > 1e-12 {
				t.Errorf("%s %s %s: truth %v W, the parts add to %v W", name, r.Tolerance, r.ASPM, r.TruthW, state+link)
			}
			// 2 × U95: agreement, not coverage (18 rows at 1 × U95 would miss one
			// in three runs by design were the noise not seeded).
			if !(r.U95W > 0) || math.Abs(r.MeanW-r.TruthW) > 2*r.U95W || r.U95W > 1e-4 {
				t.Errorf("%s %s %s: recovered %.6f ± %.6f W, truth %.6f W", name, r.Tolerance, r.ASPM, r.MeanW, r.U95W, r.TruthW)
			}
			if r.Samples != int(2*time.Second/(50*time.Microsecond)) {
				t.Errorf("%s: %d samples", name, r.Samples)
			}
		}
	}
}

// TestHubEmulateSATAAndNVMe: `hub emulate --nvme` puts the simulated 980
// PRO on port 2's 3.3 V rail beside a simulated SATA drive on port 1; a
// recording of its stream reports both, port 2 at the model's PS4 draw
// (after the first 100 ms the drive idles in PS4 throughout) and port 1 at
// the JMF667H's max_performance idle.
func TestHubEmulateSATAAndNVMe(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	stream, capt, rep := filepath.Join(dir, "hub.bin"), filepath.Join(dir, "run.iwcap"), filepath.Join(dir, "rep")
	mustRun(t, "hub", "emulate", "--fast", "--rate", "1000", "--duration", "3s", "--out", stream,
		"--profile", "jmf667h-128-a19", "--nvme", "2=980pro-1tb")
	mustRun(t, "record", "--meter", "hub", "--port", stream, "--out", capt)
	mustRun(t, "report", capt, "--out", rep)
	b, err := os.ReadFile(filepath.Join(rep, "report.json"))
	if err != nil {
		t.Fatal(err)
	}
	var r struct {
		Drives []struct {
			Port  int      `json:"port"`
			MedW  float64  `json:"p50_w"`
			Rails []string `json:"rails"`
		} `json:"drives"`
	}
	if err := json.Unmarshal(b, &r); err != nil || len(r.Drives) != 2 {
		t.Fatalf("%v %s", err, b[:min(len(b), 400)])
	}
	p, _ := nvmesim.ProfileByName("980pro-1tb")
	ps4 := float64(p.Identify.PowerStates[4].MaxPower)
	// The median: the first 100 ms (PS0, 0.35 W) are a thirtieth of it.
	if w := r.Drives[1].MedW; math.Abs(w-ps4) > 0.3e-3 {
		t.Errorf("port 2 (NVMe) median %.3f mW, model PS4 %.3f mW", w*1e3, ps4*1e3)
	}
	if got := strings.Join(r.Drives[1].Rails, ","); !strings.Contains(got, "3v3") {
		t.Errorf("port 2 rails %q: no 3.3 V rail", got)
	}
	if w := r.Drives[0].MedW; math.Abs(w-0.400) > 0.01 {
		t.Errorf("port 1 (SATA) median %.3f W, want the JMF667H's 0.400 W", w)
	}
	for _, tc := range [][]string{
		{"--nvme", "3=980pro-1tb"}, {"--nvme", "2=970evo"}, {"--nvme", "2"}, {"--nvme", "1=660p-1tb,1=660p-1tb"},
		{"--rail-3v3", "--protocol", "2"}, {"--rail-3v3", "--ports", "6"}, {"--protocol", "4"},
		{"--nvme", "2=660p-1tb", "--nvme-latency-us", "-3"},
		{"--nvme", "2=660p-1tb", "--profile", "jmf667h-128-a19", "--truth-dir", filepath.Join(dir, "truth")},
	} {
		_, e, code := run(t, context.Background(), append([]string{"hub", "emulate", "--fast", "--duration", "100ms", "--out", filepath.Join(dir, "x.bin")}, tc...)...)
		if code != 2 || e == "" {
			t.Errorf("%v: exit %d %q", tc, code, e)
		}
	}
}

// TestAPSTOnHub runs apst verify and apst idle with --hub: the simulated
// drive on an emulated protocol-3 hub's 3.3 V rail, read by the hub
// driver over a pty in real time (about 4 s). The verdicts and figures
// must be those of the model as through the simulated meter.
func TestAPSTOnHub(t *testing.T) {
	t.Parallel()
	if testing.Short() {
		t.Skip("runs the emulated hub for about 4 s")
	}
	p, _ := nvmesim.ProfileByName("980pro-1tb")
	ps4 := p.Identify.PowerStates[4]
	out, e, code := run(t, context.Background(), "apst", "verify", "--hub", "--cycles", "3", "--json")
	var res apst.VerifyResult
	if err := json.Unmarshal([]byte(out), &res); err != nil || code != 0 || !res.Meter.Hub {
		t.Fatalf("exit %d %v %s%s", code, err, out, e)
	}
	v := res.Verdict
	if math.Abs(float64(v.FloorW)-float64(ps4.MaxPower)) > float64(v.FloorU95W)+20e-6 {
		t.Errorf("floor %v ± %v W, model %v W", v.FloorW, v.FloorU95W, ps4.MaxPower)
	}
	// The entry on a 100 µs grid: within its interval and a tenth of a sample.
	if want := 0.6 * float64(ps4.EntryLatencyUs) / 1e3; math.Abs(float64(v.EntryMs)-want) > float64(v.EntryU95Ms)+0.01 {
		t.Errorf("entry %v ± %v ms, model %v ms", v.EntryMs, v.EntryU95Ms, want)
	}
	out, _, code = run(t, context.Background(), "apst", "verify", "--hub", "--cycles", "2", "--exit-scale", "1.5", "--json")
	if err := json.Unmarshal([]byte(out), &res); err != nil || code != 1 || res.Verdict.Outcome != judge.Fail ||
		!strings.Contains(res.Verdict.Reason, "exit latency is 9.50 ms") {
		t.Errorf("exit beyond the descriptor on the hub: exit %d, %s", code, res.Verdict.String())
	}
	out, e, code = run(t, context.Background(), "apst", "idle", "--hub", "--sim", "660p-1tb", "--latency-us", "5500,100000",
		"--aspm", "powersupersave", "--settle", "200ms", "--measure", "500ms", "--json")
	var idle struct {
		Rows []apst.IdleRow `json:"results"`
	}
	if err := json.Unmarshal([]byte(out), &idle); err != nil || code != 0 || len(idle.Rows) != 2 {
		t.Fatalf("apst idle --hub: exit %d %v %s%s", code, err, out, e)
	}
	for i, want := range []float64{0.030, 0.004} { // PS3, PS4 in L1.2
		r := idle.Rows[i]
		if math.Abs(r.TruthW-want) > 1e-12 || math.Abs(r.MeanW-r.TruthW) > 2*r.U95W+13e-6 || r.Samples < 4000 {
			t.Errorf("%s µs: %.6f ± %.6f W (%d samples), truth %.6f W, want %.3f W", r.Tolerance, r.MeanW, r.U95W, r.Samples, r.TruthW, want)
		}
	}
}
