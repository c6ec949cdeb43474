package sim

import (
	"io"
	"math/rand/v2"
	"sort"
	"sync"
	"time"

	"github.com/idlewatt/idlewatt/meter"
	"github.com/idlewatt/idlewatt/states/nvme"
	"github.com/idlewatt/idlewatt/units"
)

// HubDrive puts a simulated NVMe drive behind an emulated meter's port
// with a 3.3 V rail (an M.2 interposer): a meter.SimDrive3V3 whose 3.3 V
// current is the model's mean power over each sample's interval ÷ 3.3 V
// plus Gaussian sensor noise, and
// whose 5 V and 12 V rails carry nothing. Safe for concurrent use: the
// emulator renders from one goroutine while the host reports I/O and
// settings from others. Times are the emulator's clock.
//
// The emulator renders behind the host (a tick, more on a loaded
// machine), so a sample is often drawn after events later than its time:
// HubDrive keeps the model as it was between events (the last second of
// them) and draws each sample from the state in force at its time.
type HubDrive struct {
	mu    sync.Mutex
	p     Profile
	o     HubOptions
	d     *Drive
	rng   *rand.Rand
	on    bool
	l1    bool
	l12   bool
	table []nvme.APSTEntry
	// hist[i] is the drive as it was before the event at hist[i].to (in
	// force from the previous event on); last is the latest event.
	hist []past
	last time.Duration
	// tw, if set, receives the true draw up to written (RecordTruth).
	tw      *truthWriter
	written time.Duration
	// rendered is the end of the last block Render3V3 drew.
	rendered time.Duration
}

type past struct {
	to time.Duration
	d  Drive
	on bool
}

// event keeps the state in force until at, before an event at at changes
// it, and returns the time the event takes effect: at, or the end of what
// the emulator already rendered if that is later. An event the host
// reports after the emulator drew past its stamp (a completion told late,
// its thread preempted) cannot change what was drawn: the drive learns of
// it late, as a real drive would, and its truth says so.
//
// Events take effect in order: one stamped before the latest (two threads
// racing to report) takes effect with it, so the history stays sorted and
// the model never runs backwards.
func (h *HubDrive) event(at time.Duration) time.Duration {
	at = max(at, h.rendered, h.last)
	h.hist = append(h.hist, past{to: at, d: *h.d, on: h.on})
	h.last = max(h.last, at)
	h.writeTruth(at)
	return at
}

// writeTruth writes the true draw from written up to at, as the drive
// stands before the event at at. An event stamped before written (a
// completion reported late by another thread) takes effect from written.
func (h *HubDrive) writeTruth(at time.Duration) {
	if h.tw == nil || at <= h.written {
		return
	}
	if !h.on {
		h.tw.write(Segment{Start: h.written, End: at, Link: L0, Off: true})
	} else {
		for _, s := range h.d.segments(h.written, at) {
			h.tw.write(s)
		}
	}
	h.written = at
}

// RecordTruth makes the drive write its true (noise-free) draw to w as
// JSON lines (ReadTruth reads them; docs/states.md), from emulator time
// from on: a header naming the profile, seed and port, then one segment
// per power-state, link or I/O change. Call it before the first event;
// Finish writes the open segment and flushes.
func (h *HubDrive) RecordTruth(w io.Writer, from time.Duration, port int) {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.tw = newTruthWriter(w, TruthHeader{Profile: h.p.Name, Seed: h.o.Seed, Port: port})
	h.written = from
}

// Finish writes the truth up to at and flushes it, returning the first
// write error. The drive keeps running; a later Finish writes what came
// after.
func (h *HubDrive) Finish(at time.Duration) error {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.tw == nil {
		return nil
	}
	h.writeTruth(at)
	return h.tw.flush()
}

// drawn is the true draw over [a, b) as the meter sees it: the segments
// of each state in force over it (the history's, then the current one), an
// unpowered stretch as a segment with Off set.
func (h *HubDrive) drawn(a, b time.Duration) []Segment {
	var out []Segment
	i := sort.Search(len(h.hist), func(i int) bool { return h.hist[i].to > a })
	for cur := a; cur < b; i++ {
		d, on, end := h.d, h.on, b
		if i < len(h.hist) {
			d, on, end = &h.hist[i].d, h.hist[i].on, min(b, h.hist[i].to)
		}
		switch {
		case end <= cur: // events at one time
			continue
		case !on:
			out = append(out, Segment{Start: cur, End: end, Off: true})
		default:
			out = append(out, d.segments(cur, end)...)
		}
		cur = end
	}
	return out
}

// HubOptions set up a HubDrive: the APST feature the host programmed
// (Enabled, Entries, typically nvme.PlanAPST's), the link states the
// ASPM policy allows, the actual/declared latency scales
// (Drive.SetLatencyScale), the 3.3 V sensor's noise σ and its seed.
type HubOptions struct {
	Plan                  nvme.KernelPlan
	L1, L12               bool
	EntryScale, ExitScale float64
	Noise                 units.Amps
	Seed                  uint64
}

// NewHubDrive returns a powered drive programmed as the kernel would for
// the latency tolerance (µs; nvme.Unlimited for auto), with every link
// state on (powersupersave). noise is the 3.3 V sensor's σ.
func NewHubDrive(p Profile, toleranceUs uint64, noise units.Amps, seed uint64) *HubDrive {
	return NewHubDriveWith(p, HubOptions{Plan: nvme.PlanAPST(p.Identify, toleranceUs, 0, nvme.ModuleParams{}),
		L1: true, L12: true, Noise: noise, Seed: seed})
}

// NewHubDriveWith returns a powered drive set up as o says.
func NewHubDriveWith(p Profile, o HubOptions) *HubDrive {
	h := &HubDrive{p: p, o: o, rng: rand.New(rand.NewPCG(o.Seed, 0x33)), on: true, l1: o.L1 || o.L12, l12: o.L12}
	h.table = make([]nvme.APSTEntry, 32)
	copy(h.table, o.Plan.Entries)
	h.reset(0)
	return h
}

func (h *HubDrive) reset(at time.Duration) {
	h.d = New(h.p)
	h.d.SetAPST(at, h.o.Plan.Enabled, h.table)
	h.d.SetASPM(at, h.l1, h.l12)
	h.d.SetLatencyScale(h.o.EntryScale, h.o.ExitScale)
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
	n := 0 // forget the states more than a second before this block
	for n < len(h.hist) && h.hist[n].to < t0-time.Second {
		n++
	}
	h.hist = h.hist[n:]
	period := float64(time.Second) / float64(rate)
	end := t0 + time.Duration(float64(len(i33))*period)
	h.rendered = max(h.rendered, end)
	// An averaging ADC, as states/drivesim renders: each sample is the
	// exact mean draw over its interval [t, t + 1/rate). (A mean of points
	// in it was not: at 5 W active, each I/O edge was up to 30 µJ off, and
	// a workload's thousands of edges moved a phase's average by 2.7 × its
	// uncertainty.)
	segs, j := h.drawn(t0, end), 0
	for k := range i33 {
		v33[k] = 3.3
		t := t0 + time.Duration(float64(k)*period)
		te := t0 + time.Duration(float64(k+1)*period)
		for j < len(segs) && segs[j].End <= t {
			j++
		}
		var e float64
		off := false
		for m := j; m < len(segs) && segs[m].Start < te; m++ {
			off = off || segs[m].Off
			e += float64(segs[m].Power) * float64(min(te, segs[m].End)-max(t, segs[m].Start))
		}
		if off {
			i33[k] = 0 // powered off
			continue
		}
		i33[k] = units.Amps(e/float64(te-t)/3.3 + float64(h.o.Noise)*h.rng.NormFloat64())
	}
}

// RenderLag implements meter.LateEvents: the workload reports I/O to the
// drive from its own threads, so the emulator renders HubRenderLag behind
// its clock and a report that late still starts the idle timers at the
// completion's time (not at the end of what was drawn: a preempted
// thread made the APST entry look 6 ms late on a loaded machine).
func (h *HubDrive) RenderLag() time.Duration { return HubRenderLag }

// HubRenderLag is how far behind its clock an emulator renders a HubDrive.
const HubRenderLag = 50 * time.Millisecond

// SetDevSlp implements meter.SimDrive: an M.2 NVMe drive has no DEVSLP pin.
func (h *HubDrive) SetDevSlp(time.Duration, bool) {}

// SetPower implements meter.SimDrive: power-up starts the drive in PS0
// with the same APST table and link states.
func (h *HubDrive) SetPower(at time.Duration, on bool) {
	h.mu.Lock()
	defer h.mu.Unlock()
	at = h.event(at)
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
	at = h.event(at)
	return h.d.IO(at)
}

// IODone reports its completion.
func (h *HubDrive) IODone(at time.Duration) error {
	h.mu.Lock()
	defer h.mu.Unlock()
	at = h.event(at)
	return h.d.IODone(at)
}

// SetASPM sets the link states the host allows, as Drive.SetASPM.
func (h *HubDrive) SetASPM(at time.Duration, l1, l12 bool) {
	h.mu.Lock()
	defer h.mu.Unlock()
	at = h.event(at)
	h.l1, h.l12 = l1 || l12, l12
	h.d.SetASPM(at, l1, l12)
}

// SetAPST programs the APST feature anew (a Set Features 0Ch, as the
// kernel sends when the latency tolerance changes): the drive is back in
// PS0 at at, its idle timers restarting from there; a power cycle keeps
// the new plan.
func (h *HubDrive) SetAPST(at time.Duration, plan nvme.KernelPlan) {
	h.mu.Lock()
	defer h.mu.Unlock()
	at = h.event(at)
	h.o.Plan = plan
	h.table = make([]nvme.APSTEntry, 32)
	copy(h.table, plan.Entries)
	h.d.SetAPST(at, plan.Enabled, h.table)
}

// Profile returns the drive's profile.
func (h *HubDrive) Profile() Profile { return h.p }

var (
	_ meter.SimDrive3V3 = (*HubDrive)(nil)
	_ meter.LateEvents  = (*HubDrive)(nil)
)
