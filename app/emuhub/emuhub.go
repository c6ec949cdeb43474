package emuhub

import (
	"github.com/idlewatt/idlewatt/meter"
	"github.com/idlewatt/idlewatt/meter/hub/hubemu"
	nvmesim "github.com/idlewatt/idlewatt/states/nvme/sim"
	"github.com/idlewatt/idlewatt/units"
)

// Empty is what an empty port draws: nothing, at 5 V and 12 V.
var Empty meter.SimDrive = meter.ConstantDrive{V5: 5, V12: 12}

// NVMeNoise is the 3.3 V current sensor's noise σ on a simulated NVMe
// drive: 20 µA (66 µW), a few 20-bit counts.
const NVMeNoise units.Amps = 20e-6

// NVMeDrive is a simulated NVMe drive for a hub port, programmed as the
// kernel would for the latency tolerance (µs) with every link state on
// (nvmesim.NewHubDrive), with NVMeNoise on its 3.3 V sensor.
func NVMeDrive(p nvmesim.Profile, toleranceUs, seed uint64) *nvmesim.HubDrive {
	return nvmesim.NewHubDrive(p, toleranceUs, NVMeNoise, seed)
}

// Options returns o for a hub whose port i+1 holds ports[i] (nil: Empty):
// Ports is len(ports), Drives the ports' drives, and Rail3V3 is set when
// o sets it or a drive loads a 3.3 V rail (meter.SimDrive3V3).
func Options(o hubemu.Options, ports []meter.SimDrive) hubemu.Options {
	o.Ports = len(ports)
	o.Drives = make([]meter.SimDrive, len(ports))
	for i, d := range ports {
		if d == nil {
			d = Empty
		}
		if _, ok := d.(meter.SimDrive3V3); ok {
			o.Rail3V3 = true
		}
		o.Drives[i] = d
	}
	return o
}

// New starts the emulated hub of Options(o, ports) on a pty.
func New(o hubemu.Options, ports []meter.SimDrive) (*hubemu.Emulator, error) {
	return hubemu.New(Options(o, ports))
}
