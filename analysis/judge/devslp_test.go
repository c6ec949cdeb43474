package judge

import (
	"github.com/idlewatt/idlewatt/internal/stat"
	"math"
	"math/rand/v2"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/idlewatt/idlewatt/hostclock"
	"github.com/idlewatt/idlewatt/internal/testlong"
	"github.com/idlewatt/idlewatt/units"
)

// synthCycle renders one DevSlp cycle at 10 kS/s: slumber with GC bursts
// before the pin, the floor from assert+entry, a wake spike and wake power
// from deassert+rise, Gaussian noise of sigma and quantisation to lsb.
func synthCycle(seed uint64, floor, sigma, lsb float64, entry, rise time.Duration) (Timing, []Sample) {
	rng := rand.New(rand.NewPCG(seed, 7))
	const period = hostclock.Time(100 * time.Microsecond)
	tm := Timing{Cycle: 1, Start: 0, Assert: hostclock.Time(800 * time.Millisecond), Deassert: hostclock.Time(1400 * time.Millisecond), End: hostclock.Time(2000 * time.Millisecond)}
	tm.ProbeIssue = tm.Deassert + hostclock.Time(100*time.Microsecond)
	tm.ProbeComplete = tm.Deassert + hostclock.Time(rise) + hostclock.Time(20*time.Millisecond)
	var out []Sample
	for t := hostclock.Time(0); t < tm.End; t += period {
		w := 0.05
		switch {
		case t < tm.Assert && (t/hostclock.Time(time.Millisecond))%300 < 20:
			w = 0.6 // GC burst
		case t >= tm.Assert+hostclock.Time(entry) && t < tm.Deassert+hostclock.Time(rise):
			w = floor
		case t >= tm.Deassert+hostclock.Time(rise) && t < tm.Deassert+hostclock.Time(rise)+hostclock.Time(2*time.Millisecond):
			w = 1.2
		case t >= tm.Deassert+hostclock.Time(rise) && t < tm.ProbeComplete+hostclock.Time(time.Millisecond):
			w = 0.2
		}
		w += sigma * rng.NormFloat64()
		w = math.Round(w/lsb) * lsb
		out = append(out, Sample{T: t, W: w})
	}
	return tm, out
}

func TestJudgeNoisyQuantisedCycle(t *testing.T) {
	// 3 mA σ on 5 V = 15 mW; LSB 50 µA = 0.25 mW; floor 1.2 mW ≈ 5 counts.
	const floor, sigma, lsb = 0.0012, 0.015, 0.00025
	cr := DefaultCriteria()
	cr.DETOMs = 400
	var floorHeld, entryHeld, riseHeld, n int
	for seed := uint64(1); seed <= 40; seed++ {
		entry, rise := time.Duration(seed%7)*time.Millisecond, time.Duration(seed%3)*time.Millisecond
		tm, s := synthCycle(seed, floor, sigma, lsb, entry, rise)
		c := Judge(tm, s, JudgeOptions{Criteria: cr, ClockU95Ms: 0.1})
		if c.Outcome != Pass {
			t.Fatalf("seed %d: %s %v", seed, c.Outcome, c.Reasons)
		}
		n++
		if math.Abs(float64(c.FloorW)-floor) <= float64(c.FloorU95W) {
			floorHeld++
		}
		if math.Abs(float64(c.EntryMs)-entry.Seconds()*1e3) <= float64(c.EntryU95Ms) {
			entryHeld++
		}
		if math.Abs(float64(c.RiseMs)-rise.Seconds()*1e3) <= float64(c.RiseU95Ms) {
			riseHeld++
		}
		if e := math.Abs(float64(c.FloorW) - floor); e > 0.0006 {
			t.Errorf("seed %d: floor %.3f mW, truth 1.2 (error %.3f mW)", seed, float64(c.FloorW)*1e3, e*1e3)
		}
		if e := math.Abs(float64(c.EntryMs) - entry.Seconds()*1e3); e > 1 {
			t.Errorf("seed %d: entry %.2f ms, truth %v", seed, float64(c.EntryMs), entry)
		}
	}
	t.Logf("95 %% intervals holding the truth over %d cycles: floor %d, entry %d, rise %d", n, floorHeld, entryHeld, riseHeld)
	for name, h := range map[string]int{"floor": floorHeld, "entry": entryHeld, "rise": riseHeld} {
		if float64(h) < 0.85*float64(n) {
			t.Errorf("%s interval held the truth in %d of %d cycles", name, h, n)
		}
	}
}

func TestJudgeOutcomes(t *testing.T) {
	cr := DefaultCriteria()
	cr.DETOMs = 400
	// A drive that ignores the pin: its floor stays at slumber.
	tm, s := synthCycle(3, 0.05, 0.005, 0.00025, 0, 0)
	if c := Judge(tm, s, JudgeOptions{Criteria: cr}); c.Outcome != Fail || c.FloorW.Ok() {
		t.Errorf("ignored pin: %s %v floor %v, want fail and no floor", c.Outcome, c.Reasons, c.FloorW)
	}
	// A floor whose interval straddles the limit is inconclusive, one
	// clearly above it fails.
	tm, s = synthCycle(4, 0.005, 0.015, 0.00025, 0, 0)
	c := Judge(tm, s, JudgeOptions{Criteria: cr})
	if c.Outcome != Inconclusive {
		t.Errorf("floor at the limit: %s %v", c.Outcome, c.Reasons)
	}
	tm, s = synthCycle(4, 0.009, 0.015, 0.00025, 0, 0)
	if c := Judge(tm, s, JudgeOptions{Criteria: cr}); c.Outcome != Fail {
		t.Errorf("floor above the limit: %s %v", c.Outcome, c.Reasons)
	}
	// Entry late by far more than its uncertainty fails.
	tm, s = synthCycle(5, 0.0012, 0.015, 0.00025, 150*time.Millisecond, 0)
	if c := Judge(tm, s, JudgeOptions{Criteria: cr}); c.Outcome != Fail || math.Abs(float64(c.EntryMs)-150) > 1 {
		t.Errorf("late entry: %s %v entry %v", c.Outcome, c.Reasons, c.EntryMs)
	}
}

func TestSummariseOutcomes(t *testing.T) {
	cr := DefaultCriteria()
	cr.DETOMs = 400
	jo := JudgeOptions{Criteria: cr}
	tm, s := synthCycle(6, 0.0012, 0.015, 0.00025, 0, 0)
	pass := Judge(tm, s, jo)
	tm, s = synthCycle(6, 0.009, 0.015, 0.00025, 0, 0)
	fail := Judge(tm, s, jo)
	if v := Summarise([]Cycle{pass, pass}, cr, "yes", ""); v.Outcome != Pass || !v.FloorW.Ok() {
		t.Errorf("two passes: %v", v)
	}
	if v := Summarise([]Cycle{pass, fail}, cr, "yes", ""); v.Outcome != Fail || v.Passed != 1 {
		t.Errorf("pass+fail: %v", v)
	}
	if v := Summarise([]Cycle{fail}, cr, "yes", "policy not applied"); v.Outcome != Inconclusive {
		t.Errorf("host cause: %v", v)
	}
	if v := Summarise(nil, cr, "no (IDENTIFY word 78 bit 8 clear)", ""); v.Outcome != NotSupported {
		t.Errorf("not supported: %v", v)
	}
	if v := Summarise(nil, cr, "yes", ""); v.Outcome != Inconclusive || v.FloorW.Ok() {
		t.Errorf("no cycles: %v", v)
	}
}

func TestJudgeLateReadHostStall(t *testing.T) {
	cr := DefaultCriteria()
	cr.DETOMs = 400
	tm, s := synthCycle(8, 0.0012, 0.015, 0.00025, 0, 0)
	tm.ProbeComplete = tm.Deassert + hostclock.Time(500*time.Millisecond)
	if c := Judge(tm, s, JudgeOptions{Criteria: cr}); c.Outcome != Fail {
		t.Errorf("read 500 ms after release, DETO 400 ms: %s %v, want fail", c.Outcome, c.Reasons)
	}
	// The host stalled 200 ms while the read was out: it may be the host's.
	tm.HostStallMs = 200
	c := Judge(tm, s, JudgeOptions{Criteria: cr})
	if c.Outcome != Inconclusive || len(c.Reasons) == 0 || !strings.Contains(c.Reasons[0], "overloaded host") {
		t.Errorf("with a 200 ms host stall: %s %v, want inconclusive naming the host", c.Outcome, c.Reasons)
	}
	// A stall of 20 ms, worst of the canary's 1 ms sleeps: up to 20/21 of
	// the read's 500 ms may be the host's — enough for the 100 ms excess.
	tm.HostStallMs = 20
	if c := Judge(tm, s, JudgeOptions{Criteria: cr}); c.Outcome != Inconclusive {
		t.Errorf("with a 20 ms host stall: %s %v, want inconclusive", c.Outcome, c.Reasons)
	}
	// A stall too short to explain the excess: still the drive's (at most
	// 1.2/2.2 of a 1000 ms read is the host's: 455 ms left, DETO 400).
	tm.ProbeComplete = tm.Deassert + hostclock.Time(1000*time.Millisecond)
	tm.HostStallMs = 1.2
	if c := Judge(tm, s, JudgeOptions{Criteria: cr}); c.Outcome != Fail {
		t.Errorf("1000 ms read with a 1.2 ms host stall: %s %v, want fail", c.Outcome, c.Reasons)
	}
}

// An exit just past DETO is not a FAIL while the host's share of the
// read's time could make up the excess: below 1 ms at each of the read's
// two scheduling points (the canary records no smaller stall) as campaign
// drives 1:95 and 1:143 (3.5 ms for DETO 3 ms,
// 2.3 ms for DETO 2 ms, the model's exits 2.7 and 1.5 ms), or several
// stalls adding up, as drive 1:139 (84.2 ms with a worst stall of 43.6 ms,
// DETO 25 ms, the model's 21 ms).
func TestExitNearDETOWithHostShareInconclusive(t *testing.T) {
	for _, tc := range []struct {
		exitMs          float64
		stallMs, detoMs units.Milliseconds
		want            Outcome
	}{
		{3.5, 0, 3, Inconclusive},
		{2.3, 0, 2, Inconclusive},
		{84.2, 43.6, 25, Inconclusive},
		{2.85, 0, 3, Pass}, // 2.85 ± 0.115 ms: the clock's 0.1 ms and the release's stamp to the nearest 0.1 ms sample
		// Two unrecorded delays (issue, completion) of under 1 ms each:
		// campaign seed 30 drive 190, 5.13 ms for DETO 4 ms, a true 3.96.
		{5.13, 0, 4, Inconclusive},
		{5, 0, 3, Inconclusive},
		{5.5, 0, 3, Fail},
		{60, 0, 25, Fail},
	} {
		cr := DefaultCriteria()
		cr.DETOMs = tc.detoMs
		tm, s := synthCycle(13, 0.0012, 0.015, 0.00025, 0, 0)
		tm.ProbeComplete = tm.Deassert + hostclock.Time(tc.exitMs*1e6)
		tm.HostStallMs = tc.stallMs
		c := Judge(tm, s, JudgeOptions{Criteria: cr, ClockU95Ms: 0.1})
		if c.Outcome != tc.want {
			t.Errorf("exit %.1f ms, host stall %.1f ms, DETO %.0f ms: %s %v, want %s", tc.exitMs, tc.stallMs, tc.detoMs, c.Outcome, c.Reasons, tc.want)
		}
	}
}

func TestJudgeLateProbeAndGCBeforeAssert(t *testing.T) {
	cr := DefaultCriteria()
	cr.DETOMs = 400
	// The host sat on the read: issued 300 ms after the release (> DETO/2).
	tm, s := synthCycle(9, 0.0012, 0.015, 0.00025, 0, 0)
	tm.ProbeIssue = tm.Deassert + hostclock.Time(300*time.Millisecond)
	tm.ProbeComplete = tm.ProbeIssue + hostclock.Time(150*time.Millisecond)
	c := Judge(tm, s, JudgeOptions{Criteria: cr})
	if c.Outcome != Inconclusive || !c.ExitHostLate || !strings.Contains(strings.Join(c.Reasons, ";"), "overloaded host") {
		t.Errorf("late read: %s %v, want inconclusive blaming the host", c.Outcome, c.Reasons)
	}
	if v := Summarise([]Cycle{c}, cr, "yes", ""); v.ExitMs.Ok() {
		t.Errorf("pooled exit %v from a host-late cycle, want null", v.ExitMs)
	}
	// A 150 ms GC burst at 1.1 W ending as the pin is asserted: the
	// pre-cycle level stays the 50 mW resting power.
	tm, s = synthCycle(10, 0.0012, 0.015, 0.00025, 0, 0)
	for i := range s {
		if s[i].T >= tm.Assert-hostclock.Time(150*time.Millisecond) && s[i].T < tm.Assert {
			s[i].W = 1.1
		}
	}
	c = Judge(tm, s, JudgeOptions{Criteria: cr})
	if c.Outcome != Pass || math.Abs(float64(c.PreCycleW)-0.05) > 0.003 {
		t.Errorf("GC before the pin: %s %v, pre-cycle %.4f W, want pass at 0.050 W", c.Outcome, c.Reasons, float64(c.PreCycleW))
	}
}

// A drive that ignores the pin never entered DevSlp: the read after the
// release measures a Slumber (or active) exit, not a DevSlp exit, so
// exit_ms is null in the cycle and the verdict (issue 12: "never a number
// from another state"); a failed read still fails, and a drive that fell
// to a level not clearly a floor reports no exit either.
func TestExitNullWithoutDevSlp(t *testing.T) {
	cr := DefaultCriteria()
	cr.DETOMs = 400
	jo := JudgeOptions{Criteria: cr, ClockU95Ms: 0.1}
	tm, s := synthCycle(3, 0.05, 0.005, 0.00025, 0, 0)
	c := Judge(tm, s, jo)
	if c.Outcome != Fail || c.ExitMs.Ok() || c.ExitU95Ms.Ok() {
		t.Errorf("ignored pin: %s %v exit %v ± %v, want fail and a null exit", c.Outcome, c.Reasons, c.ExitMs, c.ExitU95Ms)
	}
	if v := Summarise([]Cycle{c, c}, cr, "yes", ""); v.ExitMs.Ok() || v.ExitU95Ms.Ok() {
		t.Errorf("verdict of a drive that never entered: exit %v ± %v, want null", v.ExitMs, v.ExitU95Ms)
	}
	tm.ProbeErr = true
	if c := Judge(tm, s, jo); c.Outcome != Fail || !strings.Contains(strings.Join(c.Reasons, ";"), "read after deassertion failed") {
		t.Errorf("ignored pin, failed read: %s %v, want the failed read named", c.Outcome, c.Reasons)
	}
	// Down to the pre-cycle level ÷ √2 (35.4 mW against 50 mW), noisy
	// enough that the fall is not clearly below it — no floor, no exit.
	tm, s = synthCycle(11, 0.05/math.Sqrt2, 0.015, 0.00025, 0, 0)
	c = Judge(tm, s, jo)
	if c.Outcome != Inconclusive || c.FloorW.Ok() || c.ExitMs.Ok() {
		t.Errorf("unclear fall: %s %v floor %v exit %v, want inconclusive, null floor and exit", c.Outcome, c.Reasons, c.FloorW, c.ExitMs)
	}
	// A floor at half the pre-cycle (Slumber) level — the highest the
	// profile space allows — is a floor: its value is reported and judged
	// against the limit, not read as "ignores DEVSLP" or left null.
	tm, s = synthCycle(13, 0.025, 0.015, 0.00025, 0, 0)
	c = Judge(tm, s, jo)
	if !c.FloorW.Ok() || math.Abs(float64(c.FloorW)-0.025) > 0.001 || !c.ExitMs.Ok() ||
		!strings.Contains(strings.Join(c.Reasons, ";"), "above the 5.00 mW limit") {
		t.Errorf("floor at half of Slumber: %s %v floor %v exit %v, want the 25 mW floor judged against the limit", c.Outcome, c.Reasons, c.FloorW, c.ExitMs)
	}
	// A drive that entered still reports its exit.
	tm, s = synthCycle(12, 0.0012, 0.015, 0.00025, 0, 0)
	if c := Judge(tm, s, jo); !c.ExitMs.Ok() || math.Abs(float64(c.ExitMs)-20) > 0.01 {
		t.Errorf("entered: exit %v, want 20 ms", c.ExitMs)
	}
}

// A working drive whose Slumber-to-DevSlp step (5.6 → 1.06 mW) is small
// against its noise (2.9 mA σ on 5 V ≈ 14.6 mW per sample), held 2 s, as
// drive 93 of the seed-1 campaign: it enters at the assertion, so no cycle
// may FAIL the 100 ms entry bound — a change point the data cannot locate
// gives an interval as wide as the search, which is INCONCLUSIVE, not a
// late entry. (The step fit's bootstrap used to be cut at ±40 ms and put
// such cycles at "1557 ± 40 ms after assertion".)
func TestSmallEntryStepUnderNoiseNotFailed(t *testing.T) {
	cr := DefaultCriteria()
	cr.DETOMs = 400
	const period = hostclock.Time(100 * time.Microsecond)
	fails, n, held := 0, 0, 0
	for seed := uint64(1); seed <= 30; seed++ {
		rng := rand.New(rand.NewPCG(seed, 93))
		tm := Timing{Cycle: 1, Assert: hostclock.Time(800 * time.Millisecond), Deassert: hostclock.Time(2800 * time.Millisecond), End: hostclock.Time(3300 * time.Millisecond)}
		tm.ProbeIssue = tm.Deassert + hostclock.Time(100*time.Microsecond)
		tm.ProbeComplete = tm.Deassert + hostclock.Time(5*time.Millisecond)
		var s []Sample
		for t := hostclock.Time(0); t < tm.End; t += period {
			w := 0.0056
			switch {
			case t >= tm.Assert && t < tm.Deassert+hostclock.Time(1400*time.Microsecond):
				w = 0.00106
			case t >= tm.Deassert && t < tm.Deassert+hostclock.Time(5*time.Millisecond):
				w = 0.33
			}
			s = append(s, Sample{T: t, W: math.Round((w+0.0146*rng.NormFloat64())/0.00025) * 0.00025})
		}
		c := Judge(tm, s, JudgeOptions{Criteria: cr, ClockU95Ms: 0.1})
		if c.Outcome == Fail {
			fails++
			t.Errorf("seed %d: %s %v (entry %.1f ± %.1f ms, truth 0)", seed, c.Outcome, c.Reasons, float64(c.EntryMs), float64(c.EntryU95Ms))
		}
		if c.EntryMs.Ok() {
			n++
			if math.Abs(float64(c.EntryMs)) <= float64(c.EntryU95Ms) {
				held++
			}
		}
	}
	t.Logf("%d of 30 cycles failed; the entry's 95 %% interval held the truth 0 in %d of %d", fails, held, n)
	if n < 25 || float64(held) < 0.85*float64(n) {
		t.Errorf("entry measured on %d of 30 cycles, its interval held the truth on %d", n, held)
	}
}

// The meter stamps the pin with the index of the sample it fell in; when
// the samples' times come out a nanosecond below the event's (rounding),
// the change is still searched from that sample: an entry at the pin
// reads 0, not one sample (every campaign entry read 0.1 ms at 10 kS/s).
func TestEntryAtThePinReadsZero(t *testing.T) {
	tm, s := synthCycle(21, 0.002, 0.002, 0.00025, 0, 0)
	for i := range s {
		s[i].T-- // the rounding the sample pass had
	}
	c := Judge(tm, s, JudgeOptions{Criteria: DefaultCriteria()})
	if !c.EntryMs.Ok() || math.Abs(float64(c.EntryMs)) > 0.05 {
		t.Fatalf("entry %v ms, want 0 (the drive entered at the pin)", c.EntryMs)
	}
}

// TestEntryIntervalCoversOffGridChange: the pin's edge and the drive's
// change fall anywhere between sample times (the meter samples the state at
// its sample times and stamps the pin with the nearest sample), so the
// entry's interval must hold the truth in ≥ 93 % of cycles and the pooled
// entry of 4 cycles in ≥ 93 % of drives, for entries of 0–5 ms at any
// sub-sample offset, noise 0–3 mA σ and floors 0.3–10 mW below a 50 mW
// Slumber level; unbiased to within a fifth of a period (the estimate is
// not below 0, which biases entries at the pin up a little). Before (the
// bootstrap alone, the first floor sample as the change): 144 of 240
// cycles and 32 of 60 drives held, mean error +0.051 ms; after, 230 of 240
// and 57 of 60, +0.013 ms.
func TestEntryIntervalCoversOffGridChange(t *testing.T) {
	rng := rand.New(rand.NewPCG(12, 3))
	const period = hostclock.Time(100 * time.Microsecond)
	cr := DefaultCriteria()
	cr.DETOMs = 400
	var n, held, drives, pooledHeld int
	var errSum float64
	for d := range 60 {
		floor := 0.0003 + 0.0097*rng.Float64()
		sigma := 0.015 * rng.Float64()
		entry := 0.0
		if d%2 == 1 {
			entry = 5 * rng.Float64() // ms
		}
		var cycles []Cycle
		for k := range 4 {
			a := hostclock.Time(800*time.Millisecond) + hostclock.Time(rng.Int64N(int64(period))) // the pin's true edge
			c := a + hostclock.Time(entry*1e6)
			stamp := (a + period/2) / period * period // the nearest sample
			tm := Timing{Cycle: k + 1, Assert: stamp, Deassert: stamp + hostclock.Time(600*time.Millisecond), End: stamp + hostclock.Time(1200*time.Millisecond)}
			tm.ProbeIssue = tm.Deassert + period
			tm.ProbeComplete = tm.Deassert + hostclock.Time(20*time.Millisecond)
			var s []Sample
			for ts := hostclock.Time(0); ts < tm.End; ts += period {
				w := 0.05
				switch {
				case ts >= c && ts < a+hostclock.Time(600*time.Millisecond):
					w = floor
				case ts >= a+hostclock.Time(600*time.Millisecond) && ts < tm.ProbeComplete:
					w = 0.2
				}
				s = append(s, Sample{T: ts, W: w + sigma*rng.NormFloat64()})
			}
			cy := Judge(tm, s, JudgeOptions{Criteria: cr, ClockU95Ms: 0.05})
			if !cy.EntryMs.Ok() {
				t.Fatalf("drive %d cycle %d: no entry: %s %v", d, k, cy.Outcome, cy.Reasons)
			}
			n++
			e := float64(cy.EntryMs) - entry
			errSum += e
			if math.Abs(e) <= float64(cy.EntryU95Ms) {
				held++
			}
			cycles = append(cycles, cy)
		}
		v := Summarise(cycles, cr, "", "")
		drives++
		if math.Abs(float64(v.EntryMs)-entry) <= float64(v.EntryU95Ms) {
			pooledHeld++
		} else {
			t.Logf("drive %d: pooled entry %.3f ± %.3f ms, truth %.3f ms (floor %.2f mW, σ %.1f mW)", d, float64(v.EntryMs), float64(v.EntryU95Ms), entry, floor*1e3, sigma*1e3)
		}
	}
	t.Logf("entry interval held: %d of %d cycles, %d of %d pooled; mean error %.4f ms", held, n, pooledHeld, drives, errSum/float64(n))
	if float64(held) < 0.93*float64(n) {
		t.Errorf("entry interval held the truth in %d of %d cycles, want ≥ 93 %%", held, n)
	}
	if float64(pooledHeld) < 0.93*float64(drives) {
		t.Errorf("pooled entry interval held the truth in %d of %d drives, want ≥ 93 %%", pooledHeld, drives)
	}
	if m := errSum / float64(n); math.Abs(m) > 0.02 {
		t.Errorf("mean entry error %.4f ms: biased (a period is 0.1 ms)", m)
	}
}

// TestFloorNotPastReleaseWhenGCFollowsWake: a GC burst (0.6 W, 20 ms)
// starting 5–40 ms after a short wake spike is a larger step than the
// wake, so a single step fit lands on it: the floor is the mean of the
// hold alone (the wake and the power after it were once averaged in, and
// a 0.65 mW floor read up to 2.1 mW), and the rise is the first departure
// from the floor, the wake at the release.
func TestFloorNotPastReleaseWhenGCFollowsWake(t *testing.T) {
	const period = hostclock.Time(100 * time.Microsecond)
	const floor = 0.00065
	cr := DefaultCriteria()
	cr.DETOMs = 400
	rng := rand.New(rand.NewPCG(31, 1))
	for k := range 8 {
		gcAt := time.Duration(5+5*k) * time.Millisecond
		tm := Timing{Cycle: 1, Assert: hostclock.Time(800 * time.Millisecond), Deassert: hostclock.Time(2800 * time.Millisecond), End: hostclock.Time(3400 * time.Millisecond)}
		tm.ProbeIssue = tm.Deassert + period
		tm.ProbeComplete = tm.Deassert + hostclock.Time(1200*time.Microsecond)
		var s []Sample
		for ts := hostclock.Time(0); ts < tm.End; ts += period {
			w := 0.0113 // Slumber
			switch d := ts - tm.Deassert; {
			case ts >= tm.Assert && d < 0:
				w = floor
			case d >= 0 && d < hostclock.Time(300*time.Microsecond):
				w = 0.82 // wake spike
			case d >= 0 && d < hostclock.Time(1200*time.Microsecond):
				w = 0.214 // idle until the read completes
			case d >= hostclock.Time(gcAt) && d < hostclock.Time(gcAt+20*time.Millisecond):
				w = 0.61 // GC burst
			}
			s = append(s, Sample{T: ts, W: w + 0.00015*rng.NormFloat64()})
		}
		c := Judge(tm, s, JudgeOptions{Criteria: cr, ClockU95Ms: 0.05})
		if !c.FloorW.Ok() || math.Abs(float64(c.FloorW)-floor) > 0.00002 {
			t.Errorf("GC %v after the release: floor %.4f ± %.4f mW, truth 0.65 mW (held %.1f ms)", gcAt, float64(c.FloorW)*1e3, float64(c.FloorU95W)*1e3, float64(c.HeldMs))
		}
		// The power rises at the release (the wake spike), not at the GC
		// burst that follows, whose larger step won the single-step fit
		// (rises 15–41 ms late, ± 0.08 ms, on five drives of campaign seed 1).
		if math.Abs(float64(c.RiseMs)) > float64(c.RiseU95Ms)+0.05 {
			t.Errorf("GC %v after the release: power rise %.2f ± %.2f ms, truth 0 (the wake at the release)", gcAt, float64(c.RiseMs), float64(c.RiseU95Ms))
		}
	}
}

// A GC burst covering all but the first 20 ms of the 300 ms before the
// pin, on a drive that ignores DEVSLP (its power stays at the 50 mW
// resting level): the pre-cycle level is the resting power from the
// settle period, and the cycle FAILs as ignoring the pin — not a "floor"
// at the resting level below the burst (accuracy campaign, seed 1, drive
// 73). The same burst before a working drive's pin leaves its floor.
func TestPreCycleLevelUnderLongBurst(t *testing.T) {
	burst := func(s []Sample, tm Timing) {
		for i := range s {
			if s[i].T >= tm.Assert-hostclock.Time(280*time.Millisecond) && s[i].T < tm.Assert {
				s[i].W = 0.12
			}
		}
	}
	tm, s := synthCycle(11, 0.05, 0.007, 0.00025, 0, 0) // floor = resting: broken
	burst(s, tm)
	c := Judge(tm, s, JudgeOptions{Criteria: DefaultCriteria()})
	if c.Outcome != Fail || !strings.Contains(strings.Join(c.Reasons, ";"), "ignores DEVSLP") || c.FloorW.Ok() ||
		math.Abs(float64(c.PreCycleW)-0.05) > 0.002 {
		t.Errorf("broken drive after a long burst: %s %v, pre-cycle %.4f W, floor %v; want FAIL ignoring DEVSLP at 0.050 W, no floor",
			c.Outcome, c.Reasons, float64(c.PreCycleW), c.FloorW)
	}
	tm, s = synthCycle(12, 0.0012, 0.007, 0.00025, 0, 0)
	burst(s, tm)
	cr := DefaultCriteria()
	cr.DETOMs = 400 // the synthetic read completes 20 ms after the release: DETO 20 ms is no margin for the release's sample stamp
	c = Judge(tm, s, JudgeOptions{Criteria: cr})
	if c.Outcome != Pass || math.Abs(float64(c.FloorW)-0.0012) > 0.0003 || math.Abs(float64(c.PreCycleW)-0.05) > 0.002 {
		t.Errorf("working drive after a long burst: %s %v, pre-cycle %.4f W, floor %v", c.Outcome, c.Reasons, float64(c.PreCycleW), c.FloorW)
	}
}

// A floor a few mW below Slumber under 8–13 mW σ (the campaign's entry
// misses): the change point of one cycle is known to ≈ (σ/Δ)² samples,
// several ms. The verdict's entry fits the cycles' mean power, aligned at
// the pin, at once: within max(1 ms, 3 %) of the truth on most drives
// where the mean of the cycles' own fits is not, and its interval holds.
// 12 drives here; TestJointEntryUnderLowSNRLong draws the campaign's 40
// (the same first 12, then 28 more).
func TestJointEntryUnderLowSNR(t *testing.T) { jointEntryUnderLowSNR(t, 12) }

func TestJointEntryUnderLowSNRLong(t *testing.T) {
	testlong.Skip(t)
	jointEntryUnderLowSNR(t, 40)
}

func jointEntryUnderLowSNR(t *testing.T, n int) {
	rng := rand.New(rand.NewPCG(21, 5))
	const period = hostclock.Time(100 * time.Microsecond)
	cr := DefaultCriteria()
	cr.DETOMs, cr.LimitW = 400, 0.015
	var drives, jointOK, meanOK, held, withInterval int
	var jointErr, meanErr []float64
	for d := range n {
		slumber := 0.002 + 0.004*rng.Float64()
		floor := 0.0003 + 0.0012*rng.Float64()
		sigma := 0.008 + 0.005*rng.Float64()
		entry := 0.0
		if d%2 == 1 {
			entry = 5 * rng.Float64()
		}
		var cycles []Cycle
		for k := range 4 {
			a := hostclock.Time(800*time.Millisecond) + hostclock.Time(rng.Int64N(int64(period)))
			c := a + hostclock.Time(entry*1e6)
			stamp := (a + period/2) / period * period
			tm := Timing{Cycle: k + 1, Start: 0, Assert: stamp, Deassert: stamp + hostclock.Time(2*time.Second), End: stamp + hostclock.Time(2600*time.Millisecond)}
			tm.ProbeIssue = tm.Deassert + period
			tm.ProbeComplete = tm.Deassert + hostclock.Time(20*time.Millisecond)
			var s []Sample
			for ts := hostclock.Time(0); ts < tm.End; ts += period {
				w := slumber
				switch {
				case ts >= c && ts < a+hostclock.Time(2*time.Second):
					w = floor
				case ts >= a+hostclock.Time(2*time.Second) && ts < tm.ProbeComplete:
					w = 0.2
				}
				s = append(s, Sample{T: ts, W: w + sigma*rng.NormFloat64()})
			}
			if cy := Judge(tm, s, JudgeOptions{Criteria: cr, ClockU95Ms: 0.05}); cy.EntryMs.Ok() {
				cycles = append(cycles, cy)
			}
		}
		if len(cycles) < 2 {
			continue
		}
		drives++
		v := Summarise(cycles, cr, "", "")
		m, _ := poolCycles(cycles, func(c Cycle) (NumMs, NumMs) { return c.EntryMs, c.EntryU95Ms })
		tol := math.Max(1, 0.03*entry)
		je, me := math.Abs(float64(v.EntryMs)-entry), math.Abs(float64(m)-entry)
		jointErr, meanErr = append(jointErr, je), append(meanErr, me)
		if je <= tol {
			jointOK++
		}
		if me <= tol {
			meanOK++
		}
		if v.EntryU95Ms.Ok() {
			withInterval++
			if je <= float64(v.EntryU95Ms) {
				held++
			}
		}
	}
	sort.Float64s(jointErr)
	sort.Float64s(meanErr)
	t.Logf("%d drives: within max(1 ms, 3 %%) %d (mean of cycles %d); |error| median %.2f ms, p90 %.2f ms (mean of cycles %.2f, %.2f); interval held %d of %d",
		drives, jointOK, meanOK, jointErr[len(jointErr)/2], jointErr[len(jointErr)*9/10], meanErr[len(meanErr)/2], meanErr[len(meanErr)*9/10], held, withInterval)
	if jointOK <= meanOK || jointErr[len(jointErr)/2] >= meanErr[len(meanErr)/2] {
		t.Errorf("the joint fit is no better than the mean of the cycles' fits")
	}
	if float64(held) < 0.9*float64(withInterval) {
		t.Errorf("interval held %d of %d", held, withInterval)
	}
}

// TestEntryCycleFloor: an entry cycle's floor, over a short hold, is not
// judged against the limit when its interval straddles it (the full cycles
// judge the floor), is still FAILed when wholly above, and is left out of
// the pooled floor.
func TestEntryCycleFloor(t *testing.T) {
	const floor, sigma, lsb = 0.0049, 0.015, 0.00025 // 4.9 mW under a 5 mW limit, 15 mW σ
	cr := DefaultCriteria()
	cr.DETOMs = 400
	jo := JudgeOptions{Criteria: cr, ClockU95Ms: 0.1}
	tm, s := synthCycle(3, floor, sigma, lsb, 0, 0)
	full := Judge(tm, s, jo)
	tm.EntryOnly = true
	entry := Judge(tm, s, jo)
	if full.Outcome != Inconclusive || !strings.Contains(strings.Join(full.Reasons, ";"), "straddles") {
		t.Fatalf("full cycle: %s %v, want inconclusive: the floor straddles the limit", full.Outcome, full.Reasons)
	}
	if entry.Outcome != Pass || !entry.EntryOnly || entry.FloorW != full.FloorW {
		t.Errorf("entry cycle: %s %v (entry_only %v, floor %v W against %v), want a pass with the same floor", entry.Outcome, entry.Reasons, entry.EntryOnly, entry.FloorW, full.FloorW)
	}
	tm2, s2 := synthCycle(4, 0.02, 0.001, lsb, 0, 0) // 20 mW: wholly above 5 mW
	tm2.EntryOnly = true
	if c := Judge(tm2, s2, jo); c.Outcome != Fail {
		t.Errorf("entry cycle with a 20 mW floor: %s %v, want FAIL", c.Outcome, c.Reasons)
	}

	cyc := func(n int, w float64, only bool) Cycle {
		return Cycle{Cycle: n, Outcome: Pass, EntryOnly: only, PreCycleW: 0.05, FloorW: NumW(w), FloorU95W: 0.0001,
			EntryMs: NoneMs, EntryU95Ms: NoneMs, RiseMs: NoneMs, RiseU95Ms: NoneMs, ExitMs: NoneMs, ExitU95Ms: NoneMs}
	}
	v := Summarise([]Cycle{cyc(1, 0.001, false), cyc(2, 0.0012, false), cyc(3, 0.004, true), cyc(4, 0.005, true)}, cr, "yes", "")
	if math.Abs(float64(v.FloorW)-0.0011) > 1e-12 {
		t.Errorf("pooled floor %v W, want the full cycles' 0.0011 W", v.FloorW)
	}
	v = Summarise([]Cycle{cyc(1, 0.004, true), cyc(2, 0.002, true)}, cr, "yes", "")
	if math.Abs(float64(v.FloorW)-0.003) > 1e-12 {
		t.Errorf("pooled floor with entry cycles only %v W, want their 0.003 W", v.FloorW)
	}
}

// TestEntryFailNeedsThePowerAboveTheFloor: an entry beyond the bound FAILs
// when the power stood at the pre-cycle level over the whole bound; when
// the step fit is put late by a level only partly above the floor, under
// noise (as by chance on a low-SNR drive), it is INCONCLUSIVE.
func TestEntryFailNeedsThePowerAboveTheFloor(t *testing.T) {
	cr := DefaultCriteria()
	cr.DETOMs = 400
	jo := JudgeOptions{Criteria: cr, ClockU95Ms: 0.1}
	// A true late entry: 250 ms, at 0.05 W → 1.2 mW under 3 mA σ.
	tm, s := synthCycle(5, 0.0012, 0.015, 0.00025, 250*time.Millisecond, 0)
	if c := Judge(tm, s, jo); c.Outcome != Fail || !strings.Contains(strings.Join(c.Reasons, ";"), "floor reached") {
		t.Errorf("entry at 250 ms: %s %v, want FAIL on the bound", c.Outcome, c.Reasons)
	}
	// A small step (pre 3 mW, floor 1.5 mW, 13 mW σ) whose first 300 ms
	// sit a third of the way down: the fit puts the change there.
	rng := rand.New(rand.NewPCG(9, 9))
	const pre, floor, sigma = 0.003, 0.0015, 0.013
	var s2 []Sample
	tm2 := Timing{Cycle: 1, Assert: hostclock.Time(800 * time.Millisecond), Deassert: hostclock.Time(1800 * time.Millisecond), End: hostclock.Time(2300 * time.Millisecond)}
	tm2.ProbeIssue, tm2.ProbeComplete = tm2.Deassert+100_000, tm2.Deassert+5_000_000
	for ts := hostclock.Time(0); ts < tm2.End; ts += 100_000 {
		w := pre
		switch {
		case ts >= tm2.Assert && ts < tm2.Assert+hostclock.Time(300*time.Millisecond):
			w = pre - (pre-floor)/3
		case ts >= tm2.Assert && ts < tm2.Deassert:
			w = floor
		case ts >= tm2.Deassert && ts < tm2.ProbeComplete:
			w = 0.2
		}
		s2 = append(s2, Sample{T: ts, W: w + sigma*rng.NormFloat64()})
	}
	c := Judge(tm2, s2, jo)
	t.Logf("entry %.1f ± %.1f ms: %s %v", float64(c.EntryMs), float64(c.EntryU95Ms), c.Outcome, c.Reasons)
	if c.EntryMs.Value()-c.EntryU95Ms.Value() <= cr.EntryBoundMs {
		t.Fatalf("the fit did not put the entry beyond the bound (%.1f ± %.1f ms): the case tests nothing", float64(c.EntryMs), float64(c.EntryU95Ms))
	}
	if c.Outcome == Fail || !strings.Contains(strings.Join(c.Reasons, ";"), "too noisy to judge") {
		t.Errorf("%s %v, want INCONCLUSIVE: the power over the bound was not clearly above the floor", c.Outcome, c.Reasons)
	}
}

// TestExitPastDETOWithStallsElsewhere: a read with no stall of its own
// recorded, past DETO by less than the worst stall recorded elsewhere in
// the run (RunStallMs), is INCONCLUSIVE and left out of the pooled exit;
// past it by more, or with no stall anywhere, it FAILs — here 7.45 ms
// against DETO 5 ms, beyond the two unrecorded sub-ms delays (campaign
// seed 1 drive 91, run alone: 6.45 ms, a true 3.3 ms, while a neighbour's
// reads recorded stalls up to 9.3 ms; 6.45 ms is now within those delays
// whatever the run recorded).
func TestExitPastDETOWithStallsElsewhere(t *testing.T) {
	cr := DefaultCriteria()
	cr.DETOMs = 5
	tm, s := synthCycle(8, 0.0012, 0.001, 0.00025, 0, 0)
	tm.ProbeComplete = tm.Deassert + hostclock.Time(7450*time.Microsecond)
	for _, tc := range []struct {
		run      units.Milliseconds
		want     Outcome
		hostLate bool
	}{{0, Fail, false}, {9.3, Inconclusive, true}, {0.2, Fail, false}} {
		c := Judge(tm, s, JudgeOptions{Criteria: cr, ClockU95Ms: 0.1, RunStallMs: tc.run})
		if c.Outcome != tc.want || c.ExitHostLate != tc.hostLate {
			t.Errorf("run stall %.1f ms: %s (host late %v) %v, want %s", tc.run, c.Outcome, c.ExitHostLate, c.Reasons, tc.want)
		}
	}
	// A small stall recorded for the read itself bounds nothing either
	// (campaign seed 23 drive 48: 15.7 ms against DETO 5 ms, a true 3.7
	// ms, 1.6 ms recorded for it, 16.9 ms for another of its reads: FAIL
	// before).
	tm.ProbeComplete = tm.Deassert + hostclock.Time(15700*time.Microsecond)
	tm.HostStallMs = 1.6
	for _, tc := range []struct {
		run  units.Milliseconds
		want Outcome
	}{{16.9, Inconclusive}, {1.6, Fail}} {
		if c := Judge(tm, s, JudgeOptions{Criteria: cr, ClockU95Ms: 0.1, RunStallMs: tc.run}); c.Outcome != tc.want {
			t.Errorf("a read of 15.7 ms with 1.6 ms recorded, run stall %.1f ms: %s %v, want %s", tc.run, c.Outcome, c.Reasons, tc.want)
		}
	}
}

// Under the meter's level steps — a random telegraph of ±1.5 mW, flipping
// every 20 ms on average, on every level alike — the pre-cycle (resting)
// level is the mean over both states: keeping only the windows near the
// lower quartile read it half a step low (the campaign's steps family,
// 0.3–0.8 mW on 3–14 mW), and its interval missed.
func TestPreCycleUnderTelegraphSteps(t *testing.T) {
	const period = hostclock.Time(100 * time.Microsecond)
	const rest, floor, step = 0.008, 0.0006, 0.003
	cr := DefaultCriteria()
	cr.DETOMs = 400
	var sumErr float64
	held, n := 0, 0
	for seed := uint64(1); seed <= 30; seed++ {
		rng := rand.New(rand.NewPCG(seed, 11))
		tm := Timing{Cycle: 1, Assert: hostclock.Time(1000 * time.Millisecond), Deassert: hostclock.Time(2000 * time.Millisecond), End: hostclock.Time(2400 * time.Millisecond)}
		tm.ProbeIssue = tm.Deassert + period
		tm.ProbeComplete = tm.Deassert + hostclock.Time(1200*time.Microsecond)
		tel := step / 2
		var s []Sample
		for ts := hostclock.Time(0); ts < tm.End; ts += period {
			if rng.Float64() < float64(period)/float64(20*time.Millisecond) {
				tel = -tel
			}
			w := rest
			switch d := ts - tm.Deassert; {
			case ts < tm.Assert && (ts/hostclock.Time(time.Millisecond))%400 < 20:
				w = 0.6 // GC burst
			case ts >= tm.Assert && d < 0:
				w = floor
			case d >= 0 && d < hostclock.Time(300*time.Microsecond):
				w = 0.8
			case d >= 0 && d < hostclock.Time(1200*time.Microsecond):
				w = 0.2
			}
			s = append(s, Sample{T: ts, W: w + tel + 0.0002*rng.NormFloat64()})
		}
		c := Judge(tm, s, JudgeOptions{Criteria: cr, ClockU95Ms: 0.05})
		if !c.PreCycleW.Ok() {
			t.Fatalf("seed %d: no pre-cycle level: %v", seed, c.Reasons)
		}
		e := float64(c.PreCycleW) - rest
		sumErr += e
		n++
		if math.Abs(e) <= float64(c.PreCycleU95W) {
			held++
		}
	}
	if bias := sumErr / float64(n); math.Abs(bias) > 0.25e-3 {
		t.Errorf("pre-cycle level off by %.3f mW on average over %d cycles (truth 8 mW; steps of ±1.5 mW)", bias*1e3, n)
	}
	if held < n*85/100 {
		t.Errorf("pre-cycle interval held the truth in %d of %d cycles", held, n)
	}
}

// heldCycle draws cycle k's pin assertion at 800 ms plus a fraction of a
// period (as), stamped to the nearest sample, held 500 ms, its read
// completing 20 ms after the release, the cycle ending at 800 ms after the
// stamp.
func heldCycle(rng *rand.Rand, period hostclock.Time, k int) (as hostclock.Time, tm Timing) {
	as = hostclock.Time(800*time.Millisecond) + hostclock.Time(rng.Int64N(int64(period)))
	stamp := (as + period/2) / period * period
	tm = Timing{Cycle: k + 1, Start: 0, Assert: stamp, Deassert: stamp + hostclock.Time(500*time.Millisecond), End: stamp + hostclock.Time(800*time.Millisecond)}
	tm.ProbeIssue = tm.Deassert + period
	tm.ProbeComplete = tm.Deassert + hostclock.Time(20*time.Millisecond)
	return as, tm
}

// TestJointEntryLeavesOutCyclesBusyAtThePin: one cycle of four finds the
// drive busy (20–40 × its Slumber level) when the pin asserts, and the
// meter's sensor is first-order at 1–1.5 kHz (τ 1–1.6 samples at 10
// kS/s) with its noise low-pass filtered alike (AR(1)): the drive enters
// at the pin every cycle. The joint fit takes the pre-cycle level as the
// level before the change; the busy cycle's fall, spread over several
// samples by the sensor, stood above it in the cycles' mean, and the
// joint entry read late with an interval of ±0.08–0.3 ms that missed the
// truth (campaign seed 11 drives 1, 132, 141, 182, 193: 5 of 15 in the
// bandwidth family). Such a cycle is left out of the joint fit: the
// drives' intervals hold the truth.
func TestJointEntryLeavesOutCyclesBusyAtThePin(t *testing.T) {
	rng := rand.New(rand.NewPCG(25, 11))
	const period = hostclock.Time(100 * time.Microsecond)
	cr := DefaultCriteria()
	cr.DETOMs, cr.LimitW = 400, 0.015
	drives, held := 0, 0
	var errs []float64
	for range 20 {
		slumber := 0.004 + 0.006*rng.Float64()
		floor := 0.0003 + 0.0007*rng.Float64()
		busy := slumber * (20 + 20*rng.Float64())
		a := math.Exp(-2 * math.Pi * (1000 + 500*rng.Float64()) * 1e-4)
		sigma := 0.002 + 0.004*rng.Float64()
		entry := 0.1 * rng.Float64() // ms
		busyCycle := rng.IntN(4)
		var cycles []Cycle
		for k := range 4 {
			as, tm := heldCycle(rng, period, k)
			c := as + hostclock.Time(entry*1e6)
			var s []Sample
			var lvl, nz float64
			for ts := hostclock.Time(0); ts < tm.End; ts += period {
				w := slumber
				switch {
				case k == busyCycle && ts >= as-hostclock.Time(40*time.Millisecond) && ts < c:
					w = busy
				case ts >= c && ts < as+hostclock.Time(500*time.Millisecond):
					w = floor
				case ts >= as+hostclock.Time(500*time.Millisecond) && ts < tm.ProbeComplete:
					w = 0.2
				}
				if ts == 0 {
					lvl = w
				}
				// The sensor low-passes the power and its noise alike.
				lvl = a*lvl + (1-a)*w
				nz = a*nz + math.Sqrt(1-a*a)*sigma*rng.NormFloat64()
				s = append(s, Sample{T: ts, W: lvl + nz})
			}
			if cy := Judge(tm, s, JudgeOptions{Criteria: cr, ClockU95Ms: 0.05}); cy.EntryMs.Ok() {
				cycles = append(cycles, cy)
			}
		}
		if len(cycles) < 2 {
			continue
		}
		drives++
		v := Summarise(cycles, cr, "", "")
		e := float64(v.EntryMs) - entry
		errs = append(errs, e)
		if v.EntryU95Ms.Ok() && math.Abs(e) <= float64(v.EntryU95Ms) {
			held++
		}
	}
	sort.Float64s(errs)
	t.Logf("%d drives: entry interval held %d; error median %+.3f ms, max %+.3f ms", drives, held, errs[len(errs)/2], errs[len(errs)-1])
	if drives < 15 {
		t.Fatalf("only %d drives entered in two cycles or more", drives)
	}
	if float64(held) < 0.9*float64(drives) {
		t.Errorf("entry interval held the truth on %d of %d drives", held, drives)
	}
}

// TestEntryIsTheMeanOverCycles: a drive enters at the pin (+0–0.1 ms)
// on three cycles and 5–15 ms later on the fourth — busy with a GC burst
// that runs on past the assertion, or (half the drives) resting at
// Slumber that long. The drive's entry_ms is the
// mean over the cycles that entered — the quantity the truth comparator
// scores — with the resting cycles read together by the joint fit and the
// busy one at its own fit. Before, the joint fit of the three resting
// cycles replaced the mean (its interval was narrower): 0.05 ± 0.08 ms for
// a mean of 2.46 ms (campaign drive 12:190, whose late cycle rested).
func TestEntryIsTheMeanOverCycles(t *testing.T) {
	rng := rand.New(rand.NewPCG(26, 12))
	const period = hostclock.Time(100 * time.Microsecond)
	cr := DefaultCriteria()
	cr.DETOMs, cr.LimitW = 400, 0.015
	drives, held := 0, 0
	var errs []float64
	for range 20 {
		slumber := 0.004 + 0.006*rng.Float64()
		floor := 0.0003 + 0.0007*rng.Float64()
		busy := slumber * (20 + 20*rng.Float64())
		sigma := 0.0005 + 0.0015*rng.Float64()
		entry := 0.1 * rng.Float64() // ms
		late := 5 + 10*rng.Float64() // ms the burst runs past the pin
		busyCycle := rng.IntN(4)
		resting := rng.IntN(2) == 0 // the late cycle at Slumber, not busy, until it enters
		var cycles []Cycle
		var truth []float64
		for k := range 4 {
			as, tm := heldCycle(rng, period, k)
			d := entry
			if k == busyCycle {
				d = late
			}
			c := as + hostclock.Time(d*1e6)
			var s []Sample
			for ts := hostclock.Time(0); ts < tm.End; ts += period {
				w := slumber
				switch {
				case k == busyCycle && !resting && ts >= as-hostclock.Time(40*time.Millisecond) && ts < c:
					w = busy
				case ts >= c && ts < as+hostclock.Time(500*time.Millisecond):
					w = floor
				case ts >= as+hostclock.Time(500*time.Millisecond) && ts < tm.ProbeComplete:
					w = 0.2
				}
				s = append(s, Sample{T: ts, W: w + sigma*rng.NormFloat64()})
			}
			if cy := Judge(tm, s, JudgeOptions{Criteria: cr, ClockU95Ms: 0.05}); cy.EntryMs.Ok() {
				cycles = append(cycles, cy)
				truth = append(truth, d)
			}
		}
		if len(cycles) < 3 {
			continue
		}
		drives++
		v := Summarise(cycles, cr, "", "")
		e := float64(v.EntryMs) - stat.Mean(truth)
		errs = append(errs, e)
		if v.EntryU95Ms.Ok() && math.Abs(e) <= math.Max(float64(v.EntryU95Ms), 1e-9) {
			held++
		}
	}
	sort.Float64s(errs)
	t.Logf("%d drives: entry (mean over cycles) interval held %d; error median %+.3f ms, min %+.3f, max %+.3f ms", drives, held, errs[len(errs)/2], errs[0], errs[len(errs)-1])
	if drives < 15 {
		t.Fatalf("only %d drives entered in three cycles or more", drives)
	}
	if float64(held) < 0.9*float64(drives) {
		t.Errorf("entry interval held the mean over cycles on %d of %d drives", held, drives)
	}
	if math.Abs(errs[0]) > 1 || math.Abs(errs[len(errs)-1]) > 1 {
		t.Errorf("entry off the mean over cycles by up to %+.3f / %+.3f ms (goal ±1 ms)", errs[0], errs[len(errs)-1])
	}
}

// entryNoise is a drive's meter noise: AR(1) of σ (mW) and correlation
// time τ (samples) drawn uniformly from the ranges; τ 0 is white.
type entryNoise struct{ sigma, tau [2]float64 }

// entryJitterDrive judges the DevSlp cycles (4–6) of one drive whose entry
// latency is L (2–40 ms, log-uniform) and each cycle's L × (1 ± jitter,
// uniform), the change at any time within its sample: Slumber 4–10 mW, a
// floor of 0.3–1 mW, at 10 kS/s under noise nz. It returns the cycles
// that entered and the mean of their true entries, the quantity entry_ms
// reports.
func entryJitterDrive(rng *rand.Rand, jitter float64, nz entryNoise) ([]Cycle, float64) {
	const period = hostclock.Time(100 * time.Microsecond)
	cr := DefaultCriteria()
	cr.DETOMs, cr.LimitW = 400, 0.015
	slumber := 0.004 + 0.006*rng.Float64()
	floor := 0.0003 + 0.0007*rng.Float64()
	sd := (nz.sigma[0] + (nz.sigma[1]-nz.sigma[0])*rng.Float64()) / 1e3
	a := 0.0
	if tau := nz.tau[0] + (nz.tau[1]-nz.tau[0])*rng.Float64(); tau > 0 {
		a = math.Exp(-1 / tau)
	}
	entry := 2 * math.Pow(20, rng.Float64()) // ms
	n := 4 + rng.IntN(3)
	var cycles []Cycle
	var truth []float64
	for k := range n {
		as, tm := heldCycle(rng, period, k)
		d := entry * (1 + jitter*(2*rng.Float64()-1))
		c := as + hostclock.Time(d*1e6)
		var s []Sample
		e := sd * rng.NormFloat64()
		for ts := hostclock.Time(0); ts < tm.End; ts += period {
			w := slumber
			switch {
			case ts >= c && ts < as+hostclock.Time(500*time.Millisecond):
				w = floor
			case ts >= as+hostclock.Time(500*time.Millisecond) && ts < tm.ProbeComplete:
				w = 0.2
			}
			e = a*e + math.Sqrt(1-a*a)*sd*rng.NormFloat64()
			s = append(s, Sample{T: ts, W: w + e})
		}
		if cy := Judge(tm, s, JudgeOptions{Criteria: cr, ClockU95Ms: 0.05}); cy.EntryMs.Ok() {
			cycles = append(cycles, cy)
			truth = append(truth, d)
		}
	}
	return cycles, stat.Mean(truth)
}

// TestEntryIntervalHoldsVaryingLatencies: each cycle's entry latency is
// the drive's ± 10 % (the independent generator's drives: 23.6–28.3 ms
// for a mean of 26.46), under AR(1) noise correlated over 2–15 ms, which
// leaves each cycle's change sharp but its samples' mean too noisy to show
// alone that it entered elsewhere than the joint fit (heldOff). entry_ms
// is the mean over the cycles of their entries; the joint fit, which
// assumes one latency, reads near the middle of the cycles' entries with
// an interval of one grid term (26.15 ± 0.08 ms) and holds the mean on 23
// of these 40 drives. The cycles' own fits scatter beyond their errors,
// so the drive's entry is their mean with their errors (entrySpread).
func TestEntryIntervalHoldsVaryingLatencies(t *testing.T) {
	rng := rand.New(rand.NewPCG(27, 13))
	cr := DefaultCriteria()
	drives, held, within := 0, 0, 0
	var errs, widths []float64
	for range 40 {
		cycles, truth := entryJitterDrive(rng, 0.1, entryNoise{sigma: [2]float64{0.5, 1.5}, tau: [2]float64{20, 150}})
		if len(cycles) < 3 {
			continue
		}
		drives++
		v := Summarise(cycles, cr, "", "")
		e := float64(v.EntryMs) - truth
		errs, widths = append(errs, math.Abs(e)), append(widths, float64(v.EntryU95Ms)/truth)
		if v.EntryU95Ms.Ok() && math.Abs(e) <= float64(v.EntryU95Ms) {
			held++
		}
		if math.Abs(e) <= math.Max(1, 0.03*truth) {
			within++
		}
	}
	sort.Float64s(errs)
	sort.Float64s(widths)
	t.Logf("%d drives: entry interval held the mean of the cycles' entries on %d, within max(1 ms, 3 %%) on %d; |error| median %.3f ms, max %.3f ms; half-width median %.1f %% of the entry", drives, held, within, errs[len(errs)/2], errs[len(errs)-1], 100*widths[len(widths)/2])
	if drives < 35 {
		t.Fatalf("only %d drives entered in three cycles or more", drives)
	}
	if float64(held) < 0.9*float64(drives) {
		t.Errorf("entry interval held the mean of the cycles' entries on %d of %d drives (goal ≥ 90 %%)", held, drives)
	}
	if within < drives {
		t.Errorf("entry within max(1 ms, 3 %%) of the mean of the cycles' entries on %d of %d drives", within, drives)
	}
}

// TestEntryOneLatencyKeepsTheJointFit: the drives above with one latency
// for every cycle, under that noise and under white noise of 3–6 mW σ (a
// step of 3–10 mW: each cycle's fit is a few samples wide, and the joint
// fit, located about n times better, has the narrower interval). The
// cycles' own fits agree within their errors, so entrySpread leaves the
// entry as it was: the joint fit where that is the narrower.
func TestEntryOneLatencyKeepsTheJointFit(t *testing.T) {
	cr := DefaultCriteria()
	for _, nz := range []entryNoise{
		{sigma: [2]float64{0.5, 1.5}, tau: [2]float64{20, 150}},
		{sigma: [2]float64{3, 6}},
	} {
		rng := rand.New(rand.NewPCG(27, 13))
		drives, spread, joint, narrower, held := 0, 0, 0, 0, 0
		for range 20 {
			cycles, truth := entryJitterDrive(rng, 0, nz)
			if len(cycles) < 3 {
				continue
			}
			drives++
			v := Summarise(cycles, cr, "", "")
			if _, _, differ := entrySpread(cycles); differ {
				spread++
			}
			// Summarise's rule without entrySpread: the joint fit where its
			// interval is narrower than the mean of the cycles' (both at
			// least one cycle's grid term).
			_, pu := poolCycles(cycles, func(c Cycle) (NumMs, NumMs) { return c.EntryMs - NumMs(c.entryCut), c.EntryU95Ms })
			for _, c := range cycles {
				pu = NumMs(math.Max(float64(pu), withGrid(0)*c.periodMs))
			}
			if e, u, ok := entryWithJoint(cycles); ok && u < float64(pu) {
				narrower++
				if float64(v.EntryMs) == e {
					joint++
				}
			}
			if math.Abs(float64(v.EntryMs)-truth) <= float64(v.EntryU95Ms) {
				held++
			}
		}
		t.Logf("%+v: %d drives; cycles taken to differ on %d; the joint fit the narrower on %d, kept on %d; the interval held the truth on %d", nz, drives, spread, narrower, joint, held)
		if drives < 18 {
			t.Fatalf("only %d drives entered in three cycles or more", drives)
		}
		if spread > 1 {
			t.Errorf("%+v: the cycles of %d of %d drives with one latency were taken to differ", nz, spread, drives)
		}
		if joint < narrower-1 {
			t.Errorf("%+v: the joint fit was kept on %d of the %d drives where it is the narrower", nz, joint, narrower)
		}
		if float64(held) < 0.9*float64(drives) {
			t.Errorf("%+v: entry interval held the truth on %d of %d drives", nz, held, drives)
		}
	}
}

// The clock line that maps every cycle's read onto the meter's time is
// one: pooling n cycles' exits does not shrink its part of the interval
// (pooled as independent, 4 cycles' exit 0.067 ms off held in ±0.055 ms:
// campaign seed 18 drive 173).
func TestExitPoolKeepsTheClockTerm(t *testing.T) {
	cr := DefaultCriteria()
	cr.DETOMs = 400
	for _, clock := range []float64{0.05, 0.3, 2} {
		jo := JudgeOptions{Criteria: cr, ClockU95Ms: units.Milliseconds(clock)}
		var cycles []Cycle
		for range 4 {
			tm, s := synthCycle(6, 0.0012, 0.015, 0.00025, 0, 0)
			cycles = append(cycles, Judge(tm, s, jo))
		}
		v := Summarise(cycles, cr, "yes", "")
		if !v.ExitMs.Ok() || float64(v.ExitU95Ms) < clock {
			t.Errorf("clock %.2f ms: pooled exit %v ± %v ms, under the clock's own bound", clock, v.ExitMs, v.ExitU95Ms)
		}
	}
}

// TestNoIgnoresWithoutAResolvedRestingLevel: a drive that enters DevSlp at
// the pin (Slumber 1–3 mW, floor 0.3–0.8 mW) under noise far above both —
// 1/f-like, three AR(1) parts of 3–7 mW σ each correlated over 0.5–20 ms
// (the range docs/drive-profiles.md draws), at 10 kS/s — is never "the
// drive ignores DEVSLP": a pre-cycle level at or below 0 W tells no fall,
// and a "stayed" must hold against the pre-cycle level's error as well as
// the hold's. Before, 2 of these 200 cycles FAILed so, as did drive 47 of
// the independent generator's seed 12 (flicker: −0.71 mW before the pin,
// 1.96 mW under it). A floor is read in 36 of the 200 (37 before).
func TestNoIgnoresWithoutAResolvedRestingLevel(t *testing.T) {
	rng := rand.New(rand.NewPCG(12, 47))
	const period = hostclock.Time(100 * time.Microsecond)
	cr := DefaultCriteria()
	cr.DETOMs, cr.LimitW = 400, 0.015
	ignores, entered := 0, 0
	for k := range 200 {
		slumber, floor := 0.001+0.002*rng.Float64(), 0.0003+0.0005*rng.Float64()
		var sd, a, e [3]float64
		for i := range sd {
			sd[i] = (3 + 4*rng.Float64()) * 1e-3
			a[i] = math.Exp(-float64(period) / (0.5e6 * math.Pow(40, rng.Float64())))
			e[i] = sd[i] * rng.NormFloat64()
		}
		as, tm := heldCycle(rng, period, k)
		var s []Sample
		for ts := hostclock.Time(0); ts < tm.End; ts += period {
			w := slumber
			switch {
			case ts >= as && ts < tm.Deassert:
				w = floor
			case ts >= tm.Deassert && ts < tm.ProbeComplete:
				w = 0.2
			}
			for i := range e {
				e[i] = a[i]*e[i] + math.Sqrt(1-a[i]*a[i])*sd[i]*rng.NormFloat64()
				w += e[i]
			}
			s = append(s, Sample{T: ts, W: w})
		}
		c := Judge(tm, s, JudgeOptions{Criteria: cr, ClockU95Ms: 0.05})
		if strings.Contains(strings.Join(c.Reasons, ";"), "ignores DEVSLP") {
			ignores++
			t.Errorf("cycle %d (Slumber %.2f mW, floor %.2f, noise %.1f/%.1f/%.1f mW): %v; pre-cycle %v", k, slumber*1e3, floor*1e3, sd[0]*1e3, sd[1]*1e3, sd[2]*1e3, c.Reasons, c.PreCycleW)
		}
		if c.FloorW.Ok() {
			entered++
		}
	}
	t.Logf("200 cycles: %d read as ignoring the pin, %d with a floor", ignores, entered)
}

// TestEntryUnderMeterLevelSteps: the meter's readings carry level steps
// (a random telegraph, ±S/2, flipping every 0.5–3 ms on average) as large
// as the drive's Slumber–DevSlp gap or larger, and the drive enters at the
// pin (0–0.1 ms) every one of its 24 cycles. A cycle whose 10 ms before the
// pin sat on the telegraph's upper half fails the at-rest test and is left
// out of the joint fit; its own fit, noise's, fell anywhere in the hold
// (campaign seed 27 drive 48: 39 of 192 cycles, 0–1763 ms, the drive's
// entry 26.9 ± 22.5 ms for 0.05). Such a cycle is read at its own fit
// only where its samples show it; the entry is within ±1 ms of the truth
// on ≥ 90 % of the drives.
func TestEntryUnderMeterLevelSteps(t *testing.T) {
	rng := rand.New(rand.NewPCG(44, 27))
	const period = hostclock.Time(100 * time.Microsecond)
	cr := DefaultCriteria()
	cr.DETOMs, cr.LimitW = 400, 0.015
	drives, within := 0, 0
	for d := range 12 {
		slumber := 0.003 + 0.003*rng.Float64()
		floor := 0.0004 + 0.0008*rng.Float64()
		step := (slumber - floor) * (1 + 0.5*rng.Float64())
		flip := 0.5 + 2.5*rng.Float64() // ms, mean time between flips
		sigma := 0.0001 + 0.0002*rng.Float64()
		entry := 0.1 * rng.Float64()
		var cycles []Cycle
		for k := range 24 {
			as, tm := heldCycle(rng, period, k)
			c := as + hostclock.Time(entry*1e6)
			half := step / 2
			if rng.IntN(2) == 0 {
				half = -half
			}
			var s []Sample
			for ts := hostclock.Time(0); ts < tm.End; ts += period {
				if rng.Float64() < float64(period)/(flip*1e6) {
					half = -half
				}
				w := slumber
				switch {
				case ts >= c && ts < as+hostclock.Time(500*time.Millisecond):
					w = floor
				case ts >= as+hostclock.Time(500*time.Millisecond) && ts < tm.ProbeComplete:
					w = 0.2
				}
				s = append(s, Sample{T: ts, W: w + half + sigma*rng.NormFloat64()})
			}
			if cy := Judge(tm, s, JudgeOptions{Criteria: cr, ClockU95Ms: 0.05}); cy.EntryMs.Ok() {
				cycles = append(cycles, cy)
			}
		}
		if len(cycles) < 12 {
			continue
		}
		drives++
		v := Summarise(cycles, cr, "", "")
		e := float64(v.EntryMs) - entry
		if math.Abs(e) <= 1 {
			within++
		}
		t.Logf("drive %d (Slumber %.2f mW, floor %.2f, steps ±%.2f mW every %.1f ms): entry %.3f ± %.3f ms from %d cycles, truth %.3f",
			d, slumber*1e3, floor*1e3, step/2*1e3, flip, float64(v.EntryMs), float64(v.EntryU95Ms), len(cycles), entry)
	}
	if drives < 10 {
		t.Fatalf("only %d drives entered in 12 cycles or more", drives)
	}
	if float64(within) < 0.9*float64(drives) {
		t.Errorf("entry within ±1 ms of the truth on %d of %d drives", within, drives)
	}
}

// TestReturnAfterTheRead: after the read the drive comes back to its
// pre-cycle level (PASS), stays awake above it until the cycle ends — in
// Partial, at 5 × Slumber — (INCONCLUSIVE, not judged: campaign seed 33
// drive 95, a working drive failed on 3 of 192 cycles), or stays at its
// floor (FAIL: it did not come back).
func TestReturnAfterTheRead(t *testing.T) {
	const period = hostclock.Time(100 * time.Microsecond)
	cr := DefaultCriteria()
	cr.DETOMs, cr.LimitW = 400, 0.015
	for _, c := range []struct {
		name  string
		after float64 // × Slumber after the read; 0: the floor
		want  Outcome
	}{{"back at Slumber", 1, Pass}, {"awake in Partial", 5, Inconclusive}, {"stuck at the floor", 0, Fail}} {
		rng := rand.New(rand.NewPCG(44, 95))
		const slumber, floor, sigma = 0.0024, 0.0003, 0.0001
		as, tm := heldCycle(rng, period, 0)
		var s []Sample
		for ts := hostclock.Time(0); ts < tm.End; ts += period {
			w := slumber
			switch {
			case ts >= as && ts < tm.Deassert+hostclock.Time(time.Millisecond):
				w = floor
			case ts >= tm.Deassert+hostclock.Time(time.Millisecond) && ts < tm.ProbeComplete:
				w = 0.2
			case ts >= tm.ProbeComplete && c.after == 0:
				w = floor
			case ts >= tm.ProbeComplete:
				w = c.after * slumber
			}
			s = append(s, Sample{T: ts, W: w + sigma*rng.NormFloat64()})
		}
		cy := Judge(tm, s, JudgeOptions{Criteria: cr, ClockU95Ms: 0.05})
		if cy.Outcome != c.want {
			t.Errorf("%s: %v %v, want %v", c.name, cy.Outcome, cy.Reasons, c.want)
		}
	}
}
