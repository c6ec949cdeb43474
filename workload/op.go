package workload

import "github.com/idlewatt/idlewatt/hostclock"

// Op is an I/O operation type. Its numeric values are stored in capture
// files (docs/capture-format.md), so they never change.
type Op uint8

// I/O operations.
const (
	OpRead  Op = 1
	OpWrite Op = 2
	OpFlush Op = 3
	OpTrim  Op = 4
)

func (o Op) String() string {
	switch o {
	case OpRead:
		return "read"
	case OpWrite:
		return "write"
	case OpFlush:
		return "flush"
	case OpTrim:
		return "trim"
	}
	return "unknown"
}

// IOEvent is one completed I/O, timed on the host monotonic clock.
type IOEvent struct {
	Port     int            // drive port the I/O went to (0 = unknown)
	Op       Op             //
	Offset   int64          // bytes
	Size     int32          // bytes
	Issue    hostclock.Time // hostclock.Now() at submission
	Complete hostclock.Time // hostclock.Now() at completion
	Err      bool           // the I/O failed
}
