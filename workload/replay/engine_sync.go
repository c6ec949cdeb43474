package replay

import (
	"math/rand/v2"
	"runtime"
	"sync"
	"unsafe"

	"github.com/idlewatt/idlewatt/workload"
	"golang.org/x/sys/unix"
)

// exec performs one op with a blocking system call.
func (r *run) exec(sl *slot, rng *rand.Rand) bool {
	op := &sl.op
	fd := r.tgt.Fd()
	switch op.Type {
	case workload.OpFlush:
		return unix.Fdatasync(fd) != nil
	case workload.OpTrim:
		return r.trim != nil && r.trim.Trim(op.Offset, int64(op.Size)) != nil
	}
	if err := sl.buf.ensure(int(op.Size), rng); err != nil {
		return true
	}
	b := sl.buf.mem[:op.Size]
	if len(b) == 0 {
		return false // nothing to transfer
	}
	call := uintptr(unix.SYS_PREAD64)
	if op.Type == workload.OpWrite {
		sl.buf.stamp(op.Offset, int(op.Size))
		call = unix.SYS_PWRITE64
	}
	var n uintptr
	var errno unix.Errno
	p, l, o := uintptr(unsafe.Pointer(&b[0])), uintptr(len(b)), uintptr(op.Offset)
	if r.noYield {
		// See uring.EnterNoYield: only the inline QD 1 loop sets noYield.
		n, _, errno = unix.RawSyscall6(call, uintptr(fd), p, l, o, 0, 0)
	} else {
		n, _, errno = unix.Syscall6(call, uintptr(fd), p, l, o, 0, 0)
	}
	return errno != 0 || int(n) != len(b)
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
				at, ok := r.before(&sl.op, sl.due)
				mu.Unlock()
				if !ok {
					freeCh <- i
					continue
				}
				mu.Lock()
				t0 := issuedAt(at)
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
	r.noYield = runtime.GOMAXPROCS(0) >= 2
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
		at, ok := r.before(&sl.op, due)
		if !ok {
			continue
		}
		t0 := issuedAt(at)
		r.c.issue(t0, due, r.timed)
		failed := r.exec(&sl, rng)
		r.finish(&sl.op, t0, monoNow(), failed)
	}
	return nil
}
