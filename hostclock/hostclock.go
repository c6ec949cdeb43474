package hostclock

import (
	"time"
	_ "unsafe" // for go:linkname
)

// Time is a reading of the host's monotonic clock: CLOCK_MONOTONIC in
// nanoseconds (since an unspecified point, usually boot). Two Times are
// comparable within one boot of one host only; a Time is not a wall-clock
// time. Files store it as its int64 value (capture start_host, marks,
// events), so a conversion to and from int64 is lossless.
type Time int64

// nanotime is the Go runtime's monotonic clock: CLOCK_MONOTONIC on Linux,
// read through the vDSO. A clock_gettime system call would give the same
// value (TestNowIsClockMonotonic holds them together) at several times the
// cost, and the replay engine reads the clock two or three times per I/O.
//
//go:linkname nanotime runtime.nanotime
func nanotime() int64

// Now returns CLOCK_MONOTONIC in nanoseconds.
func Now() Time { return Time(nanotime()) }

// Since returns the duration from t (a Now reading) to now.
func Since(t Time) time.Duration { return Now().Sub(t) }

// SleepUntil sleeps until the host clock reads t; returns at once if t is past.
func SleepUntil(t Time) {
	if d := t.Sub(Now()); d > 0 {
		time.Sleep(d)
	}
}

// Add returns t+d.
func (t Time) Add(d time.Duration) Time { return t + Time(d) }

// Sub returns t-u.
func (t Time) Sub(u Time) time.Duration { return time.Duration(t - u) }

// Before reports whether t is earlier than u.
func (t Time) Before(u Time) bool { return t < u }

// After reports whether t is later than u.
func (t Time) After(u Time) bool { return t > u }
