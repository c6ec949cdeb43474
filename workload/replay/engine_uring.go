package replay

import (
	"math/bits"
	"math/rand/v2"
	"runtime"
	"time"

	"github.com/idlewatt/idlewatt/workload"
	"github.com/idlewatt/idlewatt/workload/trace"
	"github.com/idlewatt/idlewatt/workload/uring"
)

type slot struct {
	buf   buffer
	op    trace.Op
	due   int64
	issue int64
	hook  int64 // issue time stamped by the Before hook (before the drive's wait); 0 = none
}

// uringLoop is the io_uring engine's state: a slot per queue-depth entry
// (free, queued for the next submit, or in flight) and the next op.
type uringLoop struct {
	r       *run
	ring    *uring.Ring
	fd      int
	rng     *rand.Rand
	slots   []slot
	free    []int // slot indices
	queued  []int // prepared, not yet submitted
	batch   uint32
	noYield bool

	cur      trace.Op // the next op, if have
	due      int64
	have     bool
	done     bool // the schedule has no more ops (or the run was stopped)
	runErr   error
	inflight int
	now      int64
	hookAt   int64 // the current op's Before-hook issue time
}

// uring is the io_uring engine's loop; it runs on a locked thread.
func (r *run) uring() error {
	l, err := newUringLoop(r)
	if err != nil {
		return err
	}
	defer l.close()
	l.now = monoNow()
	r.s.begin(l.now)
	r.c.start = l.now
	for {
		if err := l.fill(); err != nil {
			return err
		}
		if len(l.queued) == 0 && l.inflight == 0 {
			if l.done {
				return l.runErr
			}
			if l.have && r.timed {
				waitUntil(l.due, &r.live.stop)
			}
			l.now = monoNow()
			continue
		}
		waitNr, timeout := l.wait()
		if err := l.submit(waitNr, timeout); err != nil {
			return err
		}
		l.now = monoNow()
		l.reap()
	}
}

func newUringLoop(r *run) (*uringLoop, error) {
	qd := r.cfg.QD
	ring, err := uring.New(uint32(1) << bits.Len(uint(max(qd, 4)-1)))
	if err != nil {
		return nil, err
	}
	l := &uringLoop{
		r:       r,
		ring:    ring,
		fd:      r.tgt.Fd(),
		rng:     rand.New(rand.NewPCG(uint64(r.cfg.Seed), 0x1d1e)),
		slots:   make([]slot, qd),
		free:    make([]int, qd),
		queued:  make([]int, 0, qd),
		batch:   uint32(min(max(qd/4, 1), 8)),
		noYield: runtime.GOMAXPROCS(0) >= 2,
	}
	_ = ring.RegisterFile(l.fd) // optional speed-up
	for i := range l.free {
		l.free[i] = qd - 1 - i
	}
	return l, nil
}

func (l *uringLoop) close() {
	for i := range l.slots {
		l.slots[i].buf.free()
	}
	l.ring.Close()
}

// fill prepares ops while a slot is free and the next op is due.
func (l *uringLoop) fill() error {
	r := l.r
	for !l.done && len(l.free) > 0 {
		if r.live.stop.Load() {
			l.done, l.have = true, false // an op fetched but not issued is dropped
			return nil
		}
		if !l.have {
			l.cur, l.due, l.done, l.runErr = r.s.next(l.now)
			if l.done {
				return nil
			}
			l.have = true
		}
		if r.timed && l.due > l.now {
			return nil
		}
		if r.hooks != nil || l.cur.Type == workload.OpTrim {
			consumed, err := l.outsideRing()
			if err != nil {
				return err
			}
			if consumed {
				continue
			}
		}
		if ok, err := l.prepare(); err != nil || !ok {
			return err
		}
	}
	return nil
}

// outsideRing does what the current op needs outside the ring: a trim is
// issued synchronously, and the before hook runs (and may drop the op).
// Anything queued is submitted first, so the hook's delay or the
// synchronous trim does not hold it back. It reports whether the op was
// consumed.
func (l *uringLoop) outsideRing() (consumed bool, err error) {
	if len(l.queued) > 0 {
		if err := l.submit(0, 0); err != nil {
			return false, err
		}
	}
	if l.cur.Type == workload.OpTrim {
		l.r.trimSync(&l.cur, l.due)
	} else if at, ok := l.r.before(&l.cur, l.due); ok {
		l.hookAt = at
		return false, nil
	}
	l.have = false
	l.now = monoNow()
	return true, nil
}

// prepare puts the current op into a free slot's SQE, queued for the next
// submit; false if the ring has no SQE to give.
func (l *uringLoop) prepare() (bool, error) {
	i := l.free[len(l.free)-1]
	sl := &l.slots[i]
	sqe := l.ring.GetSQE()
	if sqe == nil {
		return false, nil // cannot happen with entries ≥ QD; be safe
	}
	l.free = l.free[:len(l.free)-1]
	cur := l.cur
	sl.op, sl.due, sl.hook = cur, l.due, l.hookAt
	l.hookAt = 0
	l.have = false
	l.ring.SetFd(sqe, l.fd)
	sqe.UserData = uint64(i)
	switch cur.Type {
	case workload.OpFlush:
		sqe.Opcode, sqe.OpFlags = uring.OpFsync, uring.FsyncDatasync
	default:
		if err := sl.buf.ensure(int(cur.Size), l.rng); err != nil {
			return false, err
		}
		sqe.Opcode = uring.OpRead
		if cur.Type == workload.OpWrite {
			sqe.Opcode = uring.OpWrite
			sl.buf.stamp(cur.Offset, int(cur.Size))
		}
		sqe.Addr, sqe.Len, sqe.Off = sl.buf.addr(), uint32(cur.Size), uint64(cur.Offset)
	}
	l.queued = append(l.queued, i)
	return true, nil
}

// wait says how many completions the next submit waits for, and how long.
func (l *uringLoop) wait() (waitNr uint32, timeout time.Duration) {
	r := l.r
	switch {
	case r.timed && l.have && !l.done && len(l.free) > 0:
		// Waiting for the next op's time: wake for a completion or then.
		if timeout = time.Duration(l.due - monoNow()); timeout > 0 {
			waitNr = 1
		}
	case r.timed:
		waitNr = 1
	default:
		waitNr = min(l.batch, uint32(l.inflight+len(l.queued)))
	}
	return waitNr, timeout
}

// submit stamps the queued ops with one issue time and hands them to the
// kernel, waiting as asked.
func (l *uringLoop) submit(waitNr uint32, timeout time.Duration) error {
	t := monoNow()
	for _, i := range l.queued {
		it := t
		if h := l.slots[i].hook; h != 0 && h < t {
			it = h // the drive's wait (hook) is part of the op's latency
		}
		l.slots[i].issue, l.slots[i].hook = it, 0
		l.r.c.issue(it, l.slots[i].due, l.r.timed)
	}
	l.inflight += len(l.queued)
	l.queued = l.queued[:0]
	// Waits bounded by I/O latency skip the scheduler hand-off (see
	// uring.EnterNoYield); idle-gap waits yield the P to the process.
	if l.noYield && realtime.Load() && timeout > time.Millisecond {
		timeout = time.Millisecond // keep the P; the loop comes back
	}
	if l.noYield && (timeout == 0 || timeout <= time.Millisecond) {
		return l.ring.EnterNoYield(waitNr, timeout)
	}
	return l.ring.Enter(waitNr, timeout)
}

// reap finishes every completed op and frees its slot.
func (l *uringLoop) reap() {
	qd := len(l.slots)
	for {
		cqe, ok := l.ring.Peek()
		if !ok {
			return
		}
		i := int(cqe.UserData)
		res := cqe.Res
		l.ring.Advance(1)
		if i < 0 || i >= qd {
			continue
		}
		sl := &l.slots[i]
		failed := res < 0 || (sl.op.Type != workload.OpFlush && res != sl.op.Size)
		l.r.finish(&sl.op, sl.issue, l.now, failed)
		l.free = append(l.free, i)
		l.inflight--
	}
}
