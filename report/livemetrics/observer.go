package livemetrics

import (
	"fmt"
	"io"
	"net"
	"strings"
	"time"

	"github.com/idlewatt/idlewatt/capture"
	"github.com/idlewatt/idlewatt/meter"
)

// Observer feeds a recording to live metrics: it is a capture/record
// Observer (and so a rig.Config.Observer) whose Start makes the Metrics
// from the capture's header, serves them on Listener and keeps Textfile up
// to date (at most once a second, and at Flush). Samples, gaps and link
// statistics go to their series; phase events become the state gauge, one
// series per phase kind ("devslp-cycle:3" is the state "devslp-cycle",
// counted in idlewatt_devslp_cycles_total). With neither a listener nor a
// textfile it makes nothing and its methods do nothing.
//
// The recorder calls Samples and Gap from the stream and Stats from its
// ticker, one after the other, never at once with each other's state here
// (Metrics itself is safe for concurrent use).
type Observer struct {
	Listener net.Listener // where /metrics is served; nil: not served
	Textfile string       // node_exporter textfile collector file; "": none
	// Log gets the one line saying the textfile could not be written (then
	// it is no longer updated: a metrics file must not stop a recording).
	Log io.Writer

	m         *Metrics
	stop      func()
	failed    bool
	lastWrite time.Time
}

// Metrics are the observer's metrics; nil before Start or when nothing
// asked for them.
func (o *Observer) Metrics() *Metrics { return o.m }

// Start makes the metrics of the recording with header h and serves them.
func (o *Observer) Start(h capture.Header) {
	if o.Listener == nil && o.Textfile == "" {
		return
	}
	o.m = New(h)
	if o.Listener != nil {
		o.stop = o.m.Serve(o.Listener)
	}
}

// Samples counts a block.
func (o *Observer) Samples(b *meter.Block) {
	if o.m != nil {
		o.m.Samples(b)
	}
}

// Gap counts a gap.
func (o *Observer) Gap(g meter.Gap) {
	if o.m != nil {
		o.m.Gap(g)
	}
}

// Stats takes the link counters and refreshes the textfile once a second.
func (o *Observer) Stats(st meter.Stats) { o.stats(st, false) }

// Event implements record.Observer: meter events are not metrics (the
// link's state comes with Stats).
func (*Observer) Event(meter.Event) {}

// State shows a phase event as the port's state.
func (o *Observer) State(e capture.StateEvent) {
	if o.m == nil || e.Kind != capture.StatePhase {
		return
	}
	if strings.HasPrefix(e.Value, "devslp-cycle:") {
		o.m.State(e.Port, "devslp-cycle")
		o.m.DevSlpCycle(e.Port)
		return
	}
	o.m.State(e.Port, e.Value)
}

// Verdict counts a DevSlp verdict of port (a run's result, after the
// recording).
func (o *Observer) Verdict(port int, outcome string) {
	if o.m != nil {
		o.m.DevSlpVerdict(port, outcome)
	}
}

// Flush takes st as the final link counters and writes the textfile now,
// so it ends with the recording's final figures.
func (o *Observer) Flush(st meter.Stats) { o.stats(st, true) }

// Close stops serving (and closes the listener, also when Start never ran).
func (o *Observer) Close() {
	if o.stop != nil {
		o.stop()
	} else if o.Listener != nil {
		o.Listener.Close()
	}
}

func (o *Observer) stats(st meter.Stats, final bool) {
	if o.m == nil {
		return
	}
	o.m.Stats(st)
	if !final && time.Since(o.lastWrite) < time.Second {
		return
	}
	o.lastWrite = time.Now()
	if o.Textfile != "" && !o.failed {
		if err := o.m.WriteTextfile(o.Textfile); err != nil {
			o.failed = true
			if o.Log != nil {
				fmt.Fprintf(o.Log, "idlewatt: metrics textfile %s: %v (no more updates)\n", o.Textfile, err)
			}
		}
	}
}
