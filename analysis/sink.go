package analysis

import "github.com/idlewatt/idlewatt/meter"

// SampleSink sees the second pass's samples exactly as the metrics see
// them, so a viewer built from it (report/html's pyramid) integrates to the
// same energy as report.json over any interval. It is how outputs get at
// per-sample data without analysis drawing anything or a third read of the
// capture.
//
// Times are seconds on the report's timeline (aligned host time, 0 = meter
// sample index 0, as every *_s key of report.json); dt is the fitted sample
// period in seconds, the one energy_j is summed with.
//
// DriveSamples and DriveState are called from the accumulating goroutine,
// RailBlock from the reading one: the two groups may run concurrently with
// each other, never with themselves. Slices and blocks are valid only for
// the call.
type SampleSink interface {
	// Begin is called once, before any sample, with the clock fit.
	Begin(c Clock, t0Host float64)
	// DriveSamples gives the power (W, sum over rails) of drive port's
	// consecutive samples, the first at t, every rail present.
	DriveSamples(port int, t, dt float64, w []float64)
	// DriveState says drive port is in state s from t on (called on each
	// change of the per-sample state residency counts).
	DriveState(port int, t float64, s State)
	// RailBlock gives one channel's block (every sample of that rail,
	// whether or not the drive's other rails have it), the first at t.
	RailBlock(t, dt float64, b *meter.Block)
}

// sinkState reports s at t to the sink when it differs from the last one.
func (d *driveProc) sinkState(t int64, s State) {
	if d.sink == nil || (d.sinkSeen && d.sinkLast == s) {
		return
	}
	d.sinkSeen, d.sinkLast = true, s
	d.sink.DriveState(d.info.Port, (float64(t)-d.t0)/1e9, s)
}
