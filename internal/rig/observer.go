package rig

import (
	"github.com/idlewatt/idlewatt/capture"
	"github.com/idlewatt/idlewatt/meter"
)

// Observer sees what the rig records, as it records it: live metrics
// (report/livemetrics via cmd) hang here. Start comes first, with the
// capture's header; the other calls come from the meter and phase
// goroutines and must not block.
type Observer interface {
	Start(h capture.Header)
	Samples(b *meter.Block)
	Gap(g meter.Gap)
	Stats(st meter.Stats)
	State(e capture.StateEvent)
}

// state writes a host state event and tells the observer.
func (r *Rig) state(e capture.StateEvent) {
	_ = r.w.State(e)
	if o := r.cfg.Observer; o != nil {
		o.State(e)
	}
}
