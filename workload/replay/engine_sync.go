package replay

import (
	"math/rand/v2"
	"sync"

	"github.com/idlewatt/idlewatt/capture"
	"golang.org/x/sys/unix"
)

// exec performs one op with a blocking system call.
func (r *run) exec(sl *slot, rng *rand.Rand) bool {
	op := &sl.op
	fd := r.tgt.Fd()
	switch op.Type {
	case capture.OpFlush:
		return unix.Fdatasync(fd) != nil
	case capture.OpTrim:
		return r.trim != nil && r.trim.Trim(op.Offset, int64(op.Size)) != nil
	}
	if err := sl.buf.ensure(int(op.Size), rng); err != nil {
		return true
	}
	b := sl.buf.mem[:op.Size]
	var n int
	var err error
	if op.Type == capture.OpWrite {
		sl.buf.stamp(op.Offset, int(op.Size))
		n, err = unix.Pwrite(fd, b, op.Offset)
	} else {
		n, err = unix.Pread(fd, b, op.Offset)
	}
	return err != nil || n != len(b)
}

// sync is the portable engine: the calling (locked) goroutine alone at QD 1,
// else it dispatches to QD worker goroutines.
func (r *run) sync() error {
	now := monoNow()
	r.s.begin(now)
	r.c.start = now
	if r.cfg.QD == 1 {
		return r.syncInline()
	}
	qd := r.cfg.QD
	slots := make([]slot, qd)
	freeCh := make(chan int, qd)
	work := make(chan int, qd)
	for i := range qd {
		freeCh <- i
	}
	var mu sync.Mutex
	var wg sync.WaitGroup
	for w := range qd {
		wg.Add(1)
		go func() {
			defer wg.Done()
			rng := rand.New(rand.NewPCG(uint64(r.cfg.Seed), uint64(w)))
			for i := range work {
				sl := &slots[i]
				mu.Lock()
				ok := r.before(&sl.op, sl.due)
				mu.Unlock()
				if !ok {
					freeCh <- i
					continue
				}
				mu.Lock()
				t0 := monoNow()
				r.c.issue(t0, sl.due, r.timed)
				mu.Unlock()
				failed := r.exec(sl, rng)
				t1 := monoNow()
				mu.Lock()
				r.finish(&sl.op, t0, t1, failed)
				mu.Unlock()
				freeCh <- i
			}
		}()
	}
	var runErr error
	for !r.live.stop.Load() {
		i := <-freeCh
		op, due, done, err := r.s.next(monoNow())
		if done {
			runErr = err
			break
		}
		if r.timed && !waitUntil(due, &r.live.stop) {
			freeCh <- i
			break
		}
		slots[i].op, slots[i].due = op, due
		work <- i
	}
	close(work)
	wg.Wait()
	for i := range slots {
		slots[i].buf.free()
	}
	return runErr
}

func (r *run) syncInline() error {
	var sl slot
	defer sl.buf.free()
	rng := rand.New(rand.NewPCG(uint64(r.cfg.Seed), 0))
	for !r.live.stop.Load() {
		op, due, done, err := r.s.next(monoNow())
		if done {
			return err
		}
		if r.timed && !waitUntil(due, &r.live.stop) {
			return nil
		}
		sl.op, sl.due = op, due
		if !r.before(&sl.op, due) {
			continue
		}
		t0 := monoNow()
		r.c.issue(t0, due, r.timed)
		failed := r.exec(&sl, rng)
		r.finish(&sl.op, t0, monoNow(), failed)
	}
	return nil
}
