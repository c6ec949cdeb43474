package accuracy

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/idlewatt/idlewatt/meter"
	"github.com/idlewatt/idlewatt/states/drivesim"
	"github.com/idlewatt/idlewatt/states/powerstate"
	"github.com/idlewatt/idlewatt/units"
)

func TestParseReplay(t *testing.T) {
	s, i, err := ParseReplay(" 42:7 ")
	if err != nil || s != 42 || i != 7 {
		t.Errorf("42:7 → %d, %d, %v", s, i, err)
	}
	for _, bad := range []string{"", "42", "42:", ":7", "-1:3", "4:-2", "x:1", "1:y", "1:2:3", "18446744073709551616:1"} {
		if _, _, err := ParseReplay(bad); err == nil {
			t.Errorf("%q accepted", bad)
		} else if !strings.Contains(err.Error(), "SEED:INDEX") && !strings.Contains(err.Error(), "seed") && !strings.Contains(err.Error(), "index") {
			t.Errorf("%q: error %q does not say what is wrong", bad, err)
		}
	}
}

func FuzzParseReplay(f *testing.F) {
	for _, s := range []string{"1:0", "18446744073709551615:2147483647", "1:-1", "a:b", ":"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		seed, i, err := ParseReplay(s)
		if err != nil {
			return
		}
		if i < 0 {
			t.Fatalf("%q: negative index %d", s, i)
		}
		s2, i2, err := ParseReplay(DrawCase(seed, i).Replay())
		if err != nil || s2 != seed || i2 != i {
			t.Fatalf("%q: the drive's replay argument does not parse back: %d:%d, %v", s, s2, i2, err)
		}
	})
}

func TestDrawCase(t *testing.T) {
	a, b := DrawCase(3, 9), DrawCase(3, 9)
	if !reflect.DeepEqual(a, b) {
		t.Fatalf("DrawCase(3, 9) differs between calls")
	}
	if a.Hub != 2 || a.Port != 2 {
		t.Errorf("drive 9: hub %d port %d, want hub 2 port 2", a.Hub, a.Port)
	}
	// The drives of a hub share its policy and seeds.
	for i := 8; i < 12; i++ {
		c := DrawCase(3, i)
		if c.Policy != a.Policy || c.EmulatorSeed != a.EmulatorSeed || c.WorkloadSeed != a.WorkloadSeed {
			t.Errorf("drive %d: hub settings differ from drive 9's", i)
		}
	}
	if err := a.Profile.InSpace(); err != nil {
		t.Error(err)
	}
	policies := map[string]bool{}
	for h := 0; h < 100; h++ {
		policies[DrawCase(3, h*HubSize).Policy] = true
	}
	if len(policies) != len(Policies) {
		t.Errorf("100 hubs drew %d of the %d policies", len(policies), len(Policies))
	}
}

func fp(x float64) *float64 { return &x }

func TestCompare(t *testing.T) {
	tr := &Truth{WindowS: 10, ActiveIdleW: 0.2, IdleS: 3, AverageW: 0.3, EnergyJ: 3,
		Residency: map[string]float64{"idle": 0.5, "slumber": 0.3, "wake": 0.05, "active": 0.15},
		EntryMs:   fp(0.1), ExitMs: fp(40), Verdict: "PASS"}
	m := &Measured{
		ActiveIdleW: Value{V: fp(0.2019), Lo: fp(0.2010), Hi: fp(0.2030)}, // 0.95 %: ok, interval misses
		AverageW:    Value{V: fp(0.3016)},                                 // 0.53 %: off goal
		// energy absent: missing
		DevSlpFloorW: Value{V: fp(0.004)}, // the truth has no DevSlp: spurious
		EntryMs:      Value{V: fp(1.05)},  // 0.95 ms: ok (1 ms floor)
		ExitMs:       Value{V: fp(41.3)},  // 1.3 ms off 40 ms: beyond max(1 ms, 3 % = 1.2 ms)
		Residency: map[string]Value{"active": {V: fp(0.205)}, "idle": {V: fp(0.495)},
			"slumber": {V: fp(0.3)}, "devslp": {V: fp(0)}},
	}
	got := map[string]Check{}
	for _, c := range compare(tr, m) {
		got[c.Metric] = c
	}
	want := map[string]string{
		"active_idle_w": StatusOK, "average_w": StatusBreak, "energy_j": StatusMissing,
		"devslp_floor_w": StatusSpurious, "entry_ms": StatusOK, "exit_ms": StatusBreak,
		"residency.active": StatusOK, "residency.idle": StatusOK, "residency.slumber": StatusOK, "residency.devslp": StatusOK,
	}
	for k, w := range want {
		if got[k].Status != w {
			t.Errorf("%s: %s, want %s (%+v)", k, got[k].Status, w, got[k])
		}
	}
	// wake folds into active: 0.15 + 0.05 = 0.2.
	if e := *got["residency.active"].Err; math.Abs(e-0.005) > 1e-12 {
		t.Errorf("active residency error %v, want 0.005 (wake counted as active)", e)
	}
	if h := got["active_idle_w"].Held; h == nil || *h {
		t.Errorf("active idle interval [0.2010, 0.2030] around 0.2: held = %v, want false", h)
	}
	if got["average_w"].Held != nil {
		t.Errorf("no interval stated, but coverage counted")
	}
	// With a "background" state in the report, GC bursts count there.
	tr.GC = map[string]float64{"idle": 0.1}
	m.Residency["background"] = Value{V: fp(0.1)}
	m.Residency["idle"] = Value{V: fp(0.4)}
	for _, c := range compare(tr, m) {
		if (c.Metric == "residency.background" || c.Metric == "residency.idle") && c.Status != StatusOK {
			t.Errorf("%s: %s (truth %v, measured %v)", c.Metric, c.Status, *c.Truth, *c.Measured)
		}
	}
	s := summarise("average_w", []Check{got["average_w"], got["active_idle_w"]})
	if s.N != 2 || s.Breaks != 1 || s.Met || s.Coverage == nil || *s.Coverage != 0 || s.Intervals != 1 {
		t.Errorf("summary %+v", s)
	}
	for _, c := range []struct{ truth, meas, want string }{
		{"PASS", "PASS", "right"}, {"FAIL", "PASS", "false PASS"}, {"NOT SUPPORTED", "FAIL", "false FAIL"},
		{"PASS", "INCONCLUSIVE", "inconclusive"}, {"FAIL", "NOT SUPPORTED", "wrong"}, {"PASS", "", "missing"},
	} {
		if got := verdictOutcome(c.truth, c.meas); got != c.want {
			t.Errorf("truth %s measured %s: %s, want %s", c.truth, c.meas, got, c.want)
		}
	}
}

const reportJSON = `{"schema":"idlewatt.report/v1","drives":[
 {"name":"a","port":1,"active_idle_w":0.2,"active_idle_w_ci95":[0.19,0.21],"average_w":0.3,"energy_j":3,
  "residency":{"active":0.1,"idle":0.9},"devslp":{"entered":false,"power_w":3.9,"entry_ms":0,"exit_ms":0},"samples":{"dropped":2}},
 {"name":"b","port":2,"active_idle_w":null,"average_w":0.5,"energy_j":5,"uncertainty":{"average_w":{"lo":0.49,"hi":0.51}},
  "residency":{"devslp":0.5,"slumber":0.5},"devslp":{"entered":true,"power_w":0.004,"entry_ms":0.2,"exit_ms":40}},
 {"name":"c","port":3,"active_idle_w":0.2,"active_idle_u95_w":0.001,"peak_w":1.5,"peak_ci95_w":[1.4,1.52],"residency":{"background":0.1,"idle":0.9},"residency_u95":{"idle":0.002},
  "devslp":{"entered":false,"power_w":null,"floor_w":null,"floor_u95_w":null,"entry_ms":null,"exit_ms":null,"outcome":"not_supported"}},
 {"name":"d","port":4,"devslp":{"entered":true,"floor_w":0.004,"floor_u95_w":0.0002,"entry_ms":0.5,"entry_u95_ms":null,"exit_ms":41,"exit_u95_ms":1.5,"rise_ms":2.1,"rise_u95_ms":0.3,"pre_cycle_w":0.05,"outcome":"inconclusive",
  "cycle_results":[{"cycle":1,"rise_ms":2.1,"pre_cycle_w":0.05},{"cycle":2,"exit_host_late":true},{"cycle":3,"entry_only":true},{"cycle":4,"entry_only":true,"exit_ms":null},{"cycle":5,"exit_ms":6.1}]}}]}`

const measureJSON = `{"devslp":{"1":{"pass":false,"reason":"ignores DEVSLP"},"2":{"verdict":"not_supported"}}}`

func TestExtract(t *testing.T) {
	a, err := extractFrom([]byte(reportJSON), []byte(measureJSON), 1)
	if err != nil {
		t.Fatal(err)
	}
	if *a.ActiveIdleW.V != 0.2 || *a.ActiveIdleW.Lo != 0.19 || *a.ActiveIdleW.Hi != 0.21 || a.Dropped != 2 {
		t.Errorf("port 1: %+v", a)
	}
	if a.DevSlpFloorW.V != nil || a.EntryMs.V != nil {
		t.Errorf("port 1 never entered DevSlp, but a floor or entry was read: %+v", a.DevSlpFloorW)
	}
	if a.Verdict != "FAIL" || a.VerdictReason != "ignores DEVSLP" || len(a.Residency) != 2 {
		t.Errorf("port 1: verdict %q (%q), residency %v", a.Verdict, a.VerdictReason, a.Residency)
	}
	b, err := extractFrom([]byte(reportJSON), []byte(measureJSON), 2)
	if err != nil {
		t.Fatal(err)
	}
	if b.ActiveIdleW.V != nil || b.AverageW.Lo == nil || *b.AverageW.Hi != 0.51 || *b.DevSlpFloorW.V != 0.004 || *b.ExitMs.V != 40 || b.Verdict != "NOT SUPPORTED" {
		t.Errorf("port 2: %+v, verdict %q", b, b.Verdict)
	}
	// The nullable form: null is absent, u95 half-widths are intervals,
	// the outcome comes from report.json when measure.json has none.
	c3, err := extractFrom([]byte(reportJSON), []byte(measureJSON), 3)
	if err != nil {
		t.Fatal(err)
	}
	if r := c3.Residency["idle"]; r.Lo == nil || math.Abs(*r.Lo-0.898) > 1e-12 || c3.Residency["background"].Lo != nil {
		t.Errorf("port 3 residency intervals: idle %+v, background %+v", r, c3.Residency["background"])
	}
	if c3.PeakW.Lo == nil || *c3.PeakW.Lo != 1.4 || *c3.PeakW.Hi != 1.52 {
		t.Errorf("port 3 peak interval (peak_ci95_w): %+v", c3.PeakW)
	}
	if c3.DevSlpFloorW.V != nil || c3.ExitMs.V != nil || *c3.ActiveIdleW.Lo != 0.199 || *c3.ActiveIdleW.Hi != 0.201 || c3.Verdict != "NOT SUPPORTED" {
		t.Errorf("port 3: %+v verdict %q", c3, c3.Verdict)
	}
	d4, err := extractFrom([]byte(reportJSON), []byte(measureJSON), 4)
	if err != nil {
		t.Fatal(err)
	}
	if *d4.DevSlpFloorW.V != 0.004 || math.Abs(*d4.DevSlpFloorW.Hi-0.0042) > 1e-15 || d4.EntryMs.Lo != nil || *d4.ExitMs.Lo != 39.5 || d4.Verdict != "INCONCLUSIVE" {
		t.Errorf("port 4: %+v verdict %q", d4, d4.Verdict)
	}
	if want := []bool{false, true, false, true, false}; d4.EntryCycles != 2 || fmt.Sprint(d4.ExitLeftOut) != fmt.Sprint(want) {
		t.Errorf("port 4 cycles: %d entry cycles (want 2), exits left out %v (want %v: cycle 2 host-late, cycle 4 null)", d4.EntryCycles, d4.ExitLeftOut, want)
	}
	if d4.RiseMs.V == nil || *d4.RiseMs.V != 2.1 || math.Abs(*d4.RiseMs.Lo-1.8) > 1e-12 || d4.PreCycleW.V == nil || *d4.PreCycleW.V != 0.05 || d4.PreCycleW.Lo != nil {
		t.Errorf("port 4 rise %+v, pre-cycle %+v", d4.RiseMs, d4.PreCycleW)
	}
	if want := fmt.Sprint([]bool{false, true, true, true, true}); fmt.Sprint(d4.RiseLeftOut) != want || fmt.Sprint(d4.PreLeftOut) != want {
		t.Errorf("port 4: rises left out %v, pre-cycle levels left out %v, want %s (only cycle 1 states them)", d4.RiseLeftOut, d4.PreLeftOut, want)
	}
	if _, err := extractFrom([]byte(reportJSON), []byte(measureJSON), 5); err == nil || !strings.Contains(err.Error(), "port 5") {
		t.Errorf("port 5: %v", err)
	}
	if _, err := extractFrom([]byte("{"), []byte(measureJSON), 1); err == nil || !strings.Contains(err.Error(), "report.json") {
		t.Errorf("bad report.json: %v", err)
	}
}

func FuzzExtract(f *testing.F) {
	f.Add([]byte(reportJSON), []byte(measureJSON), 1)
	f.Add([]byte(`{"drives":[{"port":1,"residency":{"x":[1]},"devslp":{"entered":true,"power_w":"a"}}]}`), []byte(`{"devslp":{"1":{"verdict":3}}}`), 1)
	f.Fuzz(func(t *testing.T, rep, meas []byte, port int) {
		m, err := extractFrom(rep, meas, port)
		if err != nil {
			return
		}
		for _, v := range []Value{m.ActiveIdleW, m.AverageW, m.EnergyJ, m.DevSlpFloorW, m.EntryMs, m.ExitMs, m.RiseMs, m.PreCycleW} {
			if (v.Lo == nil) != (v.Hi == nil) || (v.Lo != nil && v.V == nil) {
				t.Fatalf("half an interval, or an interval without a value: %+v", v)
			}
		}
	})
}

// A hand-built truth file and capture clock: the truth's numbers are the
// segments' own.
func TestDriveTruth(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "truth-p1.jsonl")
	var b bytes.Buffer
	tw := drivesim.NewTruthWriter(&b, drivesim.TruthHeader{Profile: "p", Port: 1})
	ms := func(x float64) time.Duration { return time.Duration(x * 1e6) }
	seg := func(st powerstate.State, a, z float64, w float64) {
		tw.Write(drivesim.Segment{State: st, Start: ms(a), End: ms(z), P5: unitsW(w)})
	}
	seg(powerstate.Idle, 0, 1000, 0.2)
	seg(powerstate.Slumber, 1000, 2000, 0.05) // pin asserted at 1500 ms
	seg(powerstate.DevSlp, 2000, 3000, 0.004) // entry 500 ms after it; released at 3000
	seg(powerstate.Wake, 3000, 3040, 1.0)     // 40 ms wake
	seg(powerstate.Active, 3040, 3040.5, 1.5) // the probe read
	seg(powerstate.Idle, 3040.5, 10000, 0.2)
	if err := tw.Flush(); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, b.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	// Samples 0 … 79999 at 10 kS/s, index 0 at emulator time 1 s: window 1–9 s.
	rc := &runClock{rate: 10000, e0: time.Second, ports: map[int]*portSpan{1: {first: 0, last: 79999, count: 80000, seen: true,
		runs: [][2]uint64{{0, 80000}},
		pins: []meter.Event{{Kind: meter.EventDevSlp, Port: 1, Index: 5000, Value: 1}, {Kind: meter.EventDevSlp, Port: 1, Index: 20000, Value: 0}}}}}
	p := drivesim.Profile{ActiveIdleW: 0.2, DevSlpW: 0.004, DevSlpSupported: true}
	tr, err := driveTruth(rc, 1, path, p, 0)
	if err != nil {
		t.Fatal(err)
	}
	near := func(name string, got, want float64) {
		if math.Abs(got-want) > 1e-9*math.Max(1, math.Abs(want)) {
			t.Errorf("%s = %v, want %v", name, got, want)
		}
	}
	near("window", tr.WindowS, 8)
	e := 1*0.05 + 1*0.004 + 0.04*1.0 + 0.0005*1.5 + (9-3.0405)*0.2
	near("energy", tr.EnergyJ, e)
	near("average", tr.AverageW, e/8)
	near("slumber residency", tr.Residency["slumber"], 1.0/8)
	near("idle time", tr.IdleS, 9-3.0405)
	if tr.EntryMs == nil || tr.ExitMs == nil || tr.DevSlpFloorW == nil {
		t.Fatalf("no entry, exit or floor: %+v", tr)
	}
	near("entry", *tr.EntryMs, 500)
	near("exit", *tr.ExitMs, 40.5)
	near("floor", *tr.DevSlpFloorW, 0.004)
	// A working drive, but its one cycle entered 500 ms after the pin,
	// past the 100 ms entry bound: verification truly fails it.
	if tr.Cycles != 1 || tr.Entered != 1 || tr.LateEntries != 1 || tr.Verdict != "FAIL" {
		t.Errorf("cycles %d entered %d late %d verdict %s", tr.Cycles, tr.Entered, tr.LateEntries, tr.Verdict)
	}

	// Samples 0.5–1.5 s into the window missing (the Slumber second, from
	// emulator time 1.5 s to 2.5 s): the truth leaves them out as the
	// report does.
	ps := rc.ports[1]
	ps.runs, ps.count = [][2]uint64{{0, 5000}, {15000, 80000}}, 70000
	tr, err = driveTruth(rc, 1, path, p, 0)
	if err != nil {
		t.Fatal(err)
	}
	e -= 0.5*0.05 + 0.5*0.004
	near("window with a gap", tr.WindowS, 7)
	near("energy with a gap", tr.EnergyJ, e)
	near("slumber residency with a gap", tr.Residency["slumber"], 0.5/7)
	if tr.Dropped != 10000 {
		t.Errorf("dropped %d, want 10000", tr.Dropped)
	}
}

func unitsW(w float64) units.Watts { return units.Watts(w) }

func TestNoPTYCannotStart(t *testing.T) {
	old := startCheck
	defer func() { startCheck = old }()
	startCheck = func() error {
		return fmt.Errorf("%w: no pseudo-terminal (open /dev/ptmx: no such device)", ErrCannotStart)
	}
	_, err := Run(context.Background(), Options{Drives: 4, Seed: 1, Out: t.TempDir()})
	if !errors.Is(err, ErrCannotStart) || !strings.Contains(err.Error(), "pseudo-terminal") {
		t.Errorf("got %v, want ErrCannotStart saying why", err)
	}
}

// The truth's residency follows the report's definitions: a request
// outstanding is active whatever the drive's state (the wake it waits
// for), requests closer than the merge gap make one busy interval, a
// transfer running on after the completion is background, and a wake at
// the idle level without a request (after a pin release) is idle.
func TestDriveTruthByReportDefinitions(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "truth-p1.jsonl")
	var b bytes.Buffer
	tw := drivesim.NewTruthWriter(&b, drivesim.TruthHeader{Profile: "p", Port: 1})
	ms := func(x float64) time.Duration { return time.Duration(x * 1e6) }
	seg := func(st powerstate.State, a, z float64, w float64, io bool) {
		tw.Write(drivesim.Segment{State: st, Start: ms(a), End: ms(z), P5: unitsW(w), IO: io})
	}
	seg(powerstate.Slumber, 0, 1000, 0.05, false)
	seg(powerstate.Wake, 1000, 1010, 0.2, true)     // a read waits 10 ms for the wake
	seg(powerstate.Active, 1010, 1011, 1.5, true)   // its transfer
	seg(powerstate.Idle, 1011, 1011.5, 0.2, false)  // 0.5 ms: under the 1 ms merge gap
	seg(powerstate.Active, 1011.5, 1012, 1.5, true) // the next read
	seg(powerstate.Active, 1012, 1013, 1.5, false)  // its transfer runs on past the completion
	seg(powerstate.Idle, 1013, 2000, 0.2, false)
	seg(powerstate.Wake, 2000, 2040, 0.2, false) // a wake with no read waiting
	seg(powerstate.Idle, 2040, 3000, 0.2, false)
	if err := tw.Flush(); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, b.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	rc := &runClock{rate: 10000, e0: 0, ports: map[int]*portSpan{1: {first: 0, last: 29999, count: 30000, seen: true,
		runs: [][2]uint64{{0, 30000}}}}}
	p := drivesim.Profile{ActiveIdleW: 0.2}
	for _, c := range []struct {
		gap                  time.Duration
		active, idle, backgr float64 // ms
	}{
		{time.Millisecond, 12, 3000 - 1000 - 12 - 1, 1},
		{0, 11.5, 3000 - 1000 - 11.5 - 1, 1},
	} {
		tr, err := driveTruth(rc, 1, path, p, c.gap)
		if err != nil {
			t.Fatal(err)
		}
		got := func(k string) float64 { return tr.Residency[k] * 3000 }
		if math.Abs(got("active")-c.active) > 1e-6 || math.Abs(got("idle")-c.idle) > 1e-6 || math.Abs(got("background")-c.backgr) > 1e-6 {
			t.Errorf("merge gap %v: active %.3f idle %.3f background %.3f ms, want %.3f %.3f %.3f", c.gap,
				got("active"), got("idle"), got("background"), c.active, c.idle, c.backgr)
		}
		if w := tr.Residency["wake"]; w != 0 {
			t.Errorf("wake residency %v: a wake is active (read waiting) or idle", w)
		}
	}
}

// With the host's outstanding spans in the truth file, active is their
// time (merged across the gap), not the model's io flags: a completion
// the model learned of 50 ms late is not 50 ms of active.
func TestDriveTruthActiveFromHostSpans(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "truth-p1.jsonl")
	var b bytes.Buffer
	tw := drivesim.NewTruthWriter(&b, drivesim.TruthHeader{Profile: "p", Port: 1})
	ms := func(x float64) time.Duration { return time.Duration(x * 1e6) }
	seg := func(st powerstate.State, a, z float64, w float64, io bool) {
		tw.Write(drivesim.Segment{State: st, Start: ms(a), End: ms(z), P5: unitsW(w), IO: io})
	}
	seg(powerstate.Idle, 0, 100, 0.2, false)
	seg(powerstate.Active, 100, 101, 1.5, true)
	seg(powerstate.Idle, 101, 151, 0.2, true) // the model learned of the completion at 151 ms
	seg(powerstate.Idle, 151, 1000, 0.2, false)
	tw.WriteIO(drivesim.IOSpan{Start: ms(100), End: ms(101.2)}) // the host's stamps
	tw.WriteIO(drivesim.IOSpan{Start: ms(101.7), End: ms(102)}) // 0.5 ms later: merged
	if err := tw.Flush(); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, b.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	rc := &runClock{rate: 10000, e0: 0, ports: map[int]*portSpan{1: {first: 0, last: 9999, count: 10000, seen: true,
		runs: [][2]uint64{{0, 10000}}}}}
	tr, err := driveTruth(rc, 1, path, drivesim.Profile{ActiveIdleW: 0.2}, time.Millisecond)
	if err != nil {
		t.Fatal(err)
	}
	if a := tr.Residency["active"] * 1000; math.Abs(a-2) > 1e-6 {
		t.Errorf("active %.3f ms, want 2 (100–102 ms, the gap merged)", a)
	}
	if i := tr.Residency["idle"] * 1000; math.Abs(i-998) > 1e-6 {
		t.Errorf("idle %.3f ms, want 998", i)
	}
}

// An error beyond the goal is "unresolved" only when the report's own
// interval is wider than the goal and holds the truth; it still breaks.
func TestSummariseUnresolved(t *testing.T) {
	f := func(v float64) *float64 { return &v }
	b := func(v bool) *bool { return &v }
	cs := []Check{
		{Metric: "entry_ms", Truth: f(0), Measured: f(6.8), Lo: f(-16), Hi: f(29.8), Err: f(6.8), Tol: 1, Status: StatusBreak, Held: b(true)},
		{Metric: "entry_ms", Truth: f(0), Measured: f(3), Lo: f(2.5), Hi: f(3.5), Err: f(3), Tol: 1, Status: StatusBreak, Held: b(false)},
		{Metric: "entry_ms", Truth: f(0), Measured: f(0.1), Lo: f(0), Hi: f(0.2), Err: f(0.1), Tol: 1, Status: StatusOK, Held: b(true)},
	}
	s := summarise("entry_ms", cs)
	if s.Breaks != 2 || s.Unresolved != 1 || s.Met {
		t.Errorf("breaks %d, unresolved %d, met %v; want 2, 1, false", s.Breaks, s.Unresolved, s.Met)
	}
}

// TestCycleSummary: the campaign counts the cycles the meter saw per
// cycled drive, and how many drives ran more than planned.
func TestCycleSummary(t *testing.T) {
	var rs []DriveResult
	for _, n := range []int{4, 0, 4, 9, 16, 4} {
		rs = append(rs, DriveResult{Truth: &Truth{Cycles: n}, Measured: &Measured{EntryCycles: max(0, n-4)}})
	}
	c := summariseCampaign(Options{Phases: DefaultPhases()}, rs, time.Second)
	want := CycleSummary{Drives: 5, Planned: 4, Extended: 2, Median: 4, Max: 16, Total: 37, EntryCycles: 17, EntryU95Ms: 0.5}
	if c.Cycles != want {
		t.Errorf("cycles %+v, want %+v", c.Cycles, want)
	}
	var b strings.Builder
	c.Markdown(&b)
	if !strings.Contains(b.String(), "5 drives cycled, 4 cycles planned each; 2 ran more, until the entry was resolved to 0.5 ms") ||
		!strings.Contains(b.String(), "37 in all, 17 of them entry cycles") {
		t.Errorf("accuracy.md does not say how many cycles ran:\n%s", b.String())
	}
}

// TestActiveIdlePhaseSummary: the campaign reads each hub's active-idle
// phase from report.json (once per hub) and counts the hubs whose phase
// ran on.
func TestActiveIdlePhaseSummary(t *testing.T) {
	rep := func(d float64) []byte {
		return []byte(fmt.Sprintf(`{"drives":[{"port":1,"active_idle_w":0.2,"phases":[{"name":"idle:max_performance","duration_s":%g},{"name":"idle","duration_s":9}]}]}`, d))
	}
	var rs []DriveResult
	for i, d := range []float64{1.0, 1.0, 3.5, 4.0} {
		m, err := extractFrom(rep(d), []byte(`{}`), 1)
		if err != nil {
			t.Fatal(err)
		}
		if m.ActiveIdlePhaseS != d {
			t.Fatalf("phase %v s read as %v", d, m.ActiveIdlePhaseS)
		}
		// Two drives of each hub: the hub counts once.
		for range 2 {
			rs = append(rs, DriveResult{Dir: fmt.Sprint("hub-", i), Measured: &m})
		}
	}
	c := summariseCampaign(Options{Phases: DefaultPhases()}, rs, time.Second)
	want := PhaseSummary{Hubs: 4, PlannedS: 1, MaxS: 4, Extended: 2, MedianS: 3.5, LongestS: 4}
	if c.ActiveIdle != want {
		t.Errorf("phases %+v, want %+v", c.ActiveIdle, want)
	}
	var b strings.Builder
	c.Markdown(&b)
	if !strings.Contains(b.String(), "4 hubs, 1.0 s planned; 2 ran longer") {
		t.Errorf("accuracy.md does not say how long the active-idle phases ran:\n%s", b.String())
	}
}

// The truth's verdict applies the entry bound to what the drive did: a
// working drive that entered late in one cycle (busy when the pin was
// asserted) fails; a broken or unsupported one keeps its verdict.
func TestTruthVerdictLateEntry(t *testing.T) {
	for _, c := range []struct {
		mode string
		late int
		want string
	}{
		{drivesim.DevSlpModeWorking, 0, "PASS"},
		{drivesim.DevSlpModeWorking, 1, "FAIL"},
		{drivesim.DevSlpModeBroken, 0, "FAIL"},
		{drivesim.DevSlpModeUnsupported, 0, "NOT SUPPORTED"},
		{drivesim.DevSlpModeUnsupported, 2, "NOT SUPPORTED"},
	} {
		if got := truthVerdict(c.mode, c.late); got != c.want {
			t.Errorf("mode %s, %d late entries: %s, want %s", c.mode, c.late, got, c.want)
		}
	}
}

// TestRescoreScoresThisBuildsVerdict: a rescore scores the verdict of the
// analysis it ran (report.json's devslp.outcome), not the run's live one
// kept in measure.json — before, every rescore scored the capture build's
// verdicts, so a change of the judge was never seen in a rescore (campaign
// seed 23 drive 48 stayed a false FAIL after the fix that makes it
// INCONCLUSIVE).
func TestRescoreScoresThisBuildsVerdict(t *testing.T) {
	dir := t.TempDir()
	rep := `{"settings": {"merge_gap_ms": 1}, "drives": [{"port": 1, "active_idle_w": 0.2, "average_w": 0.1, "energy_j": 1,
		"devslp": {"outcome": "inconclusive", "reason": "cycle 9: the host stalled"}}]}`
	meas := `{"devslp": {"1": {"outcome": "fail", "reason": "cycle 9: the drive answered 15.7 ms after deassertion"}}}`
	for name, body := range map[string]string{"report.json": rep, "measure.json": meas} {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	m, err := Extract(dir, 1)
	if err != nil {
		t.Fatal(err)
	}
	if m.Verdict != "FAIL" {
		t.Fatalf("Extract of a run's outputs: verdict %q, want the live FAIL", m.Verdict)
	}
	r := DriveResult{Case: Case{Port: 1}, Truth: &Truth{Verdict: "PASS"}}
	rescored(&r, dir, nil)
	if r.Verdict != "inconclusive" || r.Measured == nil || r.Measured.Verdict != "INCONCLUSIVE" || !strings.Contains(r.Measured.VerdictReason, "host stalled") {
		t.Errorf("rescored: outcome %q, measured %+v; want the report's INCONCLUSIVE", r.Verdict, r.Measured)
	}
}
