package replay

import "github.com/idlewatt/idlewatt/states/drivesim"

// states/drivesim.Target plugs into Simulated as is.
var _ = func(t *drivesim.Target) Target { return Simulated(t, false) }
