package ppk2

import (
	"fmt"

	"github.com/idlewatt/idlewatt/meter"
	"github.com/idlewatt/idlewatt/units"
)

// collect is a meter.Sink that keeps everything and checks that sample
// and gap indices tile the timeline without overlap.
type collect struct {
	start   uint64
	next    uint64
	started bool
	i       []units.Amps
	v       []units.Volts
	idx     []uint64
	gaps    []meter.Gap
	marks   []meter.MarkEcho
	events  []meter.Event
	err     error
}

func (c *collect) at(start, n uint64) {
	if c.started && start != c.next && c.err == nil {
		c.err = fmt.Errorf("index %d follows %d", start, c.next)
	}
	if !c.started {
		c.start, c.started = start, true
	}
	c.next = start + n
}

func (c *collect) Samples(b *meter.Block) error {
	if len(b.V) != len(b.I) {
		c.err = fmt.Errorf("V and I lengths differ")
	}
	c.at(b.Start, uint64(b.Len()))
	for k := range b.I {
		c.idx = append(c.idx, b.Start+uint64(k))
	}
	c.i = append(c.i, b.I...)
	c.v = append(c.v, b.V...)
	return nil
}

func (c *collect) Gap(g meter.Gap) error {
	if g.Count == 0 {
		c.err = fmt.Errorf("empty gap at %d", g.Start)
	}
	c.at(g.Start, g.Count)
	c.gaps = append(c.gaps, g)
	return nil
}
func (c *collect) Mark(m meter.MarkEcho) error { c.marks = append(c.marks, m); return nil }
func (c *collect) Event(e meter.Event) error   { c.events = append(c.events, e); return nil }
