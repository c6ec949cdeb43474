package hub

import "github.com/idlewatt/idlewatt/meter"

// ResolveConfig is meter.Resolver: ResolveConfig against the hub's Info.
func (h *Hub) ResolveConfig(cfg meter.StreamConfig) (meter.StreamConfig, error) {
	return ResolveConfig(h.info, cfg)
}

// ResolveConfig is meter.Resolver: ResolveConfig against the recorded hub's Info.
func (rp *Replay) ResolveConfig(cfg meter.StreamConfig) (meter.StreamConfig, error) {
	return ResolveConfig(rp.info, cfg)
}

var (
	_ meter.Resolver    = (*Hub)(nil)
	_ meter.Resolver    = (*Replay)(nil)
	_ meter.Reconnector = (*Hub)(nil)
)
