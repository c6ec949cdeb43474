package registry

import (
	"github.com/idlewatt/idlewatt/meter"
	"github.com/idlewatt/idlewatt/meter/hub"
)

// hub: the inline SATA power hub on a serial port or pty; a recorded
// device→host stream (hubemu --fast output, a dump) is replayed.
func init() {
	Register(Driver{
		Kind:   "hub",
		Open:   func(path string, _ Settings) (meter.Meter, error) { return hub.Open(path, hub.Options{}) },
		Replay: func(path string, _ Settings) (meter.Meter, error) { return hub.OpenReplay(path) },
	})
}
