package replay

import (
	"errors"
	"fmt"
	"io"
	"runtime"
	"sync/atomic"
	"time"

	"github.com/idlewatt/idlewatt/workload"
	"github.com/idlewatt/idlewatt/workload/trace"
	"unsafe"

	"golang.org/x/sys/unix"
)

// sched turns trace times into host-clock due times and validates ops.
type sched struct {
	cfg      *Config
	src      trace.Reader
	size     int64
	direct   bool
	start    int64 // host time of trace time t0
	started  bool
	t0       time.Duration
	last     time.Duration // previous op's trace time
	virt     time.Duration // compressed trace time
	n        int64         // ops read from the trace (the index in error messages)
	issued   int64         // ops handed to an engine (MaxOps counts these)
	zeroLen  int64         // zero-length reads, writes and trims skipped
	deadline int64         // host time to stop issuing (0: none)
	realign  int64
	wrapped  int64
	maxSize  int32
}

// MaxOpSize bounds one read or write: each queue slot holds a buffer as
// large as the largest op it has carried, so a trace of 2 GiB ops at QD 32
// would otherwise map 64 GiB. Block layers split requests far smaller
// (max_sectors_kb is at most a few MiB), so no real trace comes near it.
const MaxOpSize = 64 << 20

func newSched(cfg *Config, src trace.Reader, tgt Target) *sched {
	return &sched{cfg: cfg, src: src, size: tgt.Size(), direct: tgt.Direct()}
}

// begin fixes the start of the replay.
func (s *sched) begin(now int64) {
	s.start = now
	if s.cfg.Duration > 0 {
		s.deadline = now + int64(s.cfg.Duration)
	}
}

// next reads and prepares the next op and its due time. done reports the
// end of the trace, the op limit or the deadline.
func (s *sched) next(now int64) (op trace.Op, due int64, done bool, err error) {
	if s.cfg.MaxOps > 0 && s.issued >= s.cfg.MaxOps {
		return op, 0, true, nil
	}
	if s.deadline != 0 && now >= s.deadline {
		return op, 0, true, nil
	}
	for {
		op, err = s.src.Next()
		if err != nil {
			if errors.Is(err, io.EOF) {
				return op, 0, true, nil
			}
			return op, 0, true, err
		}
		s.n++
		skip, err := s.prep(&op)
		if err != nil {
			return op, 0, true, fmt.Errorf("op %d (%s at offset %d, %d bytes): %w", s.n, op.Type, op.Offset, op.Size, err)
		}
		if !skip {
			break
		}
	}
	s.issued++
	if s.cfg.Timing.Mode == AFAP {
		return op, 0, false, nil
	}
	if !s.started {
		s.started, s.t0, s.last = true, op.Time, op.Time
	}
	gap := op.Time - s.last
	if gap < 0 {
		gap = 0 // out-of-order op: issue at once, keep the timeline
	} else {
		s.last = op.Time
	}
	if s.cfg.Timing.Mode == CompressIdle && gap > s.cfg.Timing.MaxIdle {
		gap = s.cfg.Timing.MaxIdle
	}
	s.virt += gap
	return op, s.start + int64(float64(s.virt)/s.cfg.Speed), false, nil
}

// prep checks an op against the target and widens it to the alignment.
// skip reports a zero-length read, write or trim: it transfers nothing, so
// it is counted (Result.ZeroLength) and not issued, on every engine alike.
func (s *sched) prep(op *trace.Op) (skip bool, err error) {
	switch op.Type {
	case workload.OpRead, workload.OpWrite, workload.OpTrim:
	case workload.OpFlush:
		op.Offset, op.Size = 0, 0
		return false, nil
	default:
		return false, fmt.Errorf("%w: type %d", ErrBadOp, op.Type)
	}
	if op.Offset < 0 || op.Size < 0 {
		return false, fmt.Errorf("%w: negative offset or size", ErrBadOp)
	}
	if op.Size == 0 {
		// Before alignment, which would widen it into a real 512-byte op.
		s.zeroLen++
		return true, nil
	}
	if op.Type != workload.OpTrim && op.Size > MaxOpSize {
		return false, fmt.Errorf("%w: %d bytes is larger than the %d MiB an op may carry", ErrBadOp, op.Size, MaxOpSize>>20)
	}
	if s.size <= 0 {
		return false, fmt.Errorf("%w: the target is empty", ErrBeyondTarget)
	}
	wrapped := false
	if op.Offset > s.size {
		// Folded before any arithmetic on Offset+Size, which could overflow.
		if !s.cfg.Wrap {
			return false, fmt.Errorf("%w (%d bytes); use --wrap to fold offsets into it", ErrBeyondTarget, s.size)
		}
		op.Offset %= s.size
		wrapped = true
	}
	if s.direct && op.Type != workload.OpTrim {
		a := int64(s.cfg.Align)
		off := op.Offset &^ (a - 1)
		end := (op.End() + a - 1) &^ (a - 1)
		if off != op.Offset || end != op.End() {
			if end-off > 1<<31-1 {
				return false, fmt.Errorf("%w: size after alignment too large", ErrBadOp)
			}
			s.realign++
			op.Offset, op.Size = off, int32(end-off)
		}
	}
	if int64(op.Size) > s.size {
		return false, fmt.Errorf("%w: op larger than the target (%d bytes)", ErrBeyondTarget, s.size)
	}
	if op.End() > s.size {
		if !s.cfg.Wrap {
			return false, fmt.Errorf("%w (%d bytes); use --wrap to fold offsets into it", ErrBeyondTarget, s.size)
		}
		// Fold into the target, keeping the alignment.
		room := s.size - int64(op.Size)
		a := int64(s.cfg.Align)
		op.Offset = (op.Offset % (room + 1)) &^ (a - 1)
		wrapped = true
	}
	if wrapped {
		s.wrapped++
	}
	s.maxSize = max(s.maxSize, op.Size)
	return false, nil
}

// waitUntil sleeps until host time t with microsecond-level precision. It
// reports whether t was reached (false: stop was set; it is polled at least
// every 20 ms so a stop ends a long idle gap promptly).
//
// A thread returning from a blocking system call must win back a P, which
// on a busy machine can take a scheduler time slice of some other thread.
// So the last approachMargin is slept with raw system calls that keep the P
// (in slices of at most 1 ms, so a GC stop-the-world waits no longer), and
// the last 150 µs are spun (a nanosleep on a loaded virtual machine wakes
// 50–100 µs late). With GOMAXPROCS 1 keeping the P would stall the
// whole process, so then every sleep yields.
//
// With a realtime issuing thread (Config.RealtimePriority) every sleep keeps
// the P: the thread cannot be starved, but a P it gave up would only come
// back through a normal-priority thread.
func waitUntil(t int64, stop *atomic.Bool) bool {
	const (
		spin           = 150 * int64(time.Microsecond)
		slice          = 20 * int64(time.Millisecond)
		rawSlice       = int64(time.Millisecond)
		approachMargin = 5 * int64(time.Millisecond)
	)
	keepP := runtime.GOMAXPROCS(0) >= 2
	margin := approachMargin
	if keepP && realtime.Load() {
		margin = 0
	}
	for {
		if stop != nil && stop.Load() {
			return false
		}
		d := t - monoNow()
		switch {
		case d <= 0:
			return true
		case keepP && margin > 0 && d > margin:
			ts := unix.NsecToTimespec(min(d-margin, slice))
			unix.Nanosleep(&ts, nil)
		case !keepP && d > spin:
			ts := unix.NsecToTimespec(min(d-spin, slice))
			unix.Nanosleep(&ts, nil)
		case d > spin:
			ts := unix.NsecToTimespec(min(d-spin, rawSlice))
			unix.RawSyscall(unix.SYS_NANOSLEEP, uintptr(unsafe.Pointer(&ts)), 0, 0)
		}
	}
}

// realtime is set while a SCHED_FIFO engine thread runs (one replay at a
// time uses it; a second concurrent replay merely sleeps differently).
var realtime atomic.Bool

// setTimerSlack makes nanosleep and ring timeouts on this thread wake on
// time instead of up to 50 µs late (the default slack).
func setTimerSlack() { unix.Prctl(unix.PR_SET_TIMERSLACK, 1, 0, 0, 0) }
