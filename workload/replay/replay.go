package replay

import (
	"context"
	"errors"
	"fmt"
	"sync/atomic"
	"time"

	"github.com/idlewatt/idlewatt/hostclock"
	"github.com/idlewatt/idlewatt/workload"
	"github.com/idlewatt/idlewatt/workload/trace"
	"github.com/idlewatt/idlewatt/workload/uring"
	"golang.org/x/sys/unix"
)

// live counters, read by the progress goroutine.
type live struct {
	ops, bytes atomic.Int64
	stop       atomic.Bool
}

func (l *live) done(ev *workload.IOEvent) {
	l.ops.Add(1)
	l.bytes.Add(int64(ev.Size))
}

// run is one engine's loop.
type run struct {
	cfg     *Config
	s       *sched
	tgt     Target
	hooks   Hooks
	trim    Trimmer
	onEvent func(workload.IOEvent)
	c       collector
	live    live
	timed   bool
	noYield bool // sync engine: raw pread/pwrite (inline QD 1 only)
}

// Run replays src on tgt with cfg, calling onEvent (if not nil) for every
// completed op from the engine's goroutine, in completion order. It stops at
// the end of the trace, after cfg.Duration or cfg.MaxOps, or when ctx is
// done (then it returns the partial result and ctx.Err()). I/O errors are
// counted in the result and flagged in events; an invalid op or an op beyond
// the target (without Wrap) stops the run with an error.
func Run(ctx context.Context, cfg Config, src trace.Reader, tgt Target, onEvent func(workload.IOEvent)) (Result, error) {
	if err := cfg.defaults(); err != nil {
		return Result{}, err
	}
	if onEvent == nil {
		onEvent = func(workload.IOEvent) {}
	}
	r := &run{cfg: &cfg, s: newSched(&cfg, src, tgt), tgt: tgt, onEvent: onEvent, timed: cfg.Timing.Mode != AFAP}
	r.hooks, _ = tgt.(Hooks)
	r.trim, _ = tgt.(Trimmer)

	if ctx.Err() != nil {
		r.live.stop.Store(true)
	}
	stopWatch := make(chan struct{})
	defer close(stopWatch)
	go func() {
		select {
		case <-ctx.Done():
			r.live.stop.Store(true)
		case <-stopWatch:
		}
	}()
	if cfg.Progress != nil {
		go r.progress(stopWatch)
	}
	var u0 unix.Rusage
	unix.Getrusage(unix.RUSAGE_SELF, &u0)

	engine := cfg.Engine
	if engine == "" {
		engine = "uring"
	}
	var err error
	if engine == "uring" {
		err = r.locked(r.uring)
		if errors.Is(err, uring.ErrUnavailable) && cfg.Engine == "" {
			if cfg.Warn != nil {
				cfg.Warn(fmt.Sprintf("%v; using the sync engine", err))
			}
			engine, err = "sync", nil
		}
	}
	if engine == "sync" {
		err = r.locked(r.sync)
	}
	cfg.Engine = engine
	var u1 unix.Rusage
	unix.Getrusage(unix.RUSAGE_SELF, &u1)
	res := r.c.result(&cfg, r.s)
	res.CPUUser = time.Duration(u1.Utime.Nano() - u0.Utime.Nano())
	res.CPUSys = time.Duration(u1.Stime.Nano() - u0.Stime.Nano())
	if r.s.realign > 0 && cfg.Warn != nil {
		cfg.Warn(fmt.Sprintf("%d ops were widened to the %d-byte O_DIRECT alignment", r.s.realign, cfg.Align))
	}
	if err == nil && ctx.Err() != nil {
		err = ctx.Err()
	}
	return res, err
}

// locked runs f on a goroutine locked to a fresh OS thread. The goroutine
// exits without unlocking, so the thread (with its timer slack changed)
// dies with it instead of going back to the Go scheduler.
func (r *run) locked(f func() error) error {
	ch := make(chan error, 1)
	go func() {
		lockThread()
		setTimerSlack()
		if p := r.cfg.RealtimePriority; p > 0 {
			attr := unix.SchedAttr{Policy: unix.SCHED_FIFO, Priority: uint32(p)}
			if err := unix.SchedSetAttr(0, &attr, 0); err != nil && r.cfg.Warn != nil {
				r.cfg.Warn(fmt.Sprintf("SCHED_FIFO priority %d: %v; running at normal priority", p, err))
			} else if err == nil {
				realtime.Store(true)
				defer realtime.Store(false)
			}
		}
		ch <- f()
	}()
	return <-ch
}

func (r *run) progress(stop <-chan struct{}) {
	t := time.NewTicker(time.Second)
	defer t.Stop()
	start := time.Now()
	var lastOps, lastBytes int64
	last := start
	for {
		select {
		case <-stop:
			return
		case now := <-t.C:
			ops, b := r.live.ops.Load(), r.live.bytes.Load()
			dt := now.Sub(last).Seconds()
			r.cfg.Progress(Progress{Elapsed: now.Sub(start), Ops: ops, Bytes: b,
				IOPS: float64(ops-lastOps) / dt, MBps: float64(b-lastBytes) / 1e6 / dt})
			lastOps, lastBytes, last = ops, b, now
		}
	}
}

// event builds the IOEvent of a finished op.
func (r *run) event(op *trace.Op, issue, complete int64, failed bool) workload.IOEvent {
	return workload.IOEvent{Port: r.cfg.Port, Op: op.Type, Offset: op.Offset, Size: op.Size, Issue: hostclock.Time(issue), Complete: hostclock.Time(complete), Err: failed}
}

// finish accounts a completed op and reports it.
func (r *run) finish(op *trace.Op, issue, complete int64, failed bool) {
	ev := r.event(op, issue, complete, failed)
	if r.hooks != nil {
		if h, ok := r.hooks.(TimedHooks); ok {
			h.AfterAt(op.Type, op.Offset, int(op.Size), complete)
		} else {
			r.hooks.After(op.Type, op.Offset, int(op.Size))
		}
	}
	r.c.completed(&ev)
	r.live.done(&ev)
	r.onEvent(ev)
}

// before calls the target's Before hook and waits the delay it asks for
// (a simulated drive's service time: its wake and transfer). It returns
// the op's issue time: when the hook was called, before the wait, so the
// wait lies inside the op's I/O interval as a real drive's latency does;
// 0 without hooks (the caller stamps the issue itself). false means the
// hook refused the op: it has been accounted as failed.
func (r *run) before(op *trace.Op, due int64) (int64, bool) {
	if r.hooks == nil {
		return 0, true
	}
	now := monoNow()
	d, err := r.hooks.Before(op.Type, op.Offset, int(op.Size))
	if err != nil {
		r.c.issue(now, due, r.timed)
		ev := r.event(op, now, now, true)
		r.c.completed(&ev)
		r.live.done(&ev)
		r.onEvent(ev)
		return 0, false
	}
	if d > 0 {
		waitUntil(now+int64(d), nil) // the drive serves the op meanwhile
	}
	return now, true
}

// issuedAt is the issue time of an op: the hook's (before the drive's
// wait) if there was one, else now.
func issuedAt(hook int64) int64 {
	if hook != 0 {
		return hook
	}
	return monoNow()
}

// trimSync executes a trim synchronously (io_uring has no portable discard).
func (r *run) trimSync(op *trace.Op, due int64) {
	at, ok := r.before(op, due)
	if !ok {
		return
	}
	t0 := issuedAt(at)
	r.c.issue(t0, due, r.timed)
	var err error
	if r.trim != nil {
		err = r.trim.Trim(op.Offset, int64(op.Size))
	}
	r.finish(op, t0, monoNow(), err != nil)
}
