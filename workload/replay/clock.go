package replay

import (
	_ "unsafe" // for go:linkname
)

// nanotime is the Go runtime's monotonic clock: CLOCK_MONOTONIC read
// through the vDSO, the same clock as internal/hostclock.Now (which makes
// a clock_gettime system call). The engine reads the clock two or three
// times per I/O, and at QD 1 those system calls cost as much as the I/O's
// own; TestClockMatchesHostclock holds the two clocks together.
//
//go:linkname nanotime runtime.nanotime
func nanotime() int64

func monoNow() int64 { return nanotime() }
