package devslp

import (
	"context"
	"fmt"
	"time"

	"github.com/idlewatt/idlewatt/hostclock"
	"github.com/idlewatt/idlewatt/units"
)

// Options set the cycle's timing and pass criteria.
// DefaultEntryBound is Options.EntryBound's default: the floor must be
// reached this soon after the assertion.
const DefaultEntryBound = 100 * time.Millisecond

type Options struct {
	Cycles     int           // default 10
	Settle     time.Duration // idle before each assertion; default 1 s
	Hold       time.Duration // how long DEVSLP stays asserted; default 300 ms
	Return     time.Duration // time allowed to return to the pre-cycle level; default 500 ms
	EntryBound time.Duration // floor must be reached within this; default 100 ms
	Limit      units.Watts   // floor limit; default 5 mW
	MDAT       time.Duration // minimum assertion time; default 10 ms (ATA log 30h/08h default)
	DETO       time.Duration // exit timeout; default 20 ms (ATA default)
	// MaxCycles > Cycles lets Run go on after Cycles while the Rig (an
	// Extender) says the cycles so far do not resolve the entry latency to
	// EntryU95 (default 1 ms); 0 = Cycles, a fixed count.
	MaxCycles int
	EntryU95  time.Duration
	// EntryHold > 0 makes the cycles after Cycles entry cycles: DEVSLP is
	// held only as long as the entry latency needs — at least EntryHold,
	// longer when the Extender asks for it, at most Hold — rather than
	// Hold. The entry is located in the first milliseconds after the
	// assertion, and the floor is already measured by the full cycles, so
	// an entry cycle costs Settle + EntryHold + Return rather than
	// Settle + Hold + Return (docs/analysis.md, "Entry cycles"). 0 = every
	// cycle holds for Hold.
	EntryHold time.Duration
}

func (o *Options) defaults() {
	def := func(d *time.Duration, v time.Duration) {
		if *d == 0 {
			*d = v
		}
	}
	if o.Cycles == 0 {
		o.Cycles = 10
	}
	def(&o.Settle, time.Second)
	def(&o.Hold, 300*time.Millisecond)
	def(&o.Return, 500*time.Millisecond)
	def(&o.EntryBound, DefaultEntryBound)
	def(&o.MDAT, 10*time.Millisecond)
	def(&o.DETO, 20*time.Millisecond)
	if o.Limit == 0 {
		o.Limit = 0.005
	}
	if o.MaxCycles == 0 {
		o.MaxCycles = o.Cycles
	}
	def(&o.EntryU95, time.Millisecond)
}

// Validate reports options that cannot give a meaningful verdict.
func (o Options) Validate() error {
	o.defaults()
	switch {
	case o.Cycles < 1:
		return fmt.Errorf("devslp: cycles must be ≥ 1 (got %d)", o.Cycles)
	case o.Hold < o.MDAT:
		return fmt.Errorf("devslp: hold %v is shorter than MDAT %v", o.Hold, o.MDAT)
	case o.Limit < 0:
		return fmt.Errorf("devslp: limit must be positive")
	case o.MaxCycles < o.Cycles:
		return fmt.Errorf("devslp: max cycles %d is fewer than cycles %d", o.MaxCycles, o.Cycles)
	case o.EntryU95 < 0:
		return fmt.Errorf("devslp: entry resolution %v is negative", o.EntryU95)
	case o.EntryHold < 0:
		return fmt.Errorf("devslp: entry hold %v is negative", o.EntryHold)
	case o.EntryHold > 0 && o.EntryHold < o.MDAT:
		return fmt.Errorf("devslp: entry hold %v is shorter than MDAT %v", o.EntryHold, o.MDAT)
	case o.EntryHold > o.Hold:
		return fmt.Errorf("devslp: entry hold %v is longer than hold %v", o.EntryHold, o.Hold)
	}
	return nil
}

// Rig is what Run needs from the measurement set-up for one drive.
type Rig interface {
	// SetDevSlp drives the pin and returns the host time it was commanded.
	SetDevSlp(ctx context.Context, asserted bool) (hostclock.Time, error)
	// Probe reads one block from the drive; returns issue and completion host times.
	Probe(ctx context.Context) (issue, complete hostclock.Time, err error)
	// Phase notes the start of a phase in the capture ("devslp-cycle:3").
	Phase(name string)
}

// Extender is a Rig that estimates, live, what the cycles so far measured.
// After Options.Cycles, Run asks it after each cycle and runs another (up
// to MaxCycles) while Resolved says the entry latency's 95 % half-width is
// still wider than want; it is asked after the last cycle too (its answer
// then only noted). hold is how long the next entry cycle must hold the
// pin to measure the entry (used with Options.EntryHold, within
// [EntryHold, Hold]; 0 = EntryHold). Resolved must not take long: the next
// cycle's settle period starts when it returns.
type Extender interface {
	Resolved(done []Timing, want time.Duration) (resolved bool, hold time.Duration)
}

// Timing is what the host did in one cycle, on the host clock.
type Timing struct {
	Cycle         int
	Start         hostclock.Time // start of the settle period
	Assert        hostclock.Time
	Deassert      hostclock.Time
	ProbeIssue    hostclock.Time
	ProbeComplete hostclock.Time
	End           hostclock.Time
	ProbeErr      string
	// EntryOnly: an entry cycle (Options.EntryHold), its phase named
	// "devslp-cycle:N:entry".
	EntryOnly bool
}

// EntryPhaseSuffix ends the phase name of an entry cycle.
const EntryPhaseSuffix = ":entry"

// Run performs the cycles. It returns the timings of the cycles it finished;
// the capture they are recorded in is judged by analysis (analysis/judge).
func Run(ctx context.Context, rig Rig, opt Options) ([]Timing, error) {
	opt.defaults()
	if err := opt.Validate(); err != nil {
		return nil, err
	}
	var out []Timing
	ext, _ := rig.(Extender)
	hold := opt.Hold
	for c := 1; c <= opt.MaxCycles; c++ {
		tm := Timing{Cycle: c, Start: hostclock.Now(), EntryOnly: hold < opt.Hold}
		name := fmt.Sprintf("devslp-cycle:%d", c)
		if tm.EntryOnly {
			name += EntryPhaseSuffix
		}
		rig.Phase(name)
		if err := sleep(ctx, opt.Settle); err != nil {
			return out, err
		}
		var err error
		if tm.Assert, err = rig.SetDevSlp(ctx, true); err != nil {
			return out, fmt.Errorf("cycle %d: assert DEVSLP: %w", c, err)
		}
		if err := sleep(ctx, hold); err != nil {
			_, _ = rig.SetDevSlp(context.Background(), false)
			return out, err
		}
		if tm.Deassert, err = rig.SetDevSlp(ctx, false); err != nil {
			return out, fmt.Errorf("cycle %d: deassert DEVSLP: %w", c, err)
		}
		tm.ProbeIssue, tm.ProbeComplete, err = rig.Probe(ctx)
		if err != nil {
			tm.ProbeErr = err.Error()
		}
		if err := sleep(ctx, opt.Return); err != nil {
			return out, err
		}
		tm.End = hostclock.Now()
		out = append(out, tm)
		// After the planned cycles, go on while the Extender says the
		// entry is not resolved; it is asked after the last cycle too, to
		// note the outcome.
		if c < opt.Cycles {
			continue
		}
		if opt.MaxCycles == opt.Cycles || ext == nil {
			break
		}
		done, next := ext.Resolved(out, opt.EntryU95)
		if done || c == opt.MaxCycles {
			break
		}
		if opt.EntryHold > 0 {
			hold = min(opt.Hold, max(opt.EntryHold, next))
		}
	}
	rig.Phase("devslp-end")
	return out, nil
}

func sleep(ctx context.Context, d time.Duration) error {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-t.C:
		return nil
	}
}

// Sample is one power reading on the host timeline. (The cycles are judged
// by analysis, from the capture: analysis/judge.)
type Sample struct {
	T hostclock.Time
	W units.Watts // all rails of the drive
}
