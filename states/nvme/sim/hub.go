package sim

import (
	"math/rand/v2"
	"sync"
	"time"

	"github.com/idlewatt/idlewatt/meter"
	"github.com/idlewatt/idlewatt/states/nvme"
	"github.com/idlewatt/idlewatt/units"
)

// HubDrive puts a simulated NVMe drive behind an emulated meter's port
// with a 3.3 V rail (an M.2 interposer): a meter.SimDrive3V3 whose 3.3 V
// current is the model's power ÷ 3.3 V plus Gaussian sensor noise, and
// whose 5 V and 12 V rails carry nothing. Safe for concurrent use: the
// emulator renders from one goroutine while the host reports I/O and
// settings from others. Times are the emulator's clock.
//
// A block the emulator rendered before an I/O it precedes in time is not
// redrawn: the emulator renders at most one block (10 ms) ahead, so an
// I/O's wake shows up to a block late in the samples, never lost from the
// model's truth.
type HubDrive struct {
	mu    sync.Mutex
	p     Profile
	d     *Drive
	noise units.Amps
	rng   *rand.Rand
	on    bool
	apst  struct {
		enabled bool
		table   []nvme.APSTEntry
	}
	l1, l12 bool
}

// NewHubDrive returns a powered drive programmed as the kernel would for
// the latency tolerance (µs; nvme.Unlimited for auto), with every link
// state on (powersupersave). noise is the 3.3 V sensor's σ.
func NewHubDrive(p Profile, toleranceUs uint64, noise units.Amps, seed uint64) *HubDrive {
	h := &HubDrive{p: p, noise: noise, rng: rand.New(rand.NewPCG(seed, 0x33)), on: true, l1: true, l12: true}
	plan := nvme.PlanAPST(p.Identify, toleranceUs, 0, nvme.ModuleParams{})
	h.apst.enabled = plan.Enabled
	h.apst.table = make([]nvme.APSTEntry, 32)
	copy(h.apst.table, plan.Entries)
	h.reset(0)
	return h
}

func (h *HubDrive) reset(at time.Duration) {
	h.d = New(h.p)
	h.d.SetAPST(at, h.apst.enabled, h.apst.table)
	h.d.SetASPM(at, h.l1, h.l12)
}

// Drive returns the model (for its truth); hold no reference across
// calls that change it.
func (h *HubDrive) Drive() *Drive {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.d
}

// Render implements meter.SimDrive: an M.2 drive draws nothing from 5 V
// or 12 V.
func (h *HubDrive) Render(t0 time.Duration, rate units.Hertz, v5 []units.Volts, i5 []units.Amps, v12 []units.Volts, i12 []units.Amps) {
	for k := range i5 {
		v5[k], i5[k], v12[k], i12[k] = 5, 0, 12, 0
	}
}

// Render3V3 implements meter.SimDrive3V3.
func (h *HubDrive) Render3V3(t0 time.Duration, rate units.Hertz, v33 []units.Volts, i33 []units.Amps) {
	h.mu.Lock()
	defer h.mu.Unlock()
	for k := range i33 {
		v33[k] = 3.3
		if !h.on {
			i33[k] = 0
			continue
		}
		t := t0 + time.Duration(float64(k)/float64(rate)*float64(time.Second))
		i33[k] = units.Amps(float64(h.d.Power(t))/3.3 + float64(h.noise)*h.rng.NormFloat64())
	}
}

// SetDevSlp implements meter.SimDrive: an M.2 NVMe drive has no DEVSLP pin.
func (h *HubDrive) SetDevSlp(time.Duration, bool) {}

// SetPower implements meter.SimDrive: power-up starts the drive in PS0
// with the same APST table and link states.
func (h *HubDrive) SetPower(at time.Duration, on bool) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if on && !h.on {
		h.reset(at)
	}
	h.on = on
}

// IO reports an I/O issued at at and returns how long it waits for the
// drive to wake (see Drive.IO).
func (h *HubDrive) IO(at time.Duration) time.Duration {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.d.IO(at)
}

// IODone reports its completion.
func (h *HubDrive) IODone(at time.Duration) error {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.d.IODone(at)
}

// SetASPM sets the link states the host allows, as Drive.SetASPM.
func (h *HubDrive) SetASPM(at time.Duration, l1, l12 bool) {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.l1, h.l12 = l1 || l12, l12
	h.d.SetASPM(at, l1, l12)
}

var _ meter.SimDrive3V3 = (*HubDrive)(nil)
