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

// uring is the io_uring engine's loop; it runs on a locked thread.
func (r *run) uring() error {
	qd := r.cfg.QD
	ring, err := uring.New(uint32(1) << bits.Len(uint(max(qd, 4)-1)))
	if err != nil {
		return err
	}
	defer ring.Close()
	fd := r.tgt.Fd()
	_ = ring.RegisterFile(fd) // optional speed-up

	rng := rand.New(rand.NewPCG(uint64(r.cfg.Seed), 0x1d1e))
	slots := make([]slot, qd)
	defer func() {
		for i := range slots {
			slots[i].buf.free()
		}
	}()
	free := make([]int, qd)
	for i := range free {
		free[i] = qd - 1 - i
	}
	queued := make([]int, 0, qd)
	batch := uint32(min(max(qd/4, 1), 8))
	noYield := runtime.GOMAXPROCS(0) >= 2

	var (
		cur      trace.Op
		due      int64
		have     bool
		done     bool
		runErr   error
		inflight int
		hookAt   int64 // the current op's Before-hook issue time
	)
	now := monoNow()
	r.s.begin(now)
	r.c.start = now
	// submit stamps the queued ops with one issue time and hands them to
	// the kernel, waiting as asked.
	submit := func(waitNr uint32, timeout time.Duration) error {
		t := monoNow()
		for _, i := range queued {
			it := t
			if h := slots[i].hook; h != 0 && h < t {
				it = h // the drive's wait (hook) is part of the op's latency
			}
			slots[i].issue, slots[i].hook = it, 0
			r.c.issue(it, slots[i].due, r.timed)
		}
		inflight += len(queued)
		queued = queued[:0]
		// Waits bounded by I/O latency skip the scheduler hand-off (see
		// uring.EnterNoYield); idle-gap waits yield the P to the process.
		if noYield && realtime.Load() && timeout > time.Millisecond {
			timeout = time.Millisecond // keep the P; the loop comes back
		}
		if noYield && (timeout == 0 || timeout <= time.Millisecond) {
			return ring.EnterNoYield(waitNr, timeout)
		}
		return ring.Enter(waitNr, timeout)
	}
	for {
		for !done && len(free) > 0 {
			if r.live.stop.Load() {
				done, have = true, false // an op fetched but not issued is dropped
				break
			}
			if !have {
				cur, due, done, runErr = r.s.next(now)
				if done {
					break
				}
				have = true
			}
			if r.timed && due > now {
				break
			}
			if r.hooks != nil || cur.Type == workload.OpTrim {
				// Anything queued goes first, so the hook's delay or the
				// synchronous trim does not hold it back.
				if len(queued) > 0 {
					if err := submit(0, 0); err != nil {
						return err
					}
				}
				if cur.Type == workload.OpTrim {
					r.trimSync(&cur, due)
					have = false
					now = monoNow()
					continue
				}
				at, ok := r.before(&cur, due)
				if !ok {
					have = false
					now = monoNow()
					continue
				}
				hookAt = at
			}
			i := free[len(free)-1]
			sl := &slots[i]
			sqe := ring.GetSQE()
			if sqe == nil {
				break // cannot happen with entries ≥ QD; be safe
			}
			free = free[:len(free)-1]
			sl.op, sl.due, sl.hook = cur, due, hookAt
			hookAt = 0
			have = false
			ring.SetFd(sqe, fd)
			sqe.UserData = uint64(i)
			switch cur.Type {
			case workload.OpFlush:
				sqe.Opcode, sqe.OpFlags = uring.OpFsync, uring.FsyncDatasync
			default:
				if err := sl.buf.ensure(int(cur.Size), rng); err != nil {
					return err
				}
				sqe.Opcode = uring.OpRead
				if cur.Type == workload.OpWrite {
					sqe.Opcode = uring.OpWrite
					sl.buf.stamp(cur.Offset, int(cur.Size))
				}
				sqe.Addr, sqe.Len, sqe.Off = sl.buf.addr(), uint32(cur.Size), uint64(cur.Offset)
			}
			queued = append(queued, i)
		}
		if len(queued) == 0 && inflight == 0 {
			if done {
				return runErr
			}
			if have && r.timed {
				waitUntil(due, &r.live.stop)
			}
			now = monoNow()
			continue
		}
		var waitNr uint32
		var timeout time.Duration
		total := uint32(inflight + len(queued))
		switch {
		case r.timed && have && !done && len(free) > 0:
			// Waiting for the next op's time: wake for a completion or then.
			if timeout = time.Duration(due - monoNow()); timeout > 0 {
				waitNr = 1
			}
		case r.timed:
			waitNr = 1
		default:
			waitNr = min(batch, total)
		}
		if err := submit(waitNr, timeout); err != nil {
			return err
		}
		now = monoNow()
		for {
			cqe, ok := ring.Peek()
			if !ok {
				break
			}
			i := int(cqe.UserData)
			res := cqe.Res
			ring.Advance(1)
			if i < 0 || i >= qd {
				continue
			}
			sl := &slots[i]
			failed := res < 0 || (sl.op.Type != workload.OpFlush && res != sl.op.Size)
			r.finish(&sl.op, sl.issue, now, failed)
			free = append(free, i)
			inflight--
		}
	}
}
