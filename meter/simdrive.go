package meter

import (
	"time"

	"github.com/idlewatt/idlewatt/units"
)

// SimDrive is a simulated drive behind one port of an emulated meter (the hub
// emulator, later the PPK2 emulator). Times are on the emulator's own clock:
// the duration since the emulator started (so clock drift and offset faults
// apply to the drive exactly as to the samples). Implementations must be safe
// for concurrent use: the emulator renders from one goroutine while workload
// goroutines report I/O (see states/drivesim).
type SimDrive interface {
	// Render fills the rail readings for len(i5) consecutive samples, sample k
	// taken at t0 + k/rate. Readings include the drive's sensor noise but not
	// ADC quantisation (the emulator quantises to its own resolution). A drive
	// without a 12 V load leaves i12 at 0 and v12 at the rail voltage.
	Render(t0 time.Duration, rate units.Hertz, v5 []units.Volts, i5 []units.Amps, v12 []units.Volts, i12 []units.Amps)
	// SetDevSlp reports the port's DEVSLP pin level at emulator time at.
	SetDevSlp(at time.Duration, asserted bool)
	// SetPower reports the port's supply switched on or off at emulator time at.
	SetPower(at time.Duration, on bool)
}

// ConstantDrive is the simplest SimDrive: a fixed current on each rail.
type ConstantDrive struct {
	V5, V12 units.Volts
	I5, I12 units.Amps
}

// Render implements SimDrive.
func (d ConstantDrive) Render(t0 time.Duration, rate units.Hertz, v5 []units.Volts, i5 []units.Amps, v12 []units.Volts, i12 []units.Amps) {
	for k := range i5 {
		v5[k], i5[k], v12[k], i12[k] = d.V5, d.I5, d.V12, d.I12
	}
}

// SetDevSlp implements SimDrive; a constant drive ignores the pin.
func (ConstantDrive) SetDevSlp(time.Duration, bool) {}

// SetPower implements SimDrive; a constant drive ignores power switching.
func (ConstantDrive) SetPower(time.Duration, bool) {}
