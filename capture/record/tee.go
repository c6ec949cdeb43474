package record

import (
	"github.com/idlewatt/idlewatt/capture"
	"github.com/idlewatt/idlewatt/meter"
)

// Tee is several observers as one, in order; nil ones are left out (Tee
// of none, or of nils only, is nil). The optional IOObserver and
// MarkObserver calls go to those that implement them.
func Tee(obs ...Observer) Observer {
	var t tee
	for _, o := range obs {
		if o == nil {
			continue
		}
		if inner, ok := o.(tee); ok {
			t = append(t, inner...)
			continue
		}
		t = append(t, o)
	}
	switch len(t) {
	case 0:
		return nil
	case 1:
		return t[0]
	}
	return t
}

type tee []Observer

func (t tee) Start(h capture.Header) {
	for _, o := range t {
		o.Start(h)
	}
}

func (t tee) Samples(b *meter.Block) {
	for _, o := range t {
		o.Samples(b)
	}
}

func (t tee) Gap(g meter.Gap) {
	for _, o := range t {
		o.Gap(g)
	}
}

func (t tee) Stats(st meter.Stats) {
	for _, o := range t {
		o.Stats(st)
	}
}

func (t tee) State(e capture.StateEvent) {
	for _, o := range t {
		o.State(e)
	}
}

func (t tee) Event(e meter.Event) {
	for _, o := range t {
		o.Event(e)
	}
}

// IO implements IOObserver.
func (t tee) IO(evs []capture.IOEvent) {
	for _, o := range t {
		if x, ok := o.(IOObserver); ok {
			x.IO(evs)
		}
	}
}

// Mark implements MarkObserver.
func (t tee) Mark(m meter.MarkEcho) {
	for _, o := range t {
		if x, ok := o.(MarkObserver); ok {
			x.Mark(m)
		}
	}
}
