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

// LateEvents is a SimDrive the host also tells of events directly, not
// through the emulator's link: a simulated NVMe drive learns of each I/O
// from the workload's threads. Such a report arrives a little after its
// time (a thread preempted between the stamp and the call), and a drive
// that already rendered past that time can only apply it late. A live
// emulator therefore renders such drives RenderLag behind its clock, so
// that a report up to that late still lands at its own time; the drive
// must take events ahead of what it rendered. STOP renders up to its
// arrival first, so the lag loses no sample.
type LateEvents interface {
	SimDrive
	RenderLag() time.Duration
}

// SimDrive3V3 is a SimDrive that also loads a 3.3 V rail: an NVMe drive on
// an M.2 interposer behind a hub port with a 3.3 V rail. An emulator with
// such a rail renders it with Render3V3 after Render for the same samples;
// a SimDrive without the method draws nothing there (the rail at 3.3 V,
// 0 A). A SATA drive's 5 V and 12 V rails stay Render's.
type SimDrive3V3 interface {
	SimDrive
	Render3V3(t0 time.Duration, rate units.Hertz, v33 []units.Volts, i33 []units.Amps)
}
