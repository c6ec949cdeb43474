package registry

import (
	"github.com/idlewatt/idlewatt/meter"
	"github.com/idlewatt/idlewatt/meter/hub"
)

// hub: the inline SATA power hub on a serial port or pty; a recorded
// device→host stream (hubemu --fast output, a dump) is replayed.
func init() {
	Register(Driver{Doc: hubDoc,
		Kind:   "hub",
		Open:   func(path string, _ Settings) (meter.Meter, error) { return hub.Open(path, hub.Options{}) },
		Replay: func(path string, _ Settings) (meter.Meter, error) { return hub.OpenReplay(path) },
	})
}

var hubDoc = Doc{
	What:    "inline SATA power hub: 5 V and 12 V per port, DEVSLP pins, port power",
	Connect: "--port /dev/ttyUSB0 (or a pty from `idlewatt hub emulate`, or a recorded stream file)", MaxRateHz: 0,
	Options: []string{"--ports 1,2 (meter.ports)", "--rate (meter.rate_hz): one the hub lists"},
	Record:  "idlewatt record --meter hub --port /dev/ttyUSB0 --duration 10m --out hub.iwcap",
}
