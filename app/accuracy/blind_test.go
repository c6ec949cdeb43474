package accuracy

import (
	"bytes"
	"encoding/json"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/idlewatt/idlewatt/meter"
	"github.com/idlewatt/idlewatt/states/drivesim"
	"github.com/idlewatt/idlewatt/states/powerstate"
)

// Every block of 8 drives has every noise family once; a hub with a
// quantised drive has coarse 16-bit sensors, the others fine 20-bit ones,
// each with the range its drives need; every drawn drive is in the space.
func TestDrawCaseNoiseFamiliesAndSensors(t *testing.T) {
	for _, seed := range []uint64{1, 7} {
		for b := range 30 {
			seen := map[string]bool{}
			for i := 8 * b; i < 8*b+8; i++ {
				c := DrawCase(seed, i)
				seen[c.Family] = true
				if err := c.Profile.InSpace(); err != nil {
					t.Fatalf("seed %d drive %d (%s): %v", seed, i, c.Family, err)
				}
				hubQuant := false
				for j := c.Hub * HubSize; j < (c.Hub+1)*HubSize; j++ {
					hubQuant = hubQuant || noiseFamily(seed, j) == drivesim.FamilyQuantised
				}
				lsb, full := c.Meter.LSB5VA, 524287.0
				switch {
				case hubQuant && c.Meter.Format == "16-bit":
					full = 32767
					if lsb < 25e-6 || lsb > 50e-6 {
						t.Errorf("drive %d: a quantised hub's LSB %g µA", i, lsb*1e6)
					}
				case !hubQuant && c.Meter.Format == "20-bit packed":
					if lsb < 1e-6 || lsb > 16e-6 {
						t.Errorf("drive %d: LSB %g µA", i, lsb*1e6)
					}
				default:
					t.Errorf("drive %d: format %s on a hub with a quantised drive: %v", i, c.Meter.Format, hubQuant)
				}
				if peak5A(c.Profile)+0.02 > lsb*full {
					t.Errorf("drive %d: 5 V peak %.3f A beyond the sensor's %.3f A", i, peak5A(c.Profile), lsb*full)
				}
				if (c.Family == drivesim.FamilyDrift) != (c.Calibration != nil) {
					t.Errorf("drive %d (%s): stated calibration %v", i, c.Family, c.Calibration)
				}
				if c.Family == drivesim.FamilyQuantised && c.Profile.NoiseMA > 0.5*lsb*1e3 {
					t.Errorf("drive %d: quantised noise %g mA over half an LSB", i, c.Profile.NoiseMA)
				}
			}
			if len(seen) != len(drivesim.Families) {
				t.Errorf("seed %d block %d: families %v", seed, b, seen)
			}
		}
	}
}

// Blind by construction: the rig's configuration names no profile and
// carries the model only in DriveConfig.Sim, which is not recorded; what
// the capture header gets (the configuration as JSON) holds nothing of it.
func TestRigConfigHidesTheModel(t *testing.T) {
	j := hubJob{name: "h", cases: []Case{DrawCase(3, 8), DrawCase(3, 9)}}
	cfg := rigConfig(j, ShortPhases())
	if len(cfg.Profiles) != 0 {
		t.Errorf("the rig gets profiles: %v", cfg.Profiles)
	}
	b, err := json.Marshal(cfg)
	if err != nil {
		t.Fatal(err)
	}
	for k, d := range cfg.Drives {
		c := j.cases[k]
		if d.Profile != HiddenProfile || d.Sim == nil || d.Sim.Name != c.Profile.Name {
			t.Errorf("drive %d: profile %q, sim %v", k, d.Profile, d.Sim)
		}
		if _, err := drivesim.Lookup(d.Profile, cfg.Profiles); err == nil {
			t.Errorf("drive %d: %q can be looked up", k, d.Profile)
		}
		if bytes.Contains(b, []byte(c.Profile.Name)) || strings.Contains(string(b), `"active_idle_w"`) {
			t.Errorf("the recorded configuration holds drive %d's model: %s", k, b)
		}
	}
	cfg.Defaults()
	if err := cfg.Validate(); err != nil {
		t.Errorf("the configuration does not validate: %v", err)
	}
}

// Rise and pre-cycle truth: the rise ends the DevSlp state (MDAT may hold
// it past the release); the pre-cycle level is the resting power of the
// 300 ms before the pin, a GC burst left out.
func TestDriveTruthRiseAndPreCycle(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "truth-p1.jsonl")
	var b bytes.Buffer
	tw := drivesim.NewTruthWriter(&b, drivesim.TruthHeader{Profile: "p", Port: 1})
	ms := func(x float64) time.Duration { return time.Duration(x * 1e6) }
	seg := func(st powerstate.State, a, z float64, w float64, gc bool) {
		tw.Write(drivesim.Segment{State: st, Start: ms(a), End: ms(z), P5: unitsW(w), GC: gc})
	}
	seg(powerstate.Idle, 0, 1000, 0.2, false)
	seg(powerstate.Slumber, 1000, 1300, 0.05, false)
	seg(powerstate.Slumber, 1300, 1400, 0.5, true) // a GC burst 200–100 ms before the pin
	seg(powerstate.Slumber, 1400, 2000, 0.05, false)
	seg(powerstate.DevSlp, 2000, 3003, 0.004, false) // released at 3000: leaves at 3003 (MDAT)
	seg(powerstate.Wake, 3003, 3040, 1.0, false)
	seg(powerstate.Active, 3040, 3040.5, 1.5, false)
	seg(powerstate.Idle, 3040.5, 5000, 0.2, false)
	seg(powerstate.Partial, 5000, 5200, 0.1, false) // second cycle: pin at 5200, no DevSlp
	seg(powerstate.Idle, 5200, 10000, 0.2, false)
	if err := tw.Flush(); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, b.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	pins := []meter.Event{{Kind: meter.EventDevSlp, Port: 1, Index: 5000, Value: 1}, {Kind: meter.EventDevSlp, Port: 1, Index: 20000, Value: 0},
		{Kind: meter.EventDevSlp, Port: 1, Index: 42000, Value: 1}, {Kind: meter.EventDevSlp, Port: 1, Index: 43000, Value: 0}}
	rc := &runClock{rate: 10000, e0: time.Second, ports: map[int]*portSpan{1: {first: 0, last: 79999, count: 80000, seen: true,
		runs: [][2]uint64{{0, 80000}}, pins: pins}}}
	tr, err := driveTruth(rc, 1, path, drivesim.Profile{ActiveIdleW: 0.2, DevSlpW: 0.004, DevSlpSupported: true}, 0)
	if err != nil {
		t.Fatal(err)
	}
	if tr.RiseMs == nil || math.Abs(*tr.RiseMs-3) > 1e-9 {
		t.Errorf("rise %v, want 3 ms", tr.RiseMs)
	}
	if len(tr.CyclePreW) != 2 || tr.CyclePreW[0] == nil || math.Abs(*tr.CyclePreW[0]-0.05) > 1e-12 {
		t.Fatalf("cycle 1 pre-cycle %v, want 0.05 W (the GC burst left out)", tr.CyclePreW)
	}
	// Cycle 2: 5.2 s; its 300 ms: idle 4.9–5.0, Partial 5.0–5.2.
	if p := tr.CyclePreW[1]; p == nil || math.Abs(*p-(0.1*0.2+0.2*0.1)/0.3) > 1e-12 {
		t.Errorf("cycle 2 pre-cycle %v", p)
	}
	if tr.PreCycleW == nil || math.Abs(*tr.PreCycleW-(0.05+0.4/3)/2) > 1e-12 {
		t.Errorf("pooled pre-cycle %v", tr.PreCycleW)
	}
	if len(tr.CycleRiseMs) != 2 || tr.CycleRiseMs[1] != nil {
		t.Errorf("a cycle without DevSlp has a rise: %v", tr.CycleRiseMs)
	}

	// Compared over the cycles the report pooled.
	m := &Measured{RiseMs: Value{V: fp(3.4), Lo: fp(2.9), Hi: fp(3.9)}, PreCycleW: Value{V: fp(0.0502)}, PreLeftOut: []bool{false, true}, RiseLeftOut: []bool{false, false}}
	got := map[string]Check{}
	for _, c := range compare(tr, m) {
		got[c.Metric] = c
	}
	if c := got["rise_ms"]; c.Status != StatusOK || c.Held == nil || !*c.Held {
		t.Errorf("rise check %+v", c)
	}
	if c := got["pre_cycle_w"]; c.Status != StatusOK || math.Abs(*c.Truth-0.05) > 1e-12 || c.Held != nil {
		t.Errorf("pre-cycle check %+v: cycle 2 is left out by the report, so the truth is cycle 1's 0.05 W", c)
	}
	m.PreCycleW.V = fp(0.06) // 20 %: beyond max(0.2 mW, 3 %)
	for _, c := range compare(tr, m) {
		if c.Metric == "pre_cycle_w" && c.Status != StatusBreak {
			t.Errorf("a pre-cycle level 10 mW off: %s", c.Status)
		}
	}
}

// The table per noise family: each family's coverage per quantity, the
// goals ≥ 90 % per family and quantity, and the short-run note.
func TestFamilyTable(t *testing.T) {
	held, missed := true, false
	mk := func(fam string, h *bool, off bool) DriveResult {
		st := StatusOK
		e := 0.1
		if off {
			st, e = StatusBreak, 3
		}
		return DriveResult{Case: Case{Family: fam}, Truth: &Truth{Verdict: "PASS"}, Measured: &Measured{Verdict: "PASS"}, Verdict: "right",
			Checks: []Check{{Metric: "rise_ms", Unit: "ms", Truth: fp(1), Measured: fp(1 + e), Lo: fp(0), Hi: fp(2), Err: fp(e), Tol: 1, Status: st, Held: h}}}
	}
	var rs []DriveResult
	for range 10 {
		rs = append(rs, mk(drivesim.FamilyWhite, &held, false))
	}
	for k := range 4 {
		h := &held
		if k == 0 {
			h = &missed
		}
		rs = append(rs, mk(drivesim.FamilyAR1, h, k == 1))
	}
	c := summariseCampaign(Options{Phases: ShortPhases()}, rs, time.Second)
	if len(c.Families) != 2 || c.Families[0].Family != drivesim.FamilyWhite || c.Families[1].Family != drivesim.FamilyAR1 {
		t.Fatalf("families %+v", c.Families)
	}
	w, a := c.Families[0], c.Families[1]
	if !w.Met || a.Met || a.Drives != 4 || *a.Metrics[0].Coverage != 0.75 || a.Metrics[0].Breaks != 1 {
		t.Errorf("white %+v\nar1 %+v", w, a)
	}
	// Overall 13 of 14 (92.9 %) is above 90 % for the quantity, below 93 %
	// overall; ar1's 3 of 4 misses the per-family goal.
	all := strings.Join(c.Missed, "\n")
	for _, want := range []string{"family ar1: 95 % intervals hold the truth in under 90 % (or are not stated) for rise_ms 3/4", "≥ 93 %", "rise_ms ±max(1 ms, 3 %): 1 of 14 drives off goal"} {
		if !strings.Contains(all, want) {
			t.Errorf("goals missed lack %q:\n%s", want, all)
		}
	}
	if strings.Contains(all, "family white") || strings.HasPrefix(all, "rise_ms: 95") || strings.Contains(all, "\nrise_ms: 95") {
		t.Errorf("a goal that held is listed as missed:\n%s", all)
	}
	var md, tb strings.Builder
	c.Markdown(&md)
	c.Table(&tb)
	for _, s := range []string{md.String(), tb.String()} {
		if !strings.Contains(s, "not expected to meet the goals") || !strings.Contains(s, "--short") {
			t.Errorf("a short run does not say it is not expected to meet the goals:\n%s", s)
		}
	}
	if !strings.Contains(md.String(), "| rise_ms | 10/10 | 3/4 · 1 off |") || !strings.Contains(md.String(), "| white (10) | ar1 (4) |") {
		t.Errorf("accuracy.md's family table:\n%s", md.String())
	}
	if n := shortNote(DefaultPhases(), 200); n != "" {
		t.Errorf("a full campaign is called short: %s", n)
	}
	if n := shortNote(DefaultPhases(), 24); !strings.Contains(n, "24 drives") {
		t.Errorf("a 24-drive campaign: %q", n)
	}
}

// A working drive busy with a GC burst when the pin is asserted enters
// DevSlp when the burst ends: past the entry bound, its truth verdict is
// FAIL (the cycle truly missed its entry check); within it, PASS.
func TestDriveTruthLateEntryFails(t *testing.T) {
	for _, c := range []struct {
		entryMs float64
		late    int
		verdict string
	}{{50, 0, "PASS"}, {150, 1, "FAIL"}} {
		dir := t.TempDir()
		path := filepath.Join(dir, "truth-p1.jsonl")
		var b bytes.Buffer
		tw := drivesim.NewTruthWriter(&b, drivesim.TruthHeader{Profile: "p", Port: 1})
		ms := func(x float64) time.Duration { return time.Duration(x * 1e6) }
		seg := func(st powerstate.State, a, z float64, w float64, gc bool) {
			tw.Write(drivesim.Segment{State: st, Start: ms(a), End: ms(z), P5: unitsW(w), GC: gc})
		}
		pin := 1500.0 // index 5000 at 10 kS/s from the emulator's 1 s
		seg(powerstate.Slumber, 0, 1400, 0.05, false)
		seg(powerstate.Slumber, 1400, pin+c.entryMs, 1.5, true) // GC across the assertion
		seg(powerstate.DevSlp, pin+c.entryMs, 2000, 0.004, false)
		seg(powerstate.Wake, 2000, 2040, 1.0, false)
		seg(powerstate.Idle, 2040, 9000, 0.2, false)
		if err := tw.Flush(); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, b.Bytes(), 0o644); err != nil {
			t.Fatal(err)
		}
		pins := []meter.Event{{Kind: meter.EventDevSlp, Port: 1, Index: 5000, Value: 1}, {Kind: meter.EventDevSlp, Port: 1, Index: 10000, Value: 0}}
		rc := &runClock{rate: 10000, e0: time.Second, ports: map[int]*portSpan{1: {first: 0, last: 69999, count: 70000, seen: true,
			runs: [][2]uint64{{0, 70000}}, pins: pins}}}
		tr, err := driveTruth(rc, 1, path, drivesim.Profile{ActiveIdleW: 0.2, DevSlpW: 0.004, DevSlpSupported: true}, 0)
		if err != nil {
			t.Fatal(err)
		}
		if tr.EntryMs == nil || math.Abs(*tr.EntryMs-c.entryMs) > 1e-6 {
			t.Errorf("entry %v ms, want %g", tr.EntryMs, c.entryMs)
		}
		if tr.LateEntries != c.late || tr.Verdict != c.verdict {
			t.Errorf("entry %g ms: %d late entries, verdict %s; want %d, %s", c.entryMs, tr.LateEntries, tr.Verdict, c.late, c.verdict)
		}
	}
}
