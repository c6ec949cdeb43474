package powerstate

import "fmt"

// State is a drive's power state.
type State uint8

// States detection classifies into, from most to least power (their values
// index detection's arrays up to NumDetected), then the simulator's truth
// alone holds.
const (
	Unknown State = iota
	Active
	// Background is power above the idle level with no I/O outstanding:
	// the drive's own work (garbage collection) or a wake spike.
	Background
	Idle
	Partial
	Slumber
	DevSlp
	Off

	// SpinUp is an HDD's spindle starting.
	SpinUp
	// Wake is the exit latency from a low state (or from power-on for an
	// SSD).
	Wake
	// Standby is an HDD spun down.
	Standby
	numStates
)

// NumDetected is one more than the highest state detection classifies
// into, for arrays indexed by State.
const NumDetected = Off + 1

// Detected lists the states detection classifies into, in report order.
var Detected = []State{Active, Background, Idle, Partial, Slumber, DevSlp, Off}

// Simulated lists the states a simulated drive's truth holds, in the order
// the simulator names them (its error messages list them so).
var Simulated = []State{Off, SpinUp, Wake, Active, Idle, Partial, Slumber, DevSlp, Standby}

var names = [numStates]string{"unknown", "active", "background", "idle", "partial", "slumber", "devslp", "off", "spinup", "wake", "standby"}

// String is the state's name as every output file spells it.
func (s State) String() string {
	if s < numStates {
		return names[s]
	}
	return fmt.Sprintf("state(%d)", uint8(s))
}

// Parse maps a name from String back to a State.
func Parse(name string) (State, error) {
	for i, n := range names {
		if n == name {
			return State(i), nil
		}
	}
	return Unknown, fmt.Errorf("unknown state %q", name)
}
