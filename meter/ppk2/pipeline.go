package ppk2

import (
	"github.com/idlewatt/idlewatt/hostclock"
	"github.com/idlewatt/idlewatt/meter"
	"github.com/idlewatt/idlewatt/units"
)

// blockSize bounds a Block; a block is also flushed at the end of each read.
const blockSize = 4096

// pipeline turns synced raw words into the meter.Sink stream: convert,
// spike-filter, average n raw samples per output sample, report the logic
// inputs as events. A window that contains a missing raw sample is itself
// missing: averaging fewer samples would bias the mean toward the ones that
// arrived, so it is reported as a gap, never filled.
type pipeline struct {
	sink      meter.Sink
	err       error
	conv      *Converter
	filter    SpikeFilter
	useFilter bool
	n         uint64
	v         units.Volts
	recv      hostclock.Time // host time of the current read

	win, cnt uint64
	sum      float64
	next     uint64 // next output index to deliver (sample or gap)
	lastRaw  uint64

	blk   meter.Block
	vbuf  []units.Volts
	ibuf  []units.Amps
	logic int // -1 until the first sample
}

func newPipeline(sink meter.Sink, conv *Converter, filter bool, n uint64, v units.Volts) *pipeline {
	p := &pipeline{sink: sink, conv: conv, useFilter: filter, n: n, v: v, logic: -1,
		vbuf: make([]units.Volts, blockSize), ibuf: make([]units.Amps, 0, blockSize)}
	for k := range p.vbuf {
		p.vbuf[k] = v
	}
	return p
}

func (p *pipeline) sample(idx uint64, w Word) {
	a := p.conv.Amps(w)
	if p.useFilter {
		a = p.filter.Apply(a, w.Range())
	}
	p.lastRaw = idx
	if l := int(w.Logic()); l != p.logic {
		p.logic = l
		p.event(meter.Event{Kind: meter.EventLogic, Port: 1, Index: idx / p.n, Value: int64(l), HostRecv: p.recv})
	}
	if p.n == 1 {
		p.emit(idx, a)
		return
	}
	win := idx / p.n
	if win < p.next {
		return // the window already holds a gap
	}
	if win != p.win || p.cnt == 0 {
		p.win, p.cnt, p.sum = win, 0, 0
	}
	p.sum += a
	p.cnt++
	if p.cnt == p.n {
		p.emit(win, p.sum/float64(p.n))
		p.cnt = 0
	}
}

func (p *pipeline) emit(o uint64, a float64) {
	if o != p.next {
		p.gapOut(p.next, o-p.next)
	}
	if len(p.ibuf) == 0 {
		p.blk.Start = o
	}
	p.ibuf = append(p.ibuf, units.Amps(a))
	p.next = o + 1
	if len(p.ibuf) == blockSize {
		p.flush()
	}
}

func (p *pipeline) gap(start, count uint64) {
	end := (start + count - 1) / p.n // last output window touched
	p.cnt = 0
	if end+1 > p.next {
		p.gapOut(p.next, end+1-p.next)
	}
}

func (p *pipeline) gapOut(start, count uint64) {
	p.flush()
	if p.err == nil {
		p.err = p.sink.Gap(meter.Gap{Channel: 0, Start: start, Count: count, Reason: "counter"})
	}
	p.next = start + count
}

func (p *pipeline) event(e meter.Event) {
	p.flush()
	if p.err == nil {
		p.err = p.sink.Event(e)
	}
}

func (p *pipeline) mark(m meter.MarkEcho) {
	p.flush()
	if p.err == nil {
		p.err = p.sink.Mark(m)
	}
}

// flush hands the buffered samples to the sink. The slices stay owned by
// the pipeline (meter.Block's contract).
func (p *pipeline) flush() {
	if len(p.ibuf) == 0 {
		return
	}
	if p.err == nil {
		p.blk.I = p.ibuf
		p.blk.V = p.vbuf[:len(p.ibuf)]
		p.err = p.sink.Samples(&p.blk)
	}
	p.ibuf = p.ibuf[:0]
}
