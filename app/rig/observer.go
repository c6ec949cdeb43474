package rig

import (
	"github.com/idlewatt/idlewatt/capture"
	"github.com/idlewatt/idlewatt/capture/record"
)

// Observer sees what the rig records, as it records it: live metrics
// (report/livemetrics via cmd) hang here. It is the recorder's
// (capture/record.Observer): Start comes first, with the capture's header;
// the other calls come from the meter and phase goroutines and must not
// block.
type Observer = record.Observer

// state writes a host state event and tells the observer.
func (r *Rig) state(e capture.StateEvent) { _ = r.rec.State(e) }

// teeObserver is the caller's observer (which may be nil), then the
// rig's own; record.Tee passes the optional I/O and mark calls on too.
func teeObserver(a, b Observer) Observer { return record.Tee(a, b) }
