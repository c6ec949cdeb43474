package rig

import (
	"github.com/idlewatt/idlewatt/capture"
	"github.com/idlewatt/idlewatt/capture/record"
	"github.com/idlewatt/idlewatt/meter"
)

// Observer sees what the rig records, as it records it: live metrics
// (report/livemetrics via cmd) hang here. It is the recorder's
// (capture/record.Observer): Start comes first, with the capture's header;
// the other calls come from the meter and phase goroutines and must not
// block.
type Observer = record.Observer

// state writes a host state event and tells the observer.
func (r *Rig) state(e capture.StateEvent) { _ = r.rec.State(e) }

// tee is two observers as one (the caller's, which may be nil, then the
// rig's own).
type tee struct{ a, b Observer }

func teeObserver(a, b Observer) Observer {
	if a == nil {
		return b
	}
	return tee{a, b}
}

func (t tee) Start(h capture.Header)     { t.a.Start(h); t.b.Start(h) }
func (t tee) Samples(b *meter.Block)     { t.a.Samples(b); t.b.Samples(b) }
func (t tee) Gap(g meter.Gap)            { t.a.Gap(g); t.b.Gap(g) }
func (t tee) Stats(st meter.Stats)       { t.a.Stats(st); t.b.Stats(st) }
func (t tee) State(e capture.StateEvent) { t.a.State(e); t.b.State(e) }
func (t tee) Event(e meter.Event)        { t.a.Event(e); t.b.Event(e) }
