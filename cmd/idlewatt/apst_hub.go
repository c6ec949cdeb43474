package main

import (
	"context"
	"fmt"
	"sort"
	"sync"
	"time"

	"github.com/idlewatt/idlewatt/analysis/states"
	"github.com/idlewatt/idlewatt/hostclock"
	"github.com/idlewatt/idlewatt/meter"
	"github.com/idlewatt/idlewatt/meter/hub"
	"github.com/idlewatt/idlewatt/meter/hub/hubemu"
	nvmesim "github.com/idlewatt/idlewatt/states/nvme/sim"
)

// `apst verify --hub` and `apst idle --hub`: the simulated NVMe drive on
// port 1's 3.3 V rail of an emulated protocol-3 hub, its power read by the
// hub driver over the pty (framing, LINK, packed 20-bit samples,
// calibration, quantisation), in real time. The host's reads go to the
// simulated drive directly: each completes when the model says (its
// wait plus the service time, on the emulator's clock), so I/O latencies
// are the drive's, without a kernel's or a scheduler's share.

// apstHubRate is the sample rate: the hub's fastest.
const apstHubRate = 10000

type apstHub struct {
	emu    *hubemu.Emulator
	h      *hub.Hub
	nv     *nvmesim.HubDrive
	chans  map[int]bool // channel indices of port 1
	cancel context.CancelFunc
	done   chan error

	mu   sync.Mutex
	w    map[uint64]float64 // per sample index: port 1's power so far
	seen map[uint64]int     // rails summed into w
	t0   time.Duration      // emulator time of sample 0
}

func (a *apstHub) Samples(b *meter.Block) error {
	if !a.chans[b.Channel] {
		return nil
	}
	a.mu.Lock()
	defer a.mu.Unlock()
	for k := range b.I {
		i := b.Start + uint64(k)
		a.w[i] += float64(b.V[k]) * float64(b.I[k])
		a.seen[i]++
	}
	return nil
}
func (a *apstHub) Gap(meter.Gap) error       { return nil }
func (a *apstHub) Mark(meter.MarkEcho) error { return nil }
func (a *apstHub) Event(meter.Event) error   { return nil }

// openAPSTHub starts the emulator with the setup's drive, opens it and
// starts streaming; the drive has been idle since the emulator started.
func openAPSTHub(ctx context.Context, s *apstSetup) (*apstHub, error) {
	nv := nvmesim.NewHubDriveWith(s.prof, nvmesim.HubOptions{Plan: s.plan, L1: s.l1, L12: s.l12,
		EntryScale: s.entry, ExitScale: s.exit, Noise: 20e-6, Seed: s.meter.Seed})
	emu, err := hubemu.New(hubemu.Options{Ports: 1, Rail3V3: true, Drives: []meter.SimDrive{nv}, Seed: int64(s.meter.Seed)})
	if err != nil {
		return nil, fmt.Errorf("apst --hub: emulator: %w", err)
	}
	h, err := hub.Open(emu.Path(), hub.Options{})
	if err != nil {
		emu.Close()
		return nil, fmt.Errorf("apst --hub: %w", err)
	}
	a := &apstHub{emu: emu, h: h, nv: nv, chans: map[int]bool{}, w: map[uint64]float64{}, seen: map[uint64]int{}, done: make(chan error, 1)}
	for i, c := range h.Info().Channels {
		if c.Port == 1 {
			a.chans[i] = true
		}
	}
	sctx, cancel := context.WithCancel(ctx)
	a.cancel = cancel
	go func() { a.done <- h.Stream(sctx, meter.StreamConfig{Rate: apstHubRate}, a) }()
	deadline := time.Now().Add(5 * time.Second)
	for {
		if t, ok := emu.SampleTime(0); ok {
			a.t0 = t
			break
		}
		if time.Now().After(deadline) {
			a.close()
			return nil, fmt.Errorf("apst --hub: the emulated hub did not start streaming")
		}
		time.Sleep(time.Millisecond)
	}
	return a, nil
}

func (a *apstHub) close() error {
	a.cancel()
	err := <-a.done // nil after a cancel
	a.h.Close()
	a.emu.Close()
	return err
}

// now is the emulator's clock.
func (a *apstHub) now() time.Duration { return a.emu.EmuTime(hostclock.Now()) }

// sleepUntil waits until the emulator's clock reaches t.
func (a *apstHub) sleepUntil(ctx context.Context, t time.Duration) error {
	for {
		d := t - a.now()
		if d <= 0 {
			return nil
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(d):
		}
	}
}

// read issues a read at emulator time at (not before the drive's last
// event) and waits until it completes: its wait plus service. The
// completion is told to the drive at once, for its time: the emulator
// renders behind the host, and a completion told late would leave the
// samples drawn meanwhile busy (HubDrive keeps the state in force at each
// time, so an event ahead of the samples is drawn where it belongs).
func (a *apstHub) read(ctx context.Context, at, service time.Duration) (issue, complete time.Duration, err error) {
	issue = at
	complete = issue + a.nv.IO(issue) + service
	if err := a.nv.IODone(complete); err != nil {
		return issue, complete, err
	}
	return issue, complete, a.sleepUntil(ctx, complete)
}

// samples are the complete samples (every rail of port 1) so far, on the
// emulator's clock.
func (a *apstHub) samples() []states.Sample {
	a.mu.Lock()
	defer a.mu.Unlock()
	var idx []uint64
	for i, n := range a.seen {
		if n == len(a.chans) {
			idx = append(idx, i)
		}
	}
	sort.Slice(idx, func(x, y int) bool { return idx[x] < idx[y] })
	out := make([]states.Sample, len(idx))
	for k, i := range idx {
		out[k] = states.Sample{T: int64(a.t0 + time.Duration(i/apstHubRate*1e9+i%apstHubRate*1e9/apstHubRate)), W: a.w[i]}
	}
	return out
}

// apstHubCycles runs the verify cycles on the hub: a read, idle for hold,
// a probe read, a warm read at the probe's completion.
func apstHubCycles(ctx context.Context, a *apstHub, n int, hold, service time.Duration) ([]nvmesim.APSTCycle, error) {
	_, idle, err := a.read(ctx, a.now(), service)
	if err != nil {
		return nil, err
	}
	var out []nvmesim.APSTCycle
	for i := range n {
		c := nvmesim.APSTCycle{Cycle: i + 1, Idle: idle}
		if err := a.sleepUntil(ctx, idle+hold); err != nil {
			return out, err
		}
		if c.ProbeIssue, c.ProbeComplete, err = a.read(ctx, max(idle+hold, a.now()), service); err != nil {
			return out, err
		}
		if c.WarmIssue, c.WarmComplete, err = a.read(ctx, c.ProbeComplete, service); err != nil {
			return out, err
		}
		idle = c.WarmComplete
		out = append(out, c)
	}
	// Let the samples up to the last read arrive.
	if err := a.sleepUntil(ctx, idle+50*time.Millisecond); err != nil {
		return out, err
	}
	return out, nil
}

// apstIdleHub measures one combination's idle power on the hub.
func apstIdleHub(ctx context.Context, s *apstSetup, settle, measure time.Duration) (apstIdleRow, error) {
	a, err := openAPSTHub(ctx, s)
	if err != nil {
		return apstIdleRow{}, err
	}
	from := a.now() + settle
	to := from + measure
	err = a.sleepUntil(ctx, to+50*time.Millisecond)
	all := a.samples()
	if cerr := a.close(); err == nil {
		err = cerr
	}
	if err != nil {
		return apstIdleRow{}, err
	}
	var w []float64
	first, last := int64(-1), int64(0)
	for _, x := range all {
		if x.T >= int64(from) && x.T < int64(to) {
			w = append(w, x.W)
			if first < 0 {
				first = x.T
			}
			last = x.T
		}
	}
	if len(w) < 16 {
		return apstIdleRow{}, failErr("apst idle --hub: %d samples in the window", len(w))
	}
	m := states.MeanBatches(w, apstHubRate/100)
	// The model's mean over the samples' span (each sample is the draw at
	// its time, so the span is first … last + one period).
	truth := float64(a.nv.Drive().MeanIdlePower(time.Duration(first), time.Duration(last)+time.Second/apstHubRate))
	row := apstIdleRow{Profile: s.prof.Name, Tolerance: s.tol.Raw, ASPM: s.aspm, Plan: s.path(), MeanW: m.Mean, U95W: 1.96 * m.U,
		TruthW: truth, ErrorW: m.Mean - truth, Samples: m.N}
	return row, nil
}
