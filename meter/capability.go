package meter

import (
	"time"

	"github.com/idlewatt/idlewatt/units"
)

// Resolver is implemented by meters that fill a StreamConfig's defaults
// (rate, ports) the way their Stream will, and reject what they cannot do
// (an error wrapping ErrUnsupported). Recorders resolve before they write a
// capture header, so the header states the rate and channels streamed.
type Resolver interface {
	ResolveConfig(cfg StreamConfig) (StreamConfig, error)
}

// Resolve returns cfg as m will stream it: m's ResolveConfig if it is a
// Resolver, else cfg unchanged.
func Resolve(m Meter, cfg StreamConfig) (StreamConfig, error) {
	if r, ok := m.(Resolver); ok {
		return r.ResolveConfig(cfg)
	}
	return cfg, nil
}

// Reconnector is implemented by meters that reopen a link that vanished
// mid-stream (a cable pulled, a USB reset) and resume, recording the samples
// lost as one gap. SetGiveUp bounds how long they keep trying before Stream
// fails: 0 is the driver's default, a negative duration fails at the first
// disconnect. It is called before Stream.
type Reconnector interface {
	SetGiveUp(d time.Duration)
}

// Power returns sample k's power, V·I.
func (b *Block) Power(k int) units.Watts { return units.Power(b.V[k], b.I[k]) }

// PowerSum returns the sum of the block's V·I over its samples in W (a V
// and I of unequal length count up to the shorter): PowerSum/Len is the
// block's mean power, PowerSum/rate its energy in J.
func (b *Block) PowerSum() float64 {
	var sum float64
	for k := range min(len(b.V), len(b.I)) {
		sum += float64(b.V[k]) * float64(b.I[k])
	}
	return sum
}
