package replay

import (
	"errors"
	"fmt"
	"os"
	"strings"
	"time"

	"github.com/idlewatt/idlewatt/workload"
)

// Mode is a timing mode.
type Mode uint8

// Timing modes.
const (
	Recorded     Mode = iota // issue at trace time (open loop)
	CompressIdle             // like Recorded with gaps > MaxIdle shrunk to MaxIdle
	AFAP                     // as fast as possible at the queue depth
)

// Timing selects when ops are issued.
type Timing struct {
	Mode    Mode
	MaxIdle time.Duration // CompressIdle only
}

func (t Timing) String() string {
	switch t.Mode {
	case CompressIdle:
		return "compress-idle=" + t.MaxIdle.String()
	case AFAP:
		return "afap"
	}
	return "recorded"
}

// ParseTiming accepts "recorded", "afap" or "compress-idle=DUR".
func ParseTiming(s string) (Timing, error) {
	switch {
	case s == "recorded" || s == "":
		return Timing{Mode: Recorded}, nil
	case s == "afap":
		return Timing{Mode: AFAP}, nil
	case strings.HasPrefix(s, "compress-idle="):
		d, err := time.ParseDuration(strings.TrimPrefix(s, "compress-idle="))
		if err != nil || d < 0 {
			return Timing{}, fmt.Errorf("timing %q: compress-idle needs a non-negative duration, e.g. compress-idle=25ms", s)
		}
		return Timing{Mode: CompressIdle, MaxIdle: d}, nil
	}
	return Timing{}, fmt.Errorf("timing %q: want recorded, afap or compress-idle=DUR", s)
}

// Config says how to replay. The zero value replays with recorded timing at
// QD 1 on the best engine.
type Config struct {
	QD       int           // ops in flight at most (default 1)
	Timing   Timing        //
	Speed    float64       // trace-time divisor: 2 plays twice as fast (default 1)
	Engine   string        // "uring", "sync" or "" (uring, else sync)
	Duration time.Duration // stop issuing after this long (0: at the end of the trace)
	MaxOps   int64         // stop after this many ops (0: no limit)
	Wrap     bool          // fold ops beyond the target's end back into it (else error)
	Align    int           // O_DIRECT alignment in bytes (default 512)
	Port     int           // IOEvent.Port
	Seed     int64         // random data seed
	// RealtimePriority, when 1–99, runs the engine's issuing thread under
	// SCHED_FIFO at that priority, so a busy machine cannot delay an op's
	// issue by a scheduler time slice (needs CAP_SYS_NICE; else a warning).
	RealtimePriority int
	// Progress, if set, is called about once a second from another goroutine.
	Progress func(Progress)
	// Warn, if set, receives non-fatal notices (engine fallback, realigned ops).
	Warn func(string)
}

// Progress is a running total.
type Progress struct {
	Elapsed time.Duration
	Ops     int64
	Bytes   int64
	// IOPS and MBps cover the last interval.
	IOPS, MBps float64
}

// Target is what the engine does I/O on: an open file descriptor.
type Target interface {
	Fd() int
	Size() int64  // bytes; ops must end within it (or Wrap)
	Direct() bool // the fd was opened with O_DIRECT: buffers and ops must be aligned
}

// Trimmer is implemented by targets that can discard a range (BLKDISCARD on
// a block device, hole punching on a file). Trims on other targets are
// counted as completed no-ops.
type Trimmer interface {
	Trim(off, n int64) error
}

// Hooks is implemented by targets that model a drive (states/drivesim.Target
// has exactly these methods): the engine calls Before just ahead of issuing
// each op and waits the returned delay (the drive waking from a low-power
// state), and After once the op completes. An error from Before fails the op
// without issuing it (and without After), e.g. a powered-off drive.
type Hooks interface {
	Before(op workload.Op, off int64, size int) (time.Duration, error)
	After(op workload.Op, off int64, size int)
}

// TimedHooks is implemented by targets that take the engine's completion
// stamp (host monotonic ns) instead of reading the clock in After
// (states/drivesim.Target.AfterAt); the engine calls AfterAt in place of
// After.
type TimedHooks interface {
	AfterAt(op workload.Op, off int64, size int, completeNs int64)
}

// Simulated adapts a simulated drive (states/drivesim.Target: a backing
// file plus Hooks) to a Target. direct says whether its file was opened
// O_DIRECT.
func Simulated(t interface {
	File() *os.File
	Size() int64
	Hooks
}, direct bool) Target {
	return &simTarget{t: t, direct: direct}
}

type simTarget struct {
	t interface {
		File() *os.File
		Size() int64
		Hooks
	}
	direct bool
}

func (s *simTarget) Fd() int      { return int(s.t.File().Fd()) }
func (s *simTarget) Size() int64  { return s.t.Size() }
func (s *simTarget) Direct() bool { return s.direct }
func (s *simTarget) Before(op workload.Op, off int64, size int) (time.Duration, error) {
	return s.t.Before(op, off, size)
}
func (s *simTarget) After(op workload.Op, off int64, size int) { s.t.After(op, off, size) }

// AfterAt passes the completion stamp on when the drive takes it.
func (s *simTarget) AfterAt(op workload.Op, off int64, size int, completeNs int64) {
	if h, ok := s.t.(TimedHooks); ok {
		h.AfterAt(op, off, size, completeNs)
		return
	}
	s.t.After(op, off, size)
}

// MinSpeed and MaxSpeed bound Config.Speed: trace time divided by it must
// stay a time.Duration (a speed of 1e-320 made every due time overflow, and
// the trace ran as fast as possible).
const MinSpeed, MaxSpeed = 1e-6, 1e9

// Errors callers branch on.
var (
	ErrBeyondTarget = errors.New("op beyond the end of the target")
	ErrBadOp        = errors.New("invalid op")
)

func (c *Config) defaults() error {
	if c.QD == 0 {
		c.QD = 1
	}
	if c.QD < 0 || c.QD > 4096 {
		return fmt.Errorf("queue depth %d: want 1 to 4096", c.QD)
	}
	if c.Speed == 0 {
		c.Speed = 1
	}
	if !(c.Speed >= MinSpeed && c.Speed <= MaxSpeed) {
		return fmt.Errorf("speed %v: want %g to %g", c.Speed, MinSpeed, MaxSpeed)
	}
	if c.Align == 0 {
		c.Align = 512
	}
	if c.Align < 0 || c.Align&(c.Align-1) != 0 {
		return fmt.Errorf("align %d: want a power of two", c.Align)
	}
	if c.RealtimePriority < 0 || c.RealtimePriority > 99 {
		return fmt.Errorf("realtime priority %d: want 0 (off) to 99", c.RealtimePriority)
	}
	switch c.Engine {
	case "", "uring", "sync":
	default:
		return fmt.Errorf("engine %q: want uring or sync", c.Engine)
	}
	return nil
}
