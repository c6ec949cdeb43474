// Package hostclock reads the host's monotonic clock as int64 nanoseconds.
//
// Every host-side timestamp idlewatt records (I/O issue and completion, mark
// send and receive, state changes) comes from Now, so that samples and events
// from different goroutines, and from different processes on the same host,
// share one timeline. CLOCK_MONOTONIC does not jump with wall-clock changes.
package hostclock

import (
	"time"

	"golang.org/x/sys/unix"
)

// Now returns CLOCK_MONOTONIC in nanoseconds.
func Now() int64 {
	var ts unix.Timespec
	if err := unix.ClockGettime(unix.CLOCK_MONOTONIC, &ts); err != nil {
		// CLOCK_MONOTONIC cannot fail on Linux; fall back to the Go runtime's
		// monotonic reading relative to process start rather than panicking.
		return int64(time.Since(start))
	}
	return ts.Nano()
}

var start = time.Now()

// Since returns the duration from t (a Now reading) to now.
func Since(t int64) time.Duration { return time.Duration(Now() - t) }

// Sleep until the host clock reads t; returns at once if t is past.
func SleepUntil(t int64) {
	if d := time.Duration(t - Now()); d > 0 {
		time.Sleep(d)
	}
}
