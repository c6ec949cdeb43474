package files

import (
	"github.com/idlewatt/idlewatt/meter"
	"github.com/idlewatt/idlewatt/units"
)

// blockSamples is how many samples a reader hands the sink at a time.
const blockSamples = 4096

// blocker gathers consecutive samples of one channel into Blocks; the
// Block is reused, so the sink must copy what it keeps (capture.Writer
// does).
type blocker struct {
	sink meter.Sink
	b    meter.Block
}

func newBlocker(sink meter.Sink, channel int) *blocker {
	return &blocker{sink: sink, b: meter.Block{Channel: channel,
		V: make([]units.Volts, 0, blockSamples), I: make([]units.Amps, 0, blockSamples)}}
}

func (k *blocker) add(idx uint64, v units.Volts, i units.Amps) error {
	if len(k.b.I) > 0 && idx != k.b.Start+uint64(len(k.b.I)) {
		if err := k.flush(); err != nil {
			return err
		}
	}
	if len(k.b.I) == 0 {
		k.b.Start = idx
	}
	k.b.V = append(k.b.V, v)
	k.b.I = append(k.b.I, i)
	if len(k.b.I) >= blockSamples {
		return k.flush()
	}
	return nil
}

func (k *blocker) flush() error {
	if len(k.b.I) == 0 {
		return nil
	}
	err := k.sink.Samples(&k.b)
	k.b.V, k.b.I = k.b.V[:0], k.b.I[:0]
	return err
}

// gap flushes what is pending and reports [start, start+count) missing.
func (k *blocker) gap(start, count uint64, reason string) error {
	if count == 0 {
		return nil
	}
	if err := k.flush(); err != nil {
		return err
	}
	return k.sink.Gap(meter.Gap{Channel: k.b.Channel, Start: start, Count: count, Reason: reason})
}
