package drivesim

import (
	"fmt"
	"strings"
	"time"

	"github.com/idlewatt/idlewatt/units"
)

// State is the drive's true state in a Segment.
type State uint8

// Drive states. Wake is the exit latency from a low state (or from power-on
// for an SSD); SpinUp is an HDD's spindle starting.
const (
	StateOff State = iota
	StateSpinUp
	StateWake
	StateActive
	StateIdle
	StatePartial
	StateSlumber
	StateDevSlp
	StateStandby
	numStates
)

var stateNames = [numStates]string{"off", "spinup", "wake", "active", "idle", "partial", "slumber", "devslp", "standby"}

func (s State) String() string {
	if s < numStates {
		return stateNames[s]
	}
	return fmt.Sprintf("state(%d)", uint8(s))
}

// ParseState is the inverse of State.String.
func ParseState(name string) (State, error) {
	for i, n := range stateNames {
		if n == name {
			return State(i), nil
		}
	}
	return 0, fmt.Errorf("unknown drive state %q (want one of %s)", name, strings.Join(stateNames[:], ", "))
}

// lowLink reports whether s is a quiescent state the idle timers and the
// DEVSLP pin may move the drive out of into a deeper one.
func (s State) lowLink() bool { return s == StateIdle || s == StatePartial || s == StateSlumber }

// Segment is an interval of constant true power: [Start, End) on the
// emulator clock, the state, whether a background GC burst ran (the state is
// then the link state underneath), whether a host request was outstanding
// (issued and not yet reported complete: the report's definition of
// active), and the noise-free power per rail.
type Segment struct {
	Start, End time.Duration
	State      State
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
