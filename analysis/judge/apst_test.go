package judge

import (
	"math/rand/v2"
	"strings"
	"testing"
	"time"

	"github.com/idlewatt/idlewatt/hostclock"
	"github.com/idlewatt/idlewatt/states/nvme/pslevel"
)

var apstLevels = []pslevel.Level{
	{PS: 0, W: 0.35},
	{PS: 3, W: 0.040, NonOperational: true, EntryLatencyUs: 2000, ExitLatencyUs: 1200},
	{PS: 4, W: 0.005, NonOperational: true, EntryLatencyUs: 500, ExitLatencyUs: 9500},
}

// apstCycle synthesises one cycle at 20 kHz: idle at 0.35 W from 0, the
// floor from `at` on, σ noise; the probe at 400 ms waits wait.
func apstCycle(floor, sigma float64, at time.Duration, wait time.Duration) (APSTTiming, []Sample) {
	rng := rand.New(rand.NewPCG(7, 8))
	var s []Sample
	for t := time.Duration(0); t < 400*time.Millisecond; t += 50 * time.Microsecond {
		w := 0.35
		if t >= at {
			w = floor
		}
		s = append(s, Sample{T: hostclock.Time(t), W: w + sigma*rng.NormFloat64()})
	}
	probe := hostclock.Time(400 * time.Millisecond)
	return APSTTiming{Cycle: 1, Idle: 0, EnterAt: hostclock.Time(100 * time.Millisecond), ProbeIssue: probe,
		ProbeComplete: probe.Add(wait + 100*time.Microsecond), WarmMs: 0.1}, s
}

func TestJudgeAPSTCycle(t *testing.T) {
	cr := APSTCriteria{ExpectPS: 4, Levels: apstLevels, LinkExitMs: 0.1}
	for _, tc := range []struct {
		name    string
		floor   float64
		sigma   float64
		at      time.Duration
		wait    time.Duration
		outcome Outcome
		reason  string
	}{
		{"in spec", 0.005, 0.0005, 100*time.Millisecond + 300*time.Microsecond, 6 * time.Millisecond, Pass, ""},
		{"shallower state", 0.040, 0.0005, 100*time.Millisecond + 300*time.Microsecond, time.Millisecond, Fail, "stayed in PS3"},
		// √(0.04·0.005) = 14.14 mW; a floor there under heavy noise straddles it.
		{"straddles the ceiling", 0.01414, 0.05, 100 * time.Millisecond, 6 * time.Millisecond, Inconclusive, "straddles"},
		{"late entry", 0.005, 0.0005, 103 * time.Millisecond, 6 * time.Millisecond, Fail, "entry latency is 0.50 ms"},
		{"early entry", 0.005, 0.0005, 60 * time.Millisecond, 6 * time.Millisecond, Fail, "before the APST timer"},
		{"slow exit", 0.005, 0.0005, 100*time.Millisecond + 300*time.Microsecond, 12 * time.Millisecond, Fail, "exit latency is 9.50 ms"},
		{"exit at the bound", 0.005, 0.0005, 100*time.Millisecond + 300*time.Microsecond, 9600 * time.Microsecond, Pass, ""},
	} {
		tm, s := apstCycle(tc.floor, tc.sigma, tc.at, tc.wait)
		c := JudgeAPSTCycle(tm, s, cr, JudgeOptions{})
		if c.Outcome != tc.outcome || (tc.reason != "" && !strings.Contains(strings.Join(c.Reasons, "; "), tc.reason)) {
			t.Errorf("%s: %s %v (floor %v ± %v, entry %v ± %v, exit %v)", tc.name, c.Outcome, c.Reasons, c.FloorW, c.FloorU95W, c.EntryMs, c.EntryU95Ms, c.ExitMs)
		}
	}
	// Exit measured against a clock uncertainty that straddles the bound.
	tm, s := apstCycle(0.005, 0.0005, 100*time.Millisecond+300*time.Microsecond, 9600*time.Microsecond)
	if c := JudgeAPSTCycle(tm, s, cr, JudgeOptions{ClockU95Ms: 0.2}); c.Outcome != Inconclusive {
		t.Errorf("exit at the bound ± 0.2 ms: %s %v", c.Outcome, c.Reasons)
	}
	if c := JudgeAPSTCycle(tm, s[:10], cr, JudgeOptions{}); c.Outcome != Inconclusive {
		t.Errorf("ten samples: %s", c.Outcome)
	}
	if c := JudgeAPSTCycle(tm, s, APSTCriteria{ExpectPS: 2, Levels: apstLevels}, JudgeOptions{}); c.Outcome != Inconclusive {
		t.Errorf("unknown expected state: %s", c.Outcome)
	}
}

func TestSummariseAPST(t *testing.T) {
	cr := APSTCriteria{ExpectPS: 4, Levels: apstLevels}
	pass := APSTCycle{Outcome: Pass, FloorW: 0.005, FloorU95W: 0.0001, EntryMs: NoneMs, ExitMs: NoneMs}
	fail := APSTCycle{Outcome: Fail, Reasons: []string{"fail: the drive stayed in PS3"}, FloorW: 0.04, EntryMs: NoneMs, ExitMs: NoneMs}
	if v := SummariseAPST([]APSTCycle{pass, pass}, cr, "yes", ""); !v.Pass() || v.Passed != 2 {
		t.Errorf("%+v", v)
	}
	v := SummariseAPST([]APSTCycle{pass, fail}, cr, "yes", "the host's APST table never enters PS4")
	if v.Outcome != Fail || !strings.HasPrefix(v.Reason, "the host's APST table never enters PS4; the drive stayed in PS3 (1 of 2 cycles)") {
		t.Errorf("%s", v.Reason)
	}
	if v := SummariseAPST([]APSTCycle{fail}, cr, "no: NO_APST quirk", ""); v.Outcome != NotSupported || v.String() != "NOT SUPPORTED: NO_APST quirk" {
		t.Errorf("%s", v.String())
	}
	if v := SummariseAPST(nil, cr, "yes", ""); v.Outcome != Inconclusive {
		t.Errorf("no cycles: %s", v.Outcome)
	}
}

// FuzzJudgeAPSTCycle: any samples and timing give a verdict, never a panic.
func FuzzJudgeAPSTCycle(f *testing.F) {
	f.Add([]byte{1, 2, 3, 200, 0, 0, 0, 9}, int64(100), int64(400), int64(9))
	f.Fuzz(func(t *testing.T, b []byte, enter, probe, wait int64) {
		var s []Sample
		for i, x := range b {
			s = append(s, Sample{T: hostclock.Time(i) * hostclock.Time(time.Millisecond), W: float64(x) / 100})
		}
		tm := APSTTiming{Cycle: 1, EnterAt: hostclock.Time(enter) * hostclock.Time(time.Millisecond), ProbeIssue: hostclock.Time(probe) * hostclock.Time(time.Millisecond)}
		tm.ProbeComplete = tm.ProbeIssue + hostclock.Time(wait)
		c := JudgeAPSTCycle(tm, s, APSTCriteria{ExpectPS: 4, Levels: apstLevels}, JudgeOptions{})
		if c.Outcome == "" {
			t.Fatal("no outcome")
		}
		_ = SummariseAPST([]APSTCycle{c}, APSTCriteria{}, "yes", "").String()
	})
}
