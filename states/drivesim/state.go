package drivesim

import (
	"fmt"
	"strings"
	"time"

	"github.com/idlewatt/idlewatt/states/powerstate"
	"github.com/idlewatt/idlewatt/units"
)

// ParseState is the inverse of powerstate.State.String for the states a simulated
// drive's truth holds (powerstate.Simulated).
func ParseState(name string) (powerstate.State, error) {
	names := make([]string, len(powerstate.Simulated))
	for i, st := range powerstate.Simulated {
		if st.String() == name {
			return st, nil
		}
		names[i] = st.String()
	}
	return powerstate.Unknown, fmt.Errorf("unknown drive state %q (want one of %s)", name, strings.Join(names, ", "))
}

// lowLink reports whether s is a quiescent state the idle timers and the
// DEVSLP pin may move the drive out of into a deeper one.
func lowLink(s powerstate.State) bool {
	return s == powerstate.Idle || s == powerstate.Partial || s == powerstate.Slumber
}

// Segment is an interval of constant true power: [Start, End) on the
// emulator clock, the state (one of powerstate.Simulated), whether a
// background GC burst ran (the state is then the link state underneath),
// whether a host request was outstanding (issued and not yet reported
// complete: the report's definition of active), and the noise-free power
// per rail.
type Segment struct {
	Start, End time.Duration
	State      powerstate.State
	GC         bool
	IO         bool
	P5, P12    units.Watts
}

// Power returns the total of both rails.
func (s Segment) Power() units.Watts { return s.P5 + s.P12 }

// ALPM policies, as written to /sys/class/scsi_host/hostN/link_power_management_policy.
const (
	PolicyMaxPerformance  = "max_performance"
	PolicyMediumPower     = "medium_power"
	PolicyMedPowerDIPM    = "med_power_with_dipm"
	PolicyMinPowerPartial = "min_power_with_partial"
	PolicyMinPower        = "min_power"
)

// Policies lists the policies SetPolicy accepts.
var Policies = []string{PolicyMaxPerformance, PolicyMediumPower, PolicyMedPowerDIPM, PolicyMinPowerPartial, PolicyMinPower}

func validPolicy(p string) (string, error) {
	p = strings.TrimSpace(p)
	if p == "" {
		return PolicyMaxPerformance, nil
	}
	for _, q := range Policies {
		if p == q {
			return p, nil
		}
	}
	return "", fmt.Errorf("drivesim: unknown ALPM policy %q (want one of %s)", p, strings.Join(Policies, ", "))
}
