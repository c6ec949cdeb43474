package hub

import (
	"fmt"
	"slices"

	"github.com/idlewatt/idlewatt/meter"
)

// ResolveConfig is meter.Resolver: ResolveConfig against the hub's Info.
func (h *Hub) ResolveConfig(cfg meter.StreamConfig) (meter.StreamConfig, error) {
	return ResolveConfig(h.info, cfg)
}

// ResolveConfig is meter.Resolver: ResolveConfig against the recorded hub's
// Info. When the recording holds its ACK of START, the ports are those it
// streamed: all of them by default, and a port it did not stream is refused
// (its channels would be declared and never hold a sample).
func (rp *Replay) ResolveConfig(cfg meter.StreamConfig) (meter.StreamConfig, error) {
	recorded := rp.recordedPorts()
	if len(recorded) > 0 {
		if len(cfg.Ports) == 0 {
			cfg.Ports = recorded
		}
		for _, p := range cfg.Ports {
			if !slices.Contains(recorded, p) {
				return cfg, fmt.Errorf("%w: port %d is not in the recorded stream (it holds ports %v)", meter.ErrUnsupported, p, recorded)
			}
		}
	}
	return ResolveConfig(rp.info, cfg)
}

// recordedPorts lists the ports with a channel in the recorded ACK of
// START's mask; nil without one.
func (rp *Replay) recordedPorts() []int {
	if rp.mask == 0 || len(rp.id.Rails) == 0 {
		return nil
	}
	var ps []int
	for c := range 16 {
		if rp.mask&(1<<c) == 0 {
			continue
		}
		if p := c/len(rp.id.Rails) + 1; !slices.Contains(ps, p) && p <= int(rp.id.Ports) {
			ps = append(ps, p)
		}
	}
	return ps
}

var (
	_ meter.Resolver    = (*Hub)(nil)
	_ meter.Resolver    = (*Replay)(nil)
	_ meter.Reconnector = (*Hub)(nil)
)
