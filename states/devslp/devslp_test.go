package devslp

import (
	"context"
	"testing"
	"time"

	"github.com/idlewatt/idlewatt/hostclock"
)

type fakeRig struct {
	pins   []bool
	phases []string
}

func (f *fakeRig) SetDevSlp(ctx context.Context, a bool) (hostclock.Time, error) {
	f.pins = append(f.pins, a)
	return 1, nil
}
func (f *fakeRig) Probe(ctx context.Context) (hostclock.Time, hostclock.Time, error) {
	return 2, 3, nil
}
func (f *fakeRig) Phase(n string) { f.phases = append(f.phases, n) }

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

// extRig resolves after resolveAt cycles.
type extRig struct {
	fakeRig
	resolveAt int
	asked     []int
	want      time.Duration
	holds     []time.Duration // the hold asked for after cycle i+1
}

// timedRig records when the pin changed.
type timedRig struct {
	extRig
	at []hostclock.Time
}

func (r *timedRig) SetDevSlp(ctx context.Context, a bool) (hostclock.Time, error) {
	r.at = append(r.at, hostclock.Now())
	return r.fakeRig.SetDevSlp(ctx, a)
}

func (e *extRig) Resolved(done []Timing, want time.Duration) (bool, time.Duration) {
	e.asked, e.want = append(e.asked, len(done)), want
	var h time.Duration
	if len(done) <= len(e.holds) {
		h = e.holds[len(done)-1]
	}
	return len(done) >= e.resolveAt, h
}

// TestRunExtends: Run asks an Extender after the planned cycles only, goes
// on while it says unresolved, and stops at MaxCycles regardless; without
// MaxCycles the count is fixed.
func TestRunExtends(t *testing.T) {
	o := Options{Cycles: 2, Settle: time.Millisecond, Hold: 10 * time.Millisecond, Return: time.Millisecond, MDAT: time.Millisecond}
	for _, c := range []struct {
		max, resolveAt, want int
		asked                []int
	}{
		{0, 99, 2, nil},            // fixed count: never asked
		{5, 3, 3, []int{2, 3}},     // resolved after the third cycle
		{4, 99, 4, []int{2, 3, 4}}, // never resolved: MaxCycles
		{6, 0, 2, []int{2}},        // resolved by the planned cycles
	} {
		rig := &extRig{resolveAt: c.resolveAt}
		o.MaxCycles = c.max
		tms, err := Run(context.Background(), rig, o)
		if err != nil || len(tms) != c.want || len(rig.asked) != len(c.asked) {
			t.Errorf("max %d resolve at %d: %d cycles (want %d), asked after %v (want %v), %v", c.max, c.resolveAt, len(tms), c.want, rig.asked, c.asked, err)
			continue
		}
		for i := range c.asked {
			if rig.asked[i] != c.asked[i] {
				t.Errorf("max %d: asked after %v, want %v", c.max, rig.asked, c.asked)
			}
		}
		if len(rig.asked) > 0 && rig.want != time.Millisecond {
			t.Errorf("default entry resolution %v, want 1 ms", rig.want)
		}
	}
	if err := (Options{Cycles: 4, MaxCycles: 3}).Validate(); err == nil {
		t.Error("max cycles below cycles accepted")
	}
}

// TestRunEntryCycles: with EntryHold, the cycles after the planned ones
// are entry cycles, named so, holding what the Extender asks within
// [EntryHold, Hold]; one asked the full hold is a full cycle.
func TestRunEntryCycles(t *testing.T) {
	o := Options{Cycles: 2, MaxCycles: 5, Settle: time.Millisecond, Hold: 60 * time.Millisecond, Return: time.Millisecond,
		MDAT: time.Millisecond, EntryHold: 10 * time.Millisecond}
	rig := &timedRig{extRig: extRig{resolveAt: 99, holds: []time.Duration{0, 30 * time.Millisecond, time.Second, 0, 0}}}
	tms, err := Run(context.Background(), rig, o)
	if err != nil || len(tms) != 5 {
		t.Fatalf("Run: %v, %d cycles", err, len(tms))
	}
	want := []struct {
		name  string
		entry bool
		hold  time.Duration
	}{
		{"devslp-cycle:1", false, 60 * time.Millisecond},
		{"devslp-cycle:2", false, 60 * time.Millisecond},
		{"devslp-cycle:3:entry", true, 30 * time.Millisecond}, // asked 30 ms
		{"devslp-cycle:4", false, 60 * time.Millisecond},      // asked 1 s: the full hold
		{"devslp-cycle:5:entry", true, 10 * time.Millisecond}, // asked nothing: EntryHold
	}
	for i, w := range want {
		held := rig.at[2*i+1].Sub(rig.at[2*i])
		if rig.phases[i] != w.name || tms[i].EntryOnly != w.entry || held < w.hold {
			t.Errorf("cycle %d: phase %q entry-only %v held %v; want %q %v ≥ %v", i+1, rig.phases[i], tms[i].EntryOnly, held, w.name, w.entry, w.hold)
		}
	}
	for _, bad := range []Options{
		{Cycles: 1, Hold: time.Second, EntryHold: -time.Millisecond},
		{Cycles: 1, Hold: time.Second, EntryHold: 2 * time.Second},
		{Cycles: 1, Hold: time.Second, MDAT: 10 * time.Millisecond, EntryHold: 5 * time.Millisecond},
	} {
		if bad.Validate() == nil {
			t.Errorf("entry hold %v (hold %v, MDAT %v) accepted", bad.EntryHold, bad.Hold, bad.MDAT)
		}
	}
}
