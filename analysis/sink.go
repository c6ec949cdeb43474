package analysis

import (
	"github.com/idlewatt/idlewatt/capture"
	"github.com/idlewatt/idlewatt/meter"
)

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
// DriveSamples and DriveState are called from one goroutine, RailBlock
// from another (the reading one): the two groups may run concurrently with
// each other, never with themselves. The drives are accumulated
// concurrently (drivePool), but their DriveSamples and DriveState calls
// are not made from the drives' goroutines: they are recorded there and
// made afterwards, from one goroutine, in exactly the order one goroutine
// accumulating drive after drive, run after run, made them — each drive's
// in sample order, the drives interleaved as the capture has them — so a
// sink whose state is shared by the drives (a budget, a common grid) gets
// the same calls, in the same order, in every run. Slices and blocks are
// valid only for the call.
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

// RecordSink is what an Options.Samples sink may also implement to be
// handed the first pass's records: every record of the whole capture in
// file order but its samples (that pass skips them: no KindSamples or
// KindRejected record comes), then FirstPassDone with the header once
// that pass has read to the capture's end or damage — all before Begin,
// from the goroutine that called Analyze. With Options.Window they are
// still the whole capture's (the pass that fits the clock), not the
// window's. It is how report.html gets the capture's I/O, host states,
// meter events and DEVSLP pin edges from the read analysis makes anyway
// rather than from reads of its own. A record (its I/O slice) is valid
// only for the call.
type RecordSink interface {
	FirstPassRecord(rec *capture.Record)
	FirstPassDone(h capture.Header)
}

// recordSink is opts' sink as a RecordSink, or nil.
func recordSink(opts Options) RecordSink {
	if rs, ok := opts.Samples.(RecordSink); ok && !opts.recordsSeen {
		return rs
	}
	return nil
}

// sinkState reports s at t to the sink when it differs from the last one.
func (d *driveProc) sinkState(t int64, s State) {
	if d.sink == nil || (d.sinkSeen && d.sinkLast == s) {
		return
	}
	d.sinkSeen, d.sinkLast = true, s
	d.sink.DriveState(d.info.Port, (float64(t)-d.t0)/1e9, s)
}

// sinkRecorder is the SampleSink a drive has on a worker of drivePool: it
// keeps the drive's calls in the log of the epoch being worked on, for
// the pool's replayer to make on the real sink.
type sinkRecorder struct{ log *sinkLog }

// sinkLog is one worker's sink calls in an epoch, in the order made.
type sinkLog struct {
	calls []sinkCall
}

// sinkCall is a DriveSamples call (w) or a DriveState one (state). w is
// the epoch's own power, not a copy: a drive's run hands the sink its
// samples after the last change it makes to them (hum removal), and the
// epoch, its power included, is recycled only once the replayer has made
// its calls, so w holds what the drive handed over until then.
type sinkCall struct {
	port  int
	state bool
	t, dt float64
	w     []float64
	s     State
}

func (r *sinkRecorder) Begin(Clock, float64)                     {}
func (r *sinkRecorder) RailBlock(float64, float64, *meter.Block) {}

func (r *sinkRecorder) DriveSamples(port int, t, dt float64, w []float64) {
	r.log.calls = append(r.log.calls, sinkCall{port: port, t: t, dt: dt, w: w})
}

func (r *sinkRecorder) DriveState(port int, t float64, s State) {
	r.log.calls = append(r.log.calls, sinkCall{port: port, state: true, t: t, s: s})
}

// replay makes the call on sink.
func (c *sinkCall) replay(sink SampleSink) {
	if c.state {
		sink.DriveState(c.port, c.t, c.s)
		return
	}
	sink.DriveSamples(c.port, c.t, c.dt, c.w)
}
