package detect

import (
	"time"

	"github.com/idlewatt/idlewatt/states/powerstate"
	"github.com/idlewatt/idlewatt/units"
)

// Summary accumulates spans into residency, per-state power and transitions.
type Summary struct {
	Time        [powerstate.NumDetected]time.Duration
	Energy      [powerstate.NumDetected]units.Joules
	Spans       [powerstate.NumDetected]int
	Transitions map[[2]powerstate.State]int
	last        powerstate.State
}

// Add accounts one span. Spans must come in time order.
func (s *Summary) Add(sp Span) {
	d := sp.Duration()
	s.Time[sp.State] += d
	s.Energy[sp.State] += units.Joules(float64(sp.MeanW) * d.Seconds())
	s.Spans[sp.State]++
	if s.Transitions == nil {
		s.Transitions = map[[2]powerstate.State]int{}
	}
	if s.last != powerstate.Unknown && s.last != sp.State {
		s.Transitions[[2]powerstate.State{s.last, sp.State}]++
	}
	s.last = sp.State
}

// Total returns the classified time.
func (s *Summary) Total() time.Duration {
	var t time.Duration
	for _, d := range s.Time {
		t += d
	}
	return t
}

// Residency returns the fraction of classified time spent in st.
func (s *Summary) Residency(st powerstate.State) float64 {
	tot := s.Total()
	if tot == 0 {
		return 0
	}
	return float64(s.Time[st]) / float64(tot)
}

// MeanPower returns the mean power while in st (0 if never).
func (s *Summary) MeanPower(st powerstate.State) units.Watts {
	if s.Time[st] == 0 {
		return 0
	}
	return units.Watts(float64(s.Energy[st]) / s.Time[st].Seconds())
}
