package replay

import (
	"testing"

	"github.com/idlewatt/idlewatt/internal/hostclock"
)

func TestClockMatchesHostclock(t *testing.T) {
	for i := 0; i < 5; i++ {
		a := monoNow()
		h := hostclock.Now()
		b := monoNow()
		if h < a || h > b {
			t.Fatalf("hostclock %d outside [%d, %d]: not the same clock", h, a, b)
		}
	}
}
