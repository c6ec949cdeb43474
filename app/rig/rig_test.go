package rig

import (
	"context"
	"encoding/json"
	"math"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/idlewatt/idlewatt/analysis"
	"github.com/idlewatt/idlewatt/analysis/judge"
	"github.com/idlewatt/idlewatt/states/drivesim"
)

// These tests run the whole chain on the emulator: simulated drives behind
// the emulated hub on a pty, the hub driver, the capture, the workload
// engine, the DevSlp cycles, analysis. They compare what the analysis
// recovers with the drive models' ground truth.

func truthSegments(t testing.TB, path string) []drivesim.Segment {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	_, segs, err := drivesim.ReadTruth(f)
	if err != nil {
		t.Fatal(err)
	}
	return segs
}

func TestDevSlpVerifyOnEmulator(t *testing.T) {
	t.Parallel() // the emulator runs in real time: most of the test is waiting
	if testing.Short() {
		t.Skip("end-to-end run on the emulator")
	}
	out := t.TempDir()
	res, err := Run(context.Background(), devslpVerifyConfig(), out, Plan{DevSlp: true})
	if err != nil {
		t.Fatal(err)
	}
	good, bad := res.DevSlp["1"], res.DevSlp["2"]
	// A host too loaded to issue the probe read promptly (CI shares two
	// cores with compilers and fuzzers) cannot judge DETO; the verdict is
	// then inconclusive naming the host, and only that is excused here.
	if good.Outcome != judge.Pass && !(good.Outcome == judge.Inconclusive && strings.Contains(good.Reason, "overloaded host")) {
		t.Errorf("ssd340 failed DevSlp verification: %s", good)
	}
	if bad.Outcome != judge.Fail || !strings.Contains(bad.Reason, "ignores DEVSLP") {
		t.Errorf("broken-devslp verdict %q, want a failure saying it ignores DEVSLP", bad)
	}
	if bad.FloorW.Ok() {
		t.Errorf("broken-devslp: floor %v for a drive that never entered DevSlp, want null", bad.FloorW)
	}
	t.Logf("broken-devslp verdict: %s", bad)

	p, _ := drivesim.Lookup("ssd340", nil)
	errs := truthErrors(t, res, 1, filepath.Join(out, "truth-p1.jsonl"))
	if len(errs) != 3 {
		t.Errorf("%d cycles judged against the truth on port 1, want 3", len(errs))
	}
	for _, e := range errs {
		t.Logf("cycle %d: floor error %.3f mW (u95 %.3f); entry error %.3f ms (u95 %.3f); rise error %.3f ms; exit %.2f ms (truth %.2f, profile's exit latency %.0f)",
			e.cycle, e.floorMW, e.floorU95MW, e.entryMs, e.entryU95Ms, e.riseMs, e.exit, e.exitTruth, p.DevSlpExitMs)
		if math.Abs(e.floorMW) > 0.2 {
			t.Errorf("cycle %d: DevSlp floor error %.3f mW > 0.2 mW", e.cycle, e.floorMW)
		}
		// The fitted entry is a host time (meter time through the clock
		// fit); the truth is on the emulator clock: the fit's uncertainty.
		if math.Abs(e.entryMs) > 1+res.ClockUncertaintyMs {
			t.Errorf("cycle %d: entry error %.2f ms > 1 ms + clock uncertainty %.2f ms", e.cycle, e.entryMs, res.ClockUncertaintyMs)
		}
	}
	// The exit is a host time (deassert → first read completed): how well
	// it matches the truth depends on how promptly this host schedules the
	// read, so it is measured by BenchmarkDevSlpExitLatency, not asserted.
	if xs := judgedExits(errs, res); len(xs) > 0 {
		t.Logf("exit latency error (not judged here): median %.2f ms, max %.2f ms over %d cycles", xs[len(xs)/2], xs[len(xs)-1], len(xs))
	}

	// states.json: one DevSlp interval per cycle on the working drive, none
	// on the broken one, and the report's residency.
	var written struct{ Drives []analysis.StateReport }
	b, err := os.ReadFile(filepath.Join(out, "states.json"))
	if err != nil || json.Unmarshal(b, &written) != nil || len(written.Drives) != 2 {
		t.Fatalf("states.json: %v (%d drives)", err, len(written.Drives))
	}
	if n := written.Drives[0].Spans["devslp"]; n < 3 {
		t.Errorf("ssd340: %d DevSlp intervals in states.json, want ≥ 3", n)
	}
	if n := written.Drives[1].Spans["devslp"]; n != 0 {
		t.Errorf("broken-devslp: %d DevSlp intervals in states.json, want 0", n)
	}
	for i, w := range written.Drives {
		if got, want := w.Residency["devslp"], res.Report.Drives[i].Residency.DevSlp; got != want {
			t.Errorf("port %d devslp residency: %v in states.json, %v in the report", w.Port, got, want)
		}
	}
}

func TestMeasureRecoversActiveIdle(t *testing.T) {
	t.Parallel() // the emulator runs in real time: most of the test is waiting
	if testing.Short() {
		t.Skip("end-to-end run on the emulator")
	}
	out := t.TempDir()
	cfg := Config{
		Meter: MeterConfig{Kind: "emulator", Rate: 10000},
		Drives: []DriveConfig{
			{Name: "128", Port: 1, Profile: "jmf667h-128-a19", SizeBytes: 64 << 20},
			{Name: "256", Port: 2, Profile: "jmf667h-256-a19", SizeBytes: 64 << 20},
		},
		Policy:   "max_performance",
		Workload: WorkloadConfig{Trace: "pcmark7", App: "defender", Scale: 0.05, Timing: "compress-idle=500ms"},
		Idle:     1500 * time.Millisecond,
	}
	res, err := Run(context.Background(), cfg, out, Plan{Workload: true})
	if err != nil {
		t.Fatal(err)
	}
	for _, d := range res.Report.Drives {
		p, _ := drivesim.Lookup(d.Profile, nil)
		e := math.Abs(float64(d.ActiveIdleW-p.ActiveIdleW)) / float64(p.ActiveIdleW)
		t.Logf("%s: active idle %.4f W, profile %.4f W, error %.3f %%; average %.4f W; peak %.3f W; %d I/O; %d dropped",
			d.Name, d.ActiveIdleW, float64(p.ActiveIdleW), 100*e, d.AverageW, d.PeakW, d.IO.Ops, d.Samples.Dropped)
		if e > 0.01 {
			t.Errorf("%s: active idle %.4f W is %.2f %% off the profile's %.4f W", d.Name, d.ActiveIdleW, 100*e, float64(p.ActiveIdleW))
		}
		if d.IO.Ops == 0 {
			t.Errorf("%s: no I/O recorded", d.Name)
		}
		if d.PeakW < 1.5*d.ActiveIdleW {
			t.Errorf("%s: peak %.3f W does not rise above idle %.3f W under the workload", d.Name, d.PeakW, d.ActiveIdleW)
		}
	}
	for _, f := range []string{"report.json", "report.md", "summary.csv", "measure.json", "power.png", CaptureFile} {
		if _, err := os.Stat(filepath.Join(out, f)); err != nil {
			t.Errorf("missing output: %v", err)
		}
	}
}

// devslpVerifyConfig is TestDevSlpVerifyOnEmulator's (and
// BenchmarkDevSlpExitLatency's) run: three DevSlp cycles of a working and a
// broken drive.
func devslpVerifyConfig() Config {
	return Config{
		Meter: MeterConfig{Kind: "emulator", Rate: 10000},
		Drives: []DriveConfig{
			{Name: "ssd340", Port: 1, Profile: "ssd340"},
			{Name: "broken", Port: 2, Profile: "broken-devslp"},
		},
		Workload: WorkloadConfig{Trace: "none"},
		DevSlp:   DevSlpConfig{Cycles: 3, Policy: "med_power_with_dipm", Settle: 500 * time.Millisecond, Hold: 300 * time.Millisecond},
	}
}

// judgedExits is |exit − truth| in ms of each cycle where the host neither
// stalled during the read (the rig's canary) nor fitted the clock loosely,
// sorted.
func judgedExits(errs []cycleErr, res *Result) []float64 {
	var xs []float64
	for _, e := range errs {
		if res.ClockUncertaintyMs <= 0.5 && e.hostStallMs == 0 {
			xs = append(xs, math.Abs(e.exit-e.exitTruth))
		}
	}
	sort.Float64s(xs)
	return xs
}

// BenchmarkDevSlpExitLatency measures how far the DevSlp exit latency
// (deassert → first read completed, a host time) is from the drive model's
// truth on this machine, now; the goal is a median ≤ 1 ms and every cycle
// ≤ 5 ms on a quiet host (docs/testing.md). Each iteration is one run of
// three cycles (about 5 s):
//
//	go test ./app/rig -run '^$' -bench DevSlpExitLatency -benchtime 3x
func BenchmarkDevSlpExitLatency(b *testing.B) {
	var xs []float64
	for b.Loop() {
		out := b.TempDir()
		res, err := Run(context.Background(), devslpVerifyConfig(), out, Plan{DevSlp: true})
		if err != nil {
			b.Fatal(err)
		}
		xs = append(xs, judgedExits(truthErrors(b, res, 1, filepath.Join(out, "truth-p1.jsonl")), res)...)
	}
	if len(xs) == 0 {
		b.Fatal("no cycle judged: every one saw a host stall or a loose clock fit")
	}
	sort.Float64s(xs)
	b.ReportMetric(xs[len(xs)/2], "median_exit_err_ms")
	b.ReportMetric(xs[len(xs)-1], "max_exit_err_ms")
	b.ReportMetric(float64(len(xs)), "cycles_judged")
}

// cycleErr is one judged cycle against the drive model's truth.
type cycleErr struct {
	cycle                int
	floorMW, floorU95MW  float64 // measured − truth
	entryMs, entryU95Ms  float64 // fitted entry − truth DevSlp start (host clock)
	riseMs, riseU95Ms    float64 // fitted rise − truth DevSlp end
	exit, exitTruth      float64 // deassert → first read completed, ms
	hostStallMs          float64 // the host's stall while the read was out
	floorHeld, entryHeld bool    // the 95 % interval holds the truth (entry within it + clock)
	// truthEntryMs: the truth's DevSlp start after the assertion (the
	// fitted entry less its error); stateAtAssert the truth's state then.
	truthEntryMs  float64
	stateAtAssert string
}

// truthErrors matches each judged cycle of a port with the truth's DevSlp
// segment (the one containing its fitted entry) and the read served after.
func truthErrors(t testing.TB, res *Result, port int, truth string) []cycleErr {
	t.Helper()
	segs := truthSegments(t, truth)
	var ds *analysis.DevSlp
	for i := range res.Report.Drives {
		if res.Report.Drives[i].Port == port {
			ds = &res.Report.Drives[i].DevSlp
		}
	}
	if ds == nil {
		t.Fatalf("port %d not in the report", port)
	}
	var out []cycleErr
	for _, c := range ds.CycleResults {
		if c.EntryAt == 0 {
			continue
		}
		at := c.EntryAt.Sub(res.EmuEpoch)
		var seg, read *drivesim.Segment
		for i := range segs {
			if seg == nil && segs[i].State.String() == "devslp" && segs[i].End > at-5*time.Millisecond {
				seg = &segs[i]
			}
			if seg != nil && segs[i].State.String() == "active" && segs[i].Start >= seg.End {
				read = &segs[i]
				break
			}
		}
		if seg == nil || read == nil {
			t.Errorf("cycle %d: no DevSlp segment and read in the truth near %v", c.Cycle, at)
			continue
		}
		truthW := float64(seg.P5 + seg.P12)
		e := cycleErr{cycle: c.Cycle,
			floorMW: (float64(c.FloorW) - truthW) * 1e3, floorU95MW: float64(c.FloorU95W) * 1e3,
			entryMs: float64(c.EntryAt.Sub(res.EmuEpoch)-seg.Start) / 1e6, entryU95Ms: float64(c.EntryU95Ms),
			exit: float64(c.ExitMs), exitTruth: float64(read.End-seg.End) / 1e6, hostStallMs: float64(c.HostStallMs)}
		if c.RiseAt != 0 {
			e.riseMs, e.riseU95Ms = float64(c.RiseAt.Sub(res.EmuEpoch)-seg.End)/1e6, float64(c.RiseU95Ms)
		}
		e.truthEntryMs = float64(c.EntryMs) - e.entryMs
		assertAt := at - time.Duration(float64(c.EntryMs)*1e6)
		for i := range segs {
			if segs[i].Start <= assertAt && assertAt < segs[i].End {
				e.stateAtAssert = segs[i].State.String()
			}
		}
		e.floorHeld = math.Abs(e.floorMW) <= e.floorU95MW
		e.entryHeld = math.Abs(e.entryMs) <= e.entryU95Ms+res.ClockUncertaintyMs
		out = append(out, e)
	}
	return out
}

// TestDevSlpHardDriveAgainstTruth: a drive unlike the built-ins — 3 mA σ
// sensor noise, a 1.2 mW floor (≈ 5 ADC counts on the 5 V rail), a 300 ms
// DevSlp exit, GC every 0.3 s — beside an HDD without DevSlp. Before the
// change-point estimators this drive failed every cycle ("floor reached
// ~300 ms after assertion") and the report said 3.25 mW.
func TestDevSlpHardDriveAgainstTruth(t *testing.T) {
	t.Parallel() // the emulator runs in real time: most of the test is waiting
	if testing.Short() {
		t.Skip("end-to-end run on the emulator")
	}
	p, err := drivesim.Lookup("jmf667h-256-a19", nil)
	if err != nil {
		t.Fatal(err)
	}
	p.Name, p.NoiseMA, p.DevSlpW, p.DevSlpExitMs, p.DetoMs = "hard-ssd", 3, 0.0012, 300, 400
	p.GCEveryS, p.GCMs, p.GCW = 0.3, 20, 0.6
	out := t.TempDir()
	cfg := Config{
		Meter:    MeterConfig{Kind: "emulator", Rate: 10000},
		Emulator: EmulatorConfig{Seed: 5},
		Drives: []DriveConfig{
			{Name: "hard-ssd", Port: 1, Profile: "hard-ssd", SizeBytes: 16 << 20},
			{Name: "hdd", Port: 2, Profile: "hdd-7200", SizeBytes: 16 << 20},
		},
		Profiles: map[string]drivesim.Profile{"hard-ssd": p},
		Workload: WorkloadConfig{Trace: "none"},
		DevSlp:   DevSlpConfig{Cycles: 4, Policy: "med_power_with_dipm", Settle: 800 * time.Millisecond, Hold: 600 * time.Millisecond, Return: 600 * time.Millisecond},
	}
	res, err := Run(context.Background(), cfg, out, Plan{DevSlp: true})
	if err != nil {
		t.Fatal(err)
	}
	ssd, hdd := res.DevSlp["1"], res.DevSlp["2"]
	t.Logf("hard-ssd: %s", ssd)
	t.Logf("hdd: %s", hdd)
	errs := truthErrors(t, res, 1, filepath.Join(out, "truth-p1.jsonl"))
	// The verdict against what the drive did: a cycle whose assertion found
	// the drive not yet at rest (the truth's DevSlp begins past the entry
	// bound after it) fails rightly. On a loaded host the rig's timing
	// slips and that happens (once in a full `go test ./...` at load ~10:
	// the floor reached 446.8 ms after the assertion, 0.02 ms from the
	// truth); the test judges the judge, not the host's scheduler.
	var late []int
	for _, e := range errs {
		if e.truthEntryMs > float64(ssd.Criteria.EntryBoundMs) {
			late = append(late, e.cycle)
			t.Logf("cycle %d: the truth's DevSlp began %.1f ms after the assertion (%s before it)", e.cycle, e.truthEntryMs, e.stateAtAssert)
		}
	}
	switch {
	case len(late) == 0 && ssd.Outcome != judge.Pass && !(ssd.Outcome == judge.Inconclusive && strings.Contains(ssd.Reason, "overloaded host")):
		t.Errorf("hard-ssd verdict %s, want pass", ssd)
	case len(late) > 0 && (ssd.Outcome == judge.Pass || !strings.Contains(ssd.Reason, "after assertion")):
		t.Errorf("hard-ssd verdict %s, want fail or inconclusive for cycles %v, which entered late in the truth", ssd, late)
	}
	if hdd.Outcome != judge.NotSupported || hdd.FloorW.Ok() || len(hdd.Cycles) != 0 {
		t.Errorf("hdd verdict %s (floor %v, %d cycles), want not_supported, null, not cycled", hdd, hdd.FloorW, len(hdd.Cycles))
	}
	if e := math.Abs(float64(ssd.FloorW) - 0.0012); e > math.Max(0.0002, float64(ssd.FloorU95W)) {
		t.Errorf("pooled floor %.3f ± %.3f mW, truth 1.200 mW", float64(ssd.FloorW)*1e3, float64(ssd.FloorU95W)*1e3)
	}
	if len(errs) != 4 {
		t.Errorf("%d cycles matched with the truth, want 4", len(errs))
	}
	var floorHeld, entryHeld int
	for _, e := range errs {
		t.Logf("cycle %d: floor error %+.3f mW (u95 %.3f); entry error %+.3f ms (u95 %.3f); rise error %+.3f ms (u95 %.3f); exit to first read %.2f ms (truth %.2f)",
			e.cycle, e.floorMW, e.floorU95MW, e.entryMs, e.entryU95Ms, e.riseMs, e.riseU95Ms, e.exit, e.exitTruth)
		if math.Abs(e.entryMs) > 1+res.ClockUncertaintyMs || math.Abs(e.riseMs) > 1+res.ClockUncertaintyMs {
			t.Errorf("cycle %d: entry error %.2f ms / rise error %.2f ms > 1 ms + clock %.2f ms", e.cycle, e.entryMs, e.riseMs, res.ClockUncertaintyMs)
		}
		if e.floorHeld {
			floorHeld++
		}
		if e.entryHeld {
			entryHeld++
		}
	}
	// Four cycles: a 95 % interval may miss once. The entry's truth is
	// reached through the host clock (the emulator's epoch and the clock
	// fit), whose error here is larger than the change point's own
	// interval, so its coverage is logged, not judged; the accuracy
	// campaign judges it on the meter's clock.
	if floorHeld < len(errs)-1 {
		t.Errorf("floor interval held the truth in %d of %d cycles", floorHeld, len(errs))
	}
	t.Logf("entry interval (+ clock uncertainty %.2f ms) held the truth in %d of %d cycles", res.ClockUncertaintyMs, entryHeld, len(errs))
}

// minPowerActiveIdle is a run of one emulated drive under min_power with
// a second of active idle under max_performance before a second of idle.
func minPowerActiveIdle() Config {
	return Config{
		Meter:      MeterConfig{Kind: "emulator", Rate: 10000},
		Drives:     []DriveConfig{{Name: "256", Port: 1, Profile: "jmf667h-256-a19", SizeBytes: 64 << 20}},
		Policy:     "min_power",
		Workload:   WorkloadConfig{Trace: "none"},
		Idle:       time.Second,
		ActiveIdle: time.Second,
	}
}

// Under min_power a drive drops to Slumber as soon as it is idle, so its
// idle phase holds no active-idle level; active_idle runs an idle phase
// under max_performance first, where the report finds the level, and
// puts the run's policy back (the idle phase after it rests at Slumber).
func TestActiveIdlePhaseUnderPowerSavingPolicy(t *testing.T) {
	t.Parallel() // the emulator runs in real time: most of the test is waiting
	if testing.Short() {
		t.Skip("end-to-end run on the emulator")
	}
	out := t.TempDir()
	res, err := Run(context.Background(), minPowerActiveIdle(), out, Plan{})
	if err != nil {
		t.Fatal(err)
	}
	p, _ := drivesim.Lookup("jmf667h-256-a19", nil)
	d := res.Report.Drives[0]
	var phases []string
	quiet := map[string]float64{}
	for _, ph := range d.Phases {
		phases = append(phases, ph.Name)
		quiet[ph.Name] = float64(ph.Quiet.W)
	}
	if !strings.Contains(strings.Join(phases, ","), "idle:max_performance,idle") {
		t.Fatalf("phases %v: no idle:max_performance before idle", phases)
	}
	want := float64(p.ActiveIdleW)
	if d.ActiveIdleU95W == nil || math.Abs(float64(d.ActiveIdleW)-want) > max(0.01*want, float64(*d.ActiveIdleU95W)) {
		t.Errorf("active idle %v ± %v W, profile %v W", d.ActiveIdleW, d.ActiveIdleU95W, want)
	}
	if q := quiet["idle"]; !(math.Abs(q-float64(p.SlumberW)) < 0.1*float64(p.SlumberW)) {
		t.Errorf("idle phase after it rests at %v W, want min_power's Slumber %v W (the policy was not put back)", q, float64(p.SlumberW))
	}
}
