package hostclock

import (
	"time"
	_ "unsafe" // for go:linkname
)

// nanotime is the Go runtime's monotonic clock: CLOCK_MONOTONIC on Linux,
// read through the vDSO. A clock_gettime system call would give the same
// value (TestNowIsClockMonotonic holds them together) at several times the
// cost, and the replay engine reads the clock two or three times per I/O.
//
//go:linkname nanotime runtime.nanotime
func nanotime() int64

// Now returns CLOCK_MONOTONIC in nanoseconds.
func Now() int64 { return nanotime() }

// Since returns the duration from t (a Now reading) to now.
func Since(t int64) time.Duration { return time.Duration(Now() - t) }

// SleepUntil sleeps until the host clock reads t; returns at once if t is past.
func SleepUntil(t int64) {
	if d := time.Duration(t - Now()); d > 0 {
		time.Sleep(d)
	}
}
