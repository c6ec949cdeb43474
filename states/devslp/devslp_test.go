package devslp

import (
	"context"
	"math"
	"math/rand/v2"
	"strings"
	"testing"
	"time"
)

const msNs = int64(time.Millisecond)

// cycleTrace synthesises a cycle at 10 kS/s: slumber baseline, exponential
// fall to floor after assert (time constant tau), a wake spike after
// deassert, back to baseline after the probe.
func cycleTrace(baseline, floor float64, tau time.Duration, exit time.Duration, seed uint64) (Timing, []Sample) {
	r := rand.New(rand.NewPCG(seed, 3))
	tm := Timing{Cycle: 1, Start: 0, Assert: 1000 * msNs, Deassert: 1300 * msNs}
	tm.ProbeIssue = tm.Deassert + 100_000
	tm.ProbeComplete = tm.Deassert + int64(exit)
	tm.End = tm.Deassert + 500*msNs
	var s []Sample
	for t := int64(0); t < tm.End; t += 100_000 {
		w := baseline
		switch {
		case t >= tm.Assert && t < tm.Deassert:
			w = floor + (baseline-floor)*math.Exp(-float64(t-tm.Assert)/float64(tau))
		case t >= tm.Deassert && t < tm.ProbeComplete+5*msNs:
			w = 1.2 // waking and serving the read
		}
		s = append(s, Sample{T: t, W: w + r.NormFloat64()*0.0008})
	}
	return tm, s
}

func TestEvaluateGoodDrive(t *testing.T) {
	tm, s := cycleTrace(0.060, 0.0025, 3*time.Millisecond, 15*time.Millisecond, 1)
	r := Evaluate(tm, s, Options{})
	if !r.Pass {
		t.Fatalf("good drive failed: %v", r.Failures)
	}
	if math.Abs(r.FloorW-0.0025) > 0.0002 {
		t.Errorf("floor %.4f W, want 2.5 mW ± 0.2 mW", r.FloorW)
	}
	// 60 mW → within 10 % of the way to 2.5 mW takes tau·ln(10) ≈ 6.9 ms.
	if d := math.Abs(r.EntryMs - 6.9); d > 1.5 {
		t.Errorf("entry %.2f ms, want ≈ 6.9 ms", r.EntryMs)
	}
	if r.ExitMs != 15 {
		t.Errorf("exit %.2f ms, want 15 ms", r.ExitMs)
	}
}

func TestEvaluateBrokenDrive(t *testing.T) {
	tm, s := cycleTrace(0.062, 0.062, time.Millisecond, 5*time.Millisecond, 2)
	r := Evaluate(tm, s, Options{})
	if r.Pass {
		t.Fatal("a drive that ignores DEVSLP passed")
	}
	if len(r.Failures) == 0 || !strings.Contains(r.Failures[0], "never fell below 6") || !strings.Contains(r.Failures[0], "ignores DEVSLP") {
		t.Errorf("failures %q, want 'power never fell below 6x mW ... ignores DEVSLP'", r.Failures)
	}
	v := Summarise([]Result{r, r})
	if v.Pass || !strings.Contains(v.String(), "ignores DEVSLP") || !strings.Contains(v.String(), "2 of 2") {
		t.Errorf("verdict %q", v.String())
	}
}

func TestEvaluateLimitsAndTimeouts(t *testing.T) {
	// Floor 8 mW is above the 5 mW limit; exit 40 ms exceeds DETO 20 ms.
	tm, s := cycleTrace(0.060, 0.008, 2*time.Millisecond, 40*time.Millisecond, 3)
	r := Evaluate(tm, s, Options{})
	joined := strings.Join(r.Failures, "; ")
	if r.Pass || !strings.Contains(joined, "above the 5.00 mW limit") || !strings.Contains(joined, "DETO is 20.0 ms") {
		t.Fatalf("failures %q", joined)
	}
	// The same with a 10 mW limit and a 50 ms DETO passes.
	r = Evaluate(tm, s, Options{Limit: 0.010, DETO: 50 * time.Millisecond})
	if !r.Pass {
		t.Fatalf("relaxed limits still fail: %v", r.Failures)
	}
	// A slow fall beyond the entry bound.
	tm, s = cycleTrace(0.060, 0.0025, 60*time.Millisecond, 10*time.Millisecond, 4)
	r = Evaluate(tm, s, Options{})
	if r.Pass || !strings.Contains(strings.Join(r.Failures, ";"), "bound 100.0 ms") {
		t.Fatalf("slow entry: %v", r.Failures)
	}
	// No samples at all.
	if r := Evaluate(tm, nil, Options{}); r.Pass {
		t.Fatal("no samples passed")
	}
}

type fakeRig struct {
	pins   []bool
	phases []string
}

func (f *fakeRig) SetDevSlp(ctx context.Context, a bool) (int64, error) {
	f.pins = append(f.pins, a)
	return 1, nil
}
func (f *fakeRig) Probe(ctx context.Context) (int64, int64, error) { return 2, 3, nil }
func (f *fakeRig) Phase(n string)                                  { f.phases = append(f.phases, n) }

func TestRunSequence(t *testing.T) {
	rig := &fakeRig{}
	tms, err := Run(context.Background(), rig, Options{Cycles: 2, Settle: time.Millisecond, Hold: 10 * time.Millisecond, Return: time.Millisecond})
	if err != nil || len(tms) != 2 {
		t.Fatalf("Run: %v, %d cycles", err, len(tms))
	}
	if want := []bool{true, false, true, false}; len(rig.pins) != 4 || rig.pins[0] != want[0] || rig.pins[1] != want[1] {
		t.Errorf("pin sequence %v", rig.pins)
	}
	if len(rig.phases) != 3 || rig.phases[1] != "devslp-cycle:2" {
		t.Errorf("phases %v", rig.phases)
	}
	if _, err := Run(context.Background(), rig, Options{Cycles: 1, Hold: time.Millisecond, MDAT: 10 * time.Millisecond}); err == nil {
		t.Error("hold shorter than MDAT accepted")
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	rig2 := &fakeRig{}
	if _, err := Run(ctx, rig2, Options{Cycles: 1}); err == nil {
		t.Error("cancelled run returned no error")
	}
}

func TestEvaluateLateProbeBlamesTheHost(t *testing.T) {
	tm, s := cycleTrace(0.060, 0.0025, 3*time.Millisecond, 60*time.Millisecond, 5)
	tm.ProbeIssue = tm.Deassert + int64(40*time.Millisecond) // the host sat on the read
	r := Evaluate(tm, s, Options{})
	if r.Pass || !strings.Contains(strings.Join(r.Failures, ";"), "overloaded host") {
		t.Fatalf("failures %q, want the late read blamed on the host", r.Failures)
	}
}

func TestEvaluateIgnoresGCBeforeAssert(t *testing.T) {
	tm, s := cycleTrace(0.050, 0.004, 3*time.Millisecond, 40*time.Millisecond, 6)
	// A 150 ms GC burst at 1.1 W ending just as the pin is asserted.
	for i := range s {
		if s[i].T >= tm.Assert-150*msNs && s[i].T < tm.Assert {
			s[i].W = 1.1
		}
	}
	r := Evaluate(tm, s, Options{DETO: 50 * time.Millisecond})
	if !r.Pass || math.Abs(r.BaselineW-0.050) > 0.002 {
		t.Fatalf("baseline %.4f W, failures %v: want the 50 mW resting level and a pass", r.BaselineW, r.Failures)
	}
}
