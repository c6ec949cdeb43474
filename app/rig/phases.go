package rig

import (
	"cmp"
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"sync"
	"time"

	"github.com/idlewatt/idlewatt/analysis"
	"github.com/idlewatt/idlewatt/analysis/judge"
	"github.com/idlewatt/idlewatt/capture"
	"github.com/idlewatt/idlewatt/hostclock"
	"github.com/idlewatt/idlewatt/meter"
	"github.com/idlewatt/idlewatt/states/alpm"
	"github.com/idlewatt/idlewatt/states/devslp"
	"github.com/idlewatt/idlewatt/units"
	"github.com/idlewatt/idlewatt/workload/gen"
	"github.com/idlewatt/idlewatt/workload/replay"
	"github.com/idlewatt/idlewatt/workload/trace"
)

// Idle records an idle phase of length d.
func (r *Rig) Idle(ctx context.Context, name string, d time.Duration) error {
	if d <= 0 {
		return nil
	}
	r.Phase(name)
	return r.wait(ctx, d)
}

// ActiveIdlePhase idles d under max_performance (phase
// idle:max_performance) — longer, up to active_idle_max, while a drive's
// active idle is not yet resolved (extendActiveIdle) — and then puts the
// run's policy back, when the run has a policy that lets the drive leave
// active idle (cfg.ActiveIdle).
func (r *Rig) ActiveIdlePhase(ctx context.Context, d time.Duration) error {
	p := r.cfg.Policy
	if d <= 0 || p == "" || p == string(alpm.MaxPerformance) {
		return nil
	}
	if err := r.SetPolicy(ctx, string(alpm.MaxPerformance)); err != nil {
		return err
	}
	if r.live != nil && r.cfg.ActiveIdleMax > d {
		for _, dr := range r.drives {
			r.live.watch(dr.Config.Port)
			defer r.live.unwatch(dr.Config.Port)
		}
	}
	if err := r.Idle(ctx, IdlePhase(string(alpm.MaxPerformance)), d); err != nil {
		return err
	}
	if err := r.extendActiveIdle(ctx, d); err != nil {
		return err
	}
	return r.SetPolicy(ctx, p)
}

// wait sleeps d, returning early on cancellation or a recording failure.
func (r *Rig) wait(ctx context.Context, d time.Duration) error {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-r.rec.Done():
		return r.Err()
	case <-t.C:
		return r.Err()
	}
}

// WorkloadName is the phase name of the configured workload.
func (r *Rig) WorkloadName() string {
	w := r.cfg.Workload
	if strings.EqualFold(w.Trace, "pcmark7") {
		return "workload:pcmark7:" + w.App
	}
	return "workload:" + w.Trace
}

// openTrace opens the configured workload for one drive.
func (r *Rig) openTrace(d *Drive, size int64) (trace.Reader, func(), error) {
	w := r.cfg.Workload
	if strings.EqualFold(w.Trace, "pcmark7") {
		src, err := gen.PCMark7(w.App, w.Seed+int64(d.Config.Port), size, w.Scale)
		if err != nil {
			return nil, nil, fmt.Errorf("workload.app: %w", err)
		}
		return src, func() {}, nil
	}
	f, err := trace.Open(w.Trace, "")
	if err != nil {
		return nil, nil, fmt.Errorf("workload.trace: %w", err)
	}
	return f, func() { f.Close() }, nil
}

// Workload plays the configured workload on every drive at once and
// returns each drive's replay result by port. onProgress, if set, gets each
// drive's progress about once a second.
func (r *Rig) Workload(ctx context.Context, onProgress func(port int, p replay.Progress)) (map[int]replay.Result, error) {
	if strings.EqualFold(r.cfg.Workload.Trace, "none") {
		return nil, nil
	}
	timing, err := replay.ParseTiming(r.cfg.Workload.Timing)
	if err != nil {
		return nil, fmt.Errorf("workload.timing: %w", err)
	}
	r.Phase(r.WorkloadName())
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	go func() { // a recording failure ends the workload too
		select {
		case <-r.rec.Done():
			cancel()
		case <-ctx.Done():
		}
	}()
	results := map[int]replay.Result{}
	var mu sync.Mutex
	var errs []error
	var wg sync.WaitGroup
	for _, d := range r.drives {
		tgt, err := d.ReplayTarget()
		if err != nil {
			return nil, err
		}
		src, closeSrc, err := r.openTrace(d, tgt.Size())
		if err != nil {
			return nil, err
		}
		port := d.Config.Port
		wg.Go(func() {
			defer closeSrc()
			cfg := replay.Config{
				QD: r.cfg.Workload.QD, Timing: timing, Speed: r.cfg.Workload.Speed, Engine: r.cfg.Workload.Engine,
				Wrap: true, Port: port, Seed: r.cfg.Workload.Seed + int64(port),
				Warn: func(s string) { r.logf("port %d: %s", port, s) },
			}
			if onProgress != nil {
				cfg.Progress = func(p replay.Progress) { onProgress(port, p) }
			}
			res, err := replay.Run(ctx, cfg, src, tgt, func(ev capture.IOEvent) { _ = r.rec.IO(ev) })
			mu.Lock()
			defer mu.Unlock()
			results[port] = res
			if err != nil {
				errs = append(errs, fmt.Errorf("port %d: %w", port, err))
			}
		})
	}
	wg.Wait()
	if err := r.Err(); err != nil {
		return results, err
	}
	if len(errs) > 0 {
		return results, fmt.Errorf("workload: %v", errs)
	}
	return results, nil
}

// DevSlpOptions resolves the DevSlp phase options for a drive: config,
// else the MDAT/DETO the drive reports (a simulated drive's log page, a
// known profile's), else the ATA defaults.
func (r *Rig) DevSlpOptions(d *Drive) devslp.Options {
	return r.cfg.DevSlp.options(cmp.Or(d.sim, d.Profile))
}

// DevSlp runs the DevSlp cycles on every drive that may support DevSlp,
// all at once (each drive has its own pin). Before the cycles it records in
// the capture, per drive, the criteria, what the drive and host claim and
// any host-side problem (analysis's DevSlp notes), so the verdict can be
// judged again from the capture alone. A meter without DEVSLP pins or a
// policy that could not be applied is a host cause, not an error.
func (r *Rig) DevSlp(ctx context.Context) error {
	if r.cfg.DevSlp.Cycles <= 0 {
		return nil
	}
	pin, havePin := r.meter.(meter.DevSlpPin)
	if p := r.cfg.DevSlp.Policy; p != "" {
		if err := r.SetPolicy(ctx, p); err != nil {
			return err
		}
	}
	r.Phase("devslp")
	var run []*Drive
	for _, d := range r.drives {
		opt := r.DevSlpOptions(d)
		o := opt
		o.Cycles = max(o.Cycles, 1)
		cr := criteriaOf(o)
		b, _ := json.Marshal(cr)
		port := d.Config.Port
		note := func(v string) {
			r.state(capture.StateEvent{Host: hostclock.Now(), Port: port, Kind: capture.StateNote, Value: v})
		}
		note(analysis.NoteDevSlpCriteria + string(b))
		support := r.devslpSupport(d)
		note(analysis.NoteDevSlpSupport + support)
		r.mu.Lock()
		host := append([]string(nil), r.policyProblems...)
		r.mu.Unlock()
		if !havePin {
			host = append(host, "the meter cannot drive DEVSLP pins")
		}
		for _, h := range host {
			note(analysis.NoteDevSlpHost + h)
		}
		if havePin && !strings.HasPrefix(support, "no") {
			run = append(run, d)
		}
	}
	var mu sync.Mutex
	var errs []error
	var wg sync.WaitGroup
	for _, d := range run {
		var rg devslp.Rig = &drivePin{r: r, d: d, pin: pin}
		opt := r.DevSlpOptions(d)
		watched := r.live != nil && opt.MaxCycles > max(opt.Cycles, 1)
		if watched {
			r.live.watch(d.Config.Port)
			rg = &livePin{drivePin: rg.(*drivePin), l: r.live, opt: opt, jo: judge.JudgeOptions{Criteria: criteriaOf(opt)}}
		}
		wg.Go(func() {
			err := r.cycleDrive(ctx, d.Config.Port, rg, opt, watched)
			if err != nil {
				mu.Lock()
				errs = append(errs, fmt.Errorf("port %d: %w", d.Config.Port, err))
				mu.Unlock()
			}
		})
	}
	wg.Wait()
	if len(errs) > 0 {
		return fmt.Errorf("devslp: %v", errs)
	}
	return r.Err()
}

// cycleDrive runs one drive's DevSlp cycles on rg; a watched port
// (liveDevSlp) is unwatched as soon as its cycles end, not when every
// drive's have: nothing reads its samples any more, and buffering them
// while another drive cycles on costs the meter's reader for nothing.
func (r *Rig) cycleDrive(ctx context.Context, port int, rg devslp.Rig, opt devslp.Options, watched bool) error {
	if watched {
		defer r.live.unwatch(port)
	}
	_, err := devslp.Run(ctx, rg, opt)
	return err
}

// criteriaOf are the verdict's limits for resolved options.
func criteriaOf(o devslp.Options) judge.Criteria {
	c := judge.DefaultCriteria()
	ms := func(d time.Duration) units.Milliseconds { return units.Milliseconds(float64(d) / 1e6) }
	if o.Limit > 0 {
		c.LimitW = o.Limit
	}
	if o.EntryBound > 0 {
		c.EntryBoundMs = ms(o.EntryBound)
	}
	if o.MDAT > 0 {
		c.MDATMs = ms(o.MDAT)
	}
	if o.DETO > 0 {
		c.DETOMs = ms(o.DETO)
	}
	return c
}

// devslpSupport says whether the drive and its host claim DevSlp: "no …"
// when the profile, IDENTIFY word 78 or the HBA's CAP2.SDS says not, "yes"
// when the profile or IDENTIFY says so, else "unknown".
func (r *Rig) devslpSupport(d *Drive) string {
	if d.Config.NVMe != "" {
		return "no: an NVMe drive has no DEVSLP pin (its idle states are APST's: idlewatt apst verify)"
	}
	if p := d.Profile; p != nil && !p.DevSlpSupported {
		return fmt.Sprintf("no: profile %s says devslp_supported false", p.Name)
	}
	yes := d.Profile != nil
	if d.Config.Host != "" && r.cfg.SysfsRoot != "" {
		if sys, err := alpm.Open(r.cfg.SysfsRoot).Discover(); err == nil {
			for _, h := range sys.Hosts {
				if h.Name != d.Config.Host {
					continue
				}
				if h.Cap2 != nil && !h.Cap2.SDS {
					return "no: " + d.Config.Host + " CAP2.SDS clear, the HBA does not support DevSlp"
				}
				for _, dev := range h.Devices {
					if id := dev.Identify; id != nil && id.FeaturesValid {
						if !id.DevSlpSupported {
							return "no: IDENTIFY word 78 bit 8 clear, the drive does not support DevSlp"
						}
						yes = true
					}
				}
			}
		}
	}
	if yes {
		return "yes"
	}
	return "unknown"
}

// drivePin is devslp.Rig for one drive: the hub's pin for that port, a 4 KiB
// read as the probe, and phases recorded per port.
type drivePin struct {
	r   *Rig
	d   *Drive
	pin meter.DevSlpPin
	buf []byte
}

func (p *drivePin) SetDevSlp(ctx context.Context, asserted bool) (hostclock.Time, error) {
	t := hostclock.Now()
	v := "0"
	if asserted {
		v = "1"
	}
	p.r.state(capture.StateEvent{Host: t, Port: p.d.Config.Port, Kind: capture.StateDevSlpPin, Value: v})
	err := p.pin.SetDevSlp(ctx, p.d.Config.Port, asserted)
	if err != nil && !asserted {
		// Never leave a drive asleep because of a transient error: try once more.
		err = p.pin.SetDevSlp(context.Background(), p.d.Config.Port, false)
	}
	return t, err
}

func (p *drivePin) Probe(ctx context.Context) (hostclock.Time, hostclock.Time, error) {
	if p.buf == nil {
		p.buf = alignedBuf(4096, 4096)
	}
	off := int64(0)
	var issue, done hostclock.Time
	var err error
	stall := watchStall()
	if p.d.target == nil {
		return 0, 0, fmt.Errorf("no target to read from (drives[].target)")
	}
	issue = hostclock.Now()
	_, err = p.d.target.ReadAt(p.buf, off)
	done = hostclock.Now()
	late := stall()
	_ = p.r.rec.IO(capture.IOEvent{Port: p.d.Config.Port, Op: capture.OpRead, Offset: off, Size: int32(len(p.buf)),
		Issue: issue, Complete: done, Err: err != nil})
	if late >= time.Millisecond {
		// The host itself stalled while the read was out: the read's
		// completion time carries that stall, which is no drive latency.
		p.r.state(capture.StateEvent{Host: issue, Port: p.d.Config.Port, Kind: capture.StateNote,
			Value: fmt.Sprintf("%s%.3f", analysis.NoteDevSlpHostStall, float64(late)/1e6)})
	}
	return issue, done, err
}

// watchStall runs a canary that sleeps 1 ms at a time until the returned
// function is called, which returns the canary's worst lateness: how long
// this host failed to run a ready thread meanwhile (a loaded machine).
func watchStall() func() time.Duration {
	done := make(chan struct{})
	var worst time.Duration
	var wg sync.WaitGroup
	wg.Go(func() {
		for {
			t := time.Now()
			time.Sleep(time.Millisecond)
			if d := time.Since(t) - time.Millisecond; d > worst {
				worst = d
			}
			select {
			case <-done:
				return
			default:
			}
		}
	})
	return func() time.Duration {
		close(done)
		wg.Wait()
		return worst
	}
}

func (p *drivePin) Phase(name string) {
	p.r.state(capture.StateEvent{Host: hostclock.Now(), Port: p.d.Config.Port, Kind: capture.StatePhase, Value: name})
}

// alignedBuf returns n bytes aligned to align (for O_DIRECT).
func alignedBuf(n, align int) []byte {
	b := make([]byte, n+align)
	off := 0
	if r := int(uintptrOf(b) % uintptr(align)); r != 0 {
		off = align - r
	}
	return b[off : off+n]
}
