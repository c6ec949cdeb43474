package uring

import (
	"runtime"
	"testing"
	"time"
)

// A wait with a timeout returns when nothing completes; the replay engine
// relies on it to issue the next op on time while others are in flight.
// (If the timeout were ignored this test would hang until go test's own.)
func TestEnterTimeout(t *testing.T) {
	runtime.LockOSThread() // single-issuer ring: stay on the creating thread
	defer runtime.UnlockOSThread()
	r := newRing(t, 4)
	for _, enter := range []func(uint32, time.Duration) error{r.Enter, r.EnterNoYield} {
		if err := enter(1, 5*time.Millisecond); err != nil {
			t.Fatal(err)
		}
		if _, ok := r.Peek(); ok {
			t.Fatal("a completion out of nowhere")
		}
	}
}
