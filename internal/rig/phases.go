package rig

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"time"

	"golang.org/x/sys/unix"

	"github.com/idlewatt/idlewatt/capture"
	"github.com/idlewatt/idlewatt/internal/hostclock"
	"github.com/idlewatt/idlewatt/meter"
	"github.com/idlewatt/idlewatt/states/devslp"
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

// wait sleeps d, returning early on cancellation or a recording failure.
func (r *Rig) wait(ctx context.Context, d time.Duration) error {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-r.streamDone:
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
		case <-r.streamDone:
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
			res, err := replay.Run(ctx, cfg, src, tgt, func(ev capture.IOEvent) { _ = r.w.IO(ev) })
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
// else the drive profile's MDAT/DETO, else the ATA defaults.
func (r *Rig) DevSlpOptions(d *Drive) devslp.Options {
	c := r.cfg.DevSlp
	o := devslp.Options{
		Cycles: c.Cycles, Settle: c.Settle, Hold: c.Hold, Return: c.Return, EntryBound: c.EntryBound,
		MDAT: c.MDAT, DETO: c.DETO,
	}
	if c.LimitMW > 0 {
		o.Limit = unitsMW(c.LimitMW)
	}
	if p := d.Profile; p != nil {
		if o.MDAT == 0 && p.MdatMs > 0 {
			o.MDAT = time.Duration(p.MdatMs * float64(time.Millisecond))
		}
		if o.DETO == 0 && p.DetoMs > 0 {
			o.DETO = time.Duration(p.DetoMs * float64(time.Millisecond))
		}
	}
	return o
}

// DevSlp runs the DevSlp cycles on every drive at once (each drive has its
// own pin) and returns each drive's cycle timings by port.
func (r *Rig) DevSlp(ctx context.Context) (map[int][]devslp.Timing, error) {
	if r.cfg.DevSlp.Cycles <= 0 {
		return nil, nil
	}
	pin, ok := r.meter.(meter.DevSlpPin)
	if !ok {
		return nil, fmt.Errorf("devslp: the meter cannot drive DEVSLP pins")
	}
	if p := r.cfg.DevSlp.Policy; p != "" {
		if err := r.SetPolicy(ctx, p); err != nil {
			return nil, err
		}
	}
	r.Phase("devslp")
	out := map[int][]devslp.Timing{}
	var mu sync.Mutex
	var errs []error
	var wg sync.WaitGroup
	for _, d := range r.drives {
		rg := &drivePin{r: r, d: d, pin: pin}
		opt := r.DevSlpOptions(d)
		wg.Go(func() {
			tm, err := devslp.Run(ctx, rg, opt)
			mu.Lock()
			defer mu.Unlock()
			out[d.Config.Port] = tm
			if err != nil {
				errs = append(errs, fmt.Errorf("port %d: %w", d.Config.Port, err))
			}
		})
	}
	wg.Wait()
	if len(errs) > 0 {
		return out, fmt.Errorf("devslp: %v", errs)
	}
	return out, r.Err()
}

// drivePin is devslp.Rig for one drive: the hub's pin for that port, a 4 KiB
// read as the probe, and phases recorded per port.
type drivePin struct {
	r   *Rig
	d   *Drive
	pin meter.DevSlpPin
	buf []byte
}

func (p *drivePin) SetDevSlp(ctx context.Context, asserted bool) (int64, error) {
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

func (p *drivePin) Probe(ctx context.Context) (int64, int64, error) {
	if p.buf == nil {
		p.buf = alignedBuf(4096, 4096)
	}
	off := int64(0)
	var issue, done int64
	var err error
	switch {
	case p.d.Sim != nil:
		issue = hostclock.Now()
		_, err = p.d.Sim.ReadAt(p.buf, off)
		done = hostclock.Now()
	case p.d.Real != nil:
		issue = hostclock.Now()
		_, err = unix.Pread(p.d.Real.Fd(), p.buf, off)
		done = hostclock.Now()
	default:
		return 0, 0, fmt.Errorf("no target to read from (drives[].target)")
	}
	_ = p.r.w.IO(capture.IOEvent{Port: p.d.Config.Port, Op: capture.OpRead, Offset: off, Size: int32(len(p.buf)),
		Issue: issue, Complete: done, Err: err != nil})
	return issue, done, err
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
