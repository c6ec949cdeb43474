package hubemu

import (
	"math/rand"
	"testing"
	"time"

	"github.com/idlewatt/idlewatt/meter/hub"
)

// A MARK_ECHO's index is the sample nearest the MARK's arrival, so a
// host's clock fit, which takes the echo's index for the time the MARK
// arrived, is unbiased: over arrivals at random phases of the sample
// clock the mean of index/rate − arrival is 0, and no echo is off by more
// than half a sample. (The sample in progress — what the emulator sent
// before — is on average half a sample early: every DevSlp entry and exit
// the truth campaign timed was 0.05 ms late at 10 kS/s.)
func TestMarkEchoIndexIsNearestSample(t *testing.T) {
	for _, rate := range []int{1000, 10000, 2000} {
		g := newTestGen(t, Options{Ports: 1, Rates: nil})
		e0 := 123456789 * time.Nanosecond
		g.start(rate, 1, hub.Format20, e0)
		rng := rand.New(rand.NewSource(int64(rate)))
		period := 1e9 / float64(rate)
		sum, worst := 0.0, 0.0
		const n = 20000
		for range n {
			now := e0 + time.Duration(rng.Int63n(int64(10*time.Second)))
			off := float64(g.markIndex(now))*period - float64(now-e0) // ns: the index's time − arrival
			sum += off
			worst = max(worst, off, -off)
		}
		if mean := sum / n; mean > 0.02*period || mean < -0.02*period {
			t.Errorf("%d Hz: echo index %.3f samples from the arrival on average, want 0", rate, mean/period)
		}
		if worst > 0.5*period+1 {
			t.Errorf("%d Hz: an echo index %.3f samples from its arrival, want ≤ 0.5", rate, worst/period)
		}
	}
}
