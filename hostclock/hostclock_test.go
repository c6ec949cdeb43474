package hostclock

import (
	"testing"

	"golang.org/x/sys/unix"
)

// Now must be CLOCK_MONOTONIC itself: other processes (and the kernel's
// own timestamps) use that clock, and captures mix them.
func TestNowIsClockMonotonic(t *testing.T) {
	for i := 0; i < 5; i++ {
		var ts unix.Timespec
		a := int64(Now())
		if err := unix.ClockGettime(unix.CLOCK_MONOTONIC, &ts); err != nil {
			t.Fatal(err)
		}
		b := int64(Now())
		if c := ts.Nano(); c < a || c > b {
			t.Fatalf("clock_gettime %d outside [%d, %d]: not the same clock", c, a, b)
		}
	}
}

func BenchmarkNow(b *testing.B) {
	for i := 0; i < b.N; i++ {
		_ = Now()
	}
}
