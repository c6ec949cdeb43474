package detect

import (
	"sort"
	"time"

	"github.com/idlewatt/idlewatt/hostclock"
	"github.com/idlewatt/idlewatt/states/powerstate"
)

// IO is one I/O's issue and completion on the host clock (ns).
type IO struct{ Issue, Complete hostclock.Time }

// Pin is a DEVSLP pin change on the host clock (ns).
type Pin struct {
	At       hostclock.Time
	Asserted bool
}

// Entry is one entry into a low state.
type Entry struct {
	State   powerstate.State
	Cause   string         // "io" (last I/O completion) or "pin" (DEVSLP assert)
	From    hostclock.Time // the cause's time
	At      hostclock.Time // first sample of the state
	Latency time.Duration
}

// Exit is one wake from a low state.
type Exit struct {
	State   powerstate.State
	Cause   string         // "pin" (DEVSLP deassert) or "io" (first I/O issued)
	From    hostclock.Time // the cause's time
	Done    hostclock.Time // completion of the first I/O at or after From
	Latency time.Duration
}

// Latencies pairs low-state spans with the events around them. spans, ios
// (by Issue) and pins must each be in time order. wakeWindow bounds how long
// after a span's end its waking I/O may be issued and still count (an I/O
// issued later did not wake this span).
func Latencies(spans []Span, ios []IO, pins []Pin, wakeWindow time.Duration) ([]Entry, []Exit) {
	var entries []Entry
	var exits []Exit
	for i, sp := range spans {
		if sp.State != powerstate.Partial && sp.State != powerstate.Slumber && sp.State != powerstate.DevSlp {
			continue
		}
		// Skip a span that continues the previous low state's descent
		// (partial → slumber): its entry is still measured from the I/O.
		e := Entry{State: sp.State, At: sp.Start}
		lastIO := lastCompletionBefore(ios, sp.Start)
		// The pin may be timed a little after the span's first sample (clock
		// alignment, the classifier dating edges at the first sample).
		pin, hasPin := lastPinBefore(pins, sp.Start.Add(pinSlack), true)
		switch {
		case sp.State == powerstate.DevSlp && hasPin && pin.At >= lastIO:
			e.Cause, e.From = "pin", pin.At
		case lastIO > 0:
			e.Cause, e.From = "io", lastIO
		}
		if e.Cause != "" && (i == 0 || !deeperOrEqual(spans[i-1].State, sp.State)) {
			e.Latency = max(0, time.Duration(e.At-e.From))
			entries = append(entries, e)
		}

		// Exit: only when the next span is shallower (the drive woke).
		if i+1 < len(spans) && deeperOrEqual(spans[i+1].State, sp.State) {
			continue
		}
		x := Exit{State: sp.State}
		if p, ok := firstPinAfter(pins, sp.Start, false); ok && p.At <= sp.End.Add(wakeWindow) && sp.State == powerstate.DevSlp {
			x.Cause, x.From = "pin", p.At
		}
		j := sort.Search(len(ios), func(k int) bool { return ios[k].Issue >= sp.Start })
		if j < len(ios) && ios[j].Issue <= sp.End.Add(wakeWindow) {
			if x.Cause == "" {
				x.Cause, x.From = "io", ios[j].Issue
			}
			// The first I/O issued at or after the trigger is the one the host waited on.
			k := sort.Search(len(ios), func(k int) bool { return ios[k].Issue >= x.From })
			if k < len(ios) {
				x.Done = ios[k].Complete
				x.Latency = time.Duration(x.Done - x.From)
				exits = append(exits, x)
			}
		}
	}
	return entries, exits
}

// pinSlack is how far after a span's start its DEVSLP assertion may be
// timed and still be its cause.
const pinSlack = 5 * time.Millisecond

// deeperOrEqual reports whether a is a lower-power state than b, or the same.
func deeperOrEqual(a, b powerstate.State) bool {
	if a == powerstate.Active || a == powerstate.Background || a == powerstate.Unknown || a == powerstate.Off {
		return false
	}
	return a >= b
}

func lastCompletionBefore(ios []IO, t hostclock.Time) hostclock.Time {
	// ios is sorted by Issue; completions of earlier-issued I/O may still end
	// later, so scan back over the few I/Os issued just before t.
	j := sort.Search(len(ios), func(k int) bool { return ios[k].Issue >= t })
	var last hostclock.Time
	for k := j - 1; k >= 0 && k >= j-64; k-- {
		if c := ios[k].Complete; c <= t && c > last {
			last = c
		}
	}
	return last
}

func lastPinBefore(pins []Pin, t hostclock.Time, asserted bool) (Pin, bool) {
	for k := len(pins) - 1; k >= 0; k-- {
		if pins[k].At <= t && pins[k].Asserted == asserted {
			return pins[k], true
		}
	}
	return Pin{}, false
}

func firstPinAfter(pins []Pin, t hostclock.Time, asserted bool) (Pin, bool) {
	for _, p := range pins {
		if p.At >= t && p.Asserted == asserted {
			return p, true
		}
	}
	return Pin{}, false
}
