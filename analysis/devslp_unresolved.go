package analysis

import (
	"fmt"
	"math"
	"sort"
	"time"

	"github.com/idlewatt/idlewatt/hostclock"
	"github.com/idlewatt/idlewatt/states/detect"
	"github.com/idlewatt/idlewatt/states/powerstate"
	"github.com/idlewatt/idlewatt/units"
)

// DevSlpUnresolved is the time under the DEVSLP pin that a drive without a
// learned DevSlp level may have spent at its floor: the spans of the
// level the floor is read as (ReadAs) from the first assertion inside
// them to their end, each end within ±½ window. StateReport's
// residency_u95 of devslp and of ReadAs hold it (docs/analysis.md,
// "States").
type DevSlpUnresolved struct {
	S      units.Seconds `json:"s"`
	ReadAs string        `json:"read_as"`
}

// devslpUnresolved widens the residency intervals of a drive whose DevSlp
// level was not learned (its drop under the pin not resolved from the
// level before it, or too little pin-asserted quiet time to learn one)
// although the pin was asserted: the floor is then read as the nearest
// learned level above it, so DevSlp reads 0 and that level holds its
// time. Which of the two the drive was in cannot be told; without this
// term DevSlp read "0 ± 0" against a true 9–18 % (the independent
// generator's seed 2). The time is counted from the assertion (the floor
// is not reached before it) to the end of the span it lies in — the floor
// holds past the release until the drive wakes, which the span's end
// marks — plus ½ window for where the median put that end. The bound
// B = that time / T is devslp's interval (residency 0, truth in [0, B])
// and is added to the level's, as unlearned does for a missing Partial
// or Slumber.
func (s *StateReport) devslpUnresolved(spans []detect.Span, pins []detect.Pin, w time.Duration) {
	l := s.Levels
	total := float64(s.MeasuredS)
	if l.DevSlp > 0 || l.Idle <= 0 || total <= 0 {
		return
	}
	readAs := powerstate.Idle
	switch {
	case l.Slumber > 0:
		readAs = powerstate.Slumber
	case l.Partial > 0:
		readAs = powerstate.Partial
	}
	asserted := assertedSpans(pins)
	if len(asserted) == 0 {
		return
	}
	var amb time.Duration
	k := 0
	for _, sp := range spans {
		if sp.State != readAs {
			continue
		}
		for k < len(asserted) && asserted[k][1] <= sp.Start {
			k++
		}
		if k == len(asserted) {
			break
		}
		if a := asserted[k][0]; a < sp.End {
			amb += sp.End.Sub(max(a, sp.Start)) + w/2
		}
	}
	if amb <= 0 {
		return
	}
	b := amb.Seconds() / total
	s.ResidencyU95[powerstate.DevSlp.String()] = math.Max(s.ResidencyU95[powerstate.DevSlp.String()], b)
	s.ResidencyU95[readAs.String()] += b
	s.DevSlpUnresolved = &DevSlpUnresolved{S: units.SecondsOf(amb), ReadAs: readAs.String()}
}

// assertedSpans are the [assert, release) spans of the pin, in time order;
// an assertion never released lasts to the end of time.
func assertedSpans(pins []detect.Pin) [][2]hostclock.Time {
	ps := append([]detect.Pin(nil), pins...)
	sort.SliceStable(ps, func(a, b int) bool { return ps[a].At < ps[b].At })
	var out [][2]hostclock.Time
	open := false
	for _, p := range ps {
		switch {
		case p.Asserted && !open:
			out = append(out, [2]hostclock.Time{p.At, math.MaxInt64})
			open = true
		case !p.Asserted && open:
			out[len(out)-1][1] = p.At
			open = false
		}
	}
	return out
}

// devslpUnresolvedNote says why a drive's DevSlp residency is uncertain
// (devslpUnresolved), nothing when it is not.
func (s *StateReport) devslpUnresolvedNote() string {
	u := s.DevSlpUnresolved
	if u == nil || s.MeasuredS <= 0 {
		return ""
	}
	why := ""
	if s.Learning != nil && s.Learning.Evidence["devslp"] != "" {
		why = " (" + s.Learning.Evidence["devslp"] + ")"
	}
	return fmt.Sprintf("drive %q: DevSlp level not learned%s: %.3f s (%.1f %% of the measured time) under the DEVSLP pin read as %s may have been DevSlp: the residency intervals of devslp and %s (residency_u95) hold it",
		s.Name, why, float64(u.S), 100*float64(u.S)/float64(s.MeasuredS), u.ReadAs, u.ReadAs)
}
