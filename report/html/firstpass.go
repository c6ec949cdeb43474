package html

import (
	"github.com/idlewatt/idlewatt/capture"
	"github.com/idlewatt/idlewatt/hostclock"
	"github.com/idlewatt/idlewatt/meter"
)

// The capture's records from analysis' first pass (analysis.RecordSink):
// the page's events (I/O, host states, meter events) and the DEVSLP pin
// edges come from the read the analysis makes anyway, not from reads of
// their own — `idlewatt report` used to read the capture twice more for
// them (samples skipped, every chunk still read and checked).

// maxKeptIO and maxKeptEvents bound what a Pyramid keeps of the first
// pass, which stays in memory through the sample pass, when the heap is
// at its largest: I/O events (32 B each: 2 MiB) and host state and meter
// events (about 100 B each with a short note: 1.6 MB). A capture with
// more has its events read again at Render, as before, so memory stays
// bounded however busy the capture. Variables for the tests.
var (
	maxKeptIO     = 1 << 16
	maxKeptEvents = 1 << 14
)

// firstPassRecords is what a Pyramid keeps of the first pass's records.
type firstPassRecords struct {
	done     bool // FirstPassDone was called: the records below are all of them
	edges    edgeReader
	events   []keptEvent // the host states and meter events the page draws, in file order
	io       []keptIO    // the I/O events, in file order
	over     bool        // more than maxKeptIO or maxKeptEvents: nothing kept, the events are read again
	channels []meter.Channel
}

// keptEvent is a host state event or (meter) a meter event.
type keptEvent struct {
	meter bool
	st    capture.StateEvent
	ev    meter.Event
}

// keptIO is what the page uses of an I/O event.
type keptIO struct {
	issue, complete hostclock.Time
	port            int
	size            int32
}

// FirstPassRecord implements analysis.RecordSink.
func (p *Pyramid) FirstPassRecord(rec *capture.Record) {
	fp := &p.fp
	fp.edges.record(rec)
	if fp.over {
		return
	}
	switch rec.Kind {
	case capture.KindIO:
		if len(fp.io)+len(rec.IO) > maxKeptIO {
			fp.drop()
			return
		}
		for _, e := range rec.IO {
			fp.io = append(fp.io, keptIO{issue: e.Issue, complete: e.Complete, port: e.Port, size: e.Size})
		}
	case capture.KindState:
		if drawnState(rec.State.Kind) {
			fp.event(keptEvent{st: rec.State})
		}
	case capture.KindEvent:
		if drawnEvent(rec.Event.Kind) {
			fp.event(keptEvent{meter: true, ev: rec.Event})
		}
	}
}

func (fp *firstPassRecords) event(e keptEvent) {
	if len(fp.events) >= maxKeptEvents {
		fp.drop()
		return
	}
	fp.events = append(fp.events, e)
}

// drop gives up keeping the events: they will be read again.
func (fp *firstPassRecords) drop() {
	fp.io, fp.events, fp.over = nil, nil, true
}

// FirstPassDone implements analysis.RecordSink.
func (p *Pyramid) FirstPassDone(h capture.Header) {
	p.fp.done = true
	p.fp.edges.finish(h)
	p.fp.channels = h.Channels
}

// timeline gives the capture's events on the page's timeline: from the
// first pass's records when the pyramid has them all, else read from the
// capture at path (samples skipped). stop, if set, ends it with its error.
func (p *Pyramid) timeline(path string, ports []int, stop func() error) (*timeline, error) {
	fp := &p.fp
	if !fp.done || fp.over || !regular(path) {
		return readTimeline(path, p, ports, stop)
	}
	if stop != nil {
		if err := stop(); err != nil {
			return nil, err
		}
	}
	tr := newTimelineReader(p, ports, fp.channels)
	for i := range fp.events {
		if e := &fp.events[i]; e.meter {
			tr.event(e.ev)
		} else {
			tr.state(e.st)
		}
	}
	for _, e := range fp.io {
		tr.io(capture.IOEvent{Port: e.port, Issue: e.issue, Complete: e.complete, Size: e.size})
	}
	return tr.end(ports), nil
}
