package series

import (
	"github.com/idlewatt/idlewatt/analysis/decimate"
	"github.com/idlewatt/idlewatt/units"
)

// DevSlpCycle is one DevSlp entry/exit cycle to draw. Times are in
// milliseconds on the cycle's own axis (e.g. 0 = DEVSLP asserted); a NaN
// time means the event did not happen or was not seen, and its line is left
// out. Floor and Limit of 0 are not drawn.
type DevSlpCycle struct {
	Name  string            // drive name, for the subtitle
	Power decimate.Envelope // T in ms, values in W
	// Assert and Deassert are when the host drove the DEVSLP pin.
	Assert, Deassert float64
	// FloorReached is when power first settled at the floor after Assert;
	// FirstIO is when the first I/O after Deassert completed.
	FloorReached, FirstIO float64
	Floor                 units.Watts // measured DevSlp floor
	Limit                 units.Watts // the pass limit, e.g. 5 mW
	// FloorLo and FloorHi bound the floor estimate's 95 % interval, drawn
	// as a green band on the floor line, so the verdict (floor against the
	// limit, with its uncertainty) can be checked against the picture even
	// where the noisy trace touches the limit. FloorHi ≤ FloorLo: not given.
	// Like every number here it comes from the analysis; the chart
	// computes none. New fields must keep "zero = not given, not drawn".
	FloorLo, FloorHi units.Watts
}
