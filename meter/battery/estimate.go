package battery

import (
	"fmt"
	"math"
	"time"

	"github.com/idlewatt/idlewatt/units"
)

// Estimate is the mean power over a window and its statistical uncertainty.
// The fuel gauge's own calibration error (often 1–5 %) is not included.
type Estimate struct {
	Power       units.Watts   `json:"power_w"`
	Uncertainty units.Watts   `json:"uncertainty_w"` // one standard uncertainty
	Window      time.Duration `json:"-"`
	WindowS     float64       `json:"window_s"`
	Updates     int           `json:"updates"` // distinct gauge values seen
	Method      Method        `json:"method"`
}

func (e Estimate) String() string {
	return fmt.Sprintf("%.3f ± %.3f W over %v (%d gauge updates, %s)", float64(e.Power), float64(e.Uncertainty), e.Window, e.Updates, e.Method)
}

// Estimator turns polled readings into one long-window estimate. Gauges
// update every few seconds to a minute, so a window should span many
// updates; the uncertainty says how many it did.
type Estimator struct {
	Interval time.Duration // poll interval: bounds when an energy step happened
	n        int
	first    Reading
	last     Reading
	sum      float64
	vals     []float64 // distinct power values, in order
	// energy change points
	e1, e2    Reading
	changes   int
	minStep   float64
	prevE     float64
	havePrevE bool
}

// Add records one reading (Discharging, as Read returns it).
func (s *Estimator) Add(r Reading) {
	if s.n == 0 {
		s.first = r
	}
	s.n++
	s.last = r
	if r.Method == MethodPower || r.Method == MethodIV {
		s.sum += r.Power
		if len(s.vals) == 0 || s.vals[len(s.vals)-1] != r.Power {
			s.vals = append(s.vals, r.Power)
		}
		return
	}
	if s.havePrevE && r.Energy != s.prevE {
		step := math.Abs(s.prevE - r.Energy)
		if s.changes == 0 {
			s.e1 = r
			s.minStep = step
		}
		s.minStep = math.Min(s.minStep, step)
		s.e2 = r
		s.changes++
	}
	s.prevE, s.havePrevE = r.Energy, true
}

// Result returns the estimate so far; an error if the window holds too
// little to say anything.
func (s *Estimator) Result() (Estimate, error) {
	e := Estimate{Method: s.last.Method, Window: s.last.At - s.first.At}
	e.WindowS = e.Window.Seconds()
	if s.n == 0 {
		return e, fmt.Errorf("battery: no readings")
	}
	if e.Method == MethodPower || e.Method == MethodIV {
		e.Power = units.Watts(s.sum / float64(s.n))
		e.Updates = len(s.vals)
		if len(s.vals) < 2 {
			return e, fmt.Errorf("battery: the gauge did not update during %v; average longer", e.Window)
		}
		var m, v float64
		for _, x := range s.vals {
			m += x
		}
		m /= float64(len(s.vals))
		for _, x := range s.vals {
			v += (x - m) * (x - m)
		}
		sd := math.Sqrt(v / float64(len(s.vals)-1))
		e.Uncertainty = units.Watts(sd / math.Sqrt(float64(len(s.vals))))
		return e, nil
	}
	// Energy deltas between the first and last observed steps: both are
	// known to within one poll interval, and each step to within one
	// quantum.
	e.Updates = s.changes
	if s.changes < 2 {
		return e, fmt.Errorf("battery: energy_now changed %d times in %v; need 2 (average longer)", s.changes, e.Window)
	}
	dt := (s.e2.At - s.e1.At).Seconds()
	p := (s.e1.Energy - s.e2.Energy) / dt
	e.Power = units.Watts(p)
	e.Window, e.WindowS = s.e2.At-s.e1.At, dt
	ti := s.Interval.Seconds()
	e.Uncertainty = units.Watts(math.Hypot(math.Abs(p)*math.Sqrt2*ti/dt, s.minStep/dt))
	return e, nil
}
