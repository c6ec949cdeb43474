package trace

import (
	"testing"
	"time"
)

func TestHumanDuration(t *testing.T) {
	for d, want := range map[time.Duration]string{
		0: "0 s", 46345758762: "46.35 s", time.Millisecond: "1 ms", 100 * time.Microsecond: "100 µs",
		1500 * time.Microsecond: "1.5 ms", 12 * time.Nanosecond: "12 ns", -2 * time.Second: "-2 s",
		36000 * time.Second: "36000 s",
	} {
		if got := HumanDuration(d); got != want {
			t.Errorf("%v: %q, want %q", d, got, want)
		}
	}
}
