package analysis

// Time integrity (issue 8 item 6): the clock fit maps 64-bit sample indices
// to host time; indices beyond 2³² (5 days at 10 kS/s) and far beyond must
// map as exactly as small ones.

import (
	"math"
	"testing"
	"time"

	"github.com/idlewatt/idlewatt/hostclock"
	"github.com/idlewatt/idlewatt/meter"
)

func TestClockBeyond2To32(t *testing.T) {
	const (
		rate  = 10000.0
		drift = 120.0 // ppm: the meter's samples take longer than nominal
		rtt   = 200e3 // ns, symmetric
	)
	for _, start := range []uint64{1<<32 - 50000, 1 << 32, 1<<40 + 3, 1 << 50} {
		period := 1e9 / rate * (1 + drift/1e6)
		host0 := int64(7e15) // host time (ns) at index start: months of uptime
		truth := func(n uint64) float64 { return float64(host0) + period*(float64(n)-float64(start)) }
		f := NewClockFitter(rate, time.Second, 64)
		for k := range 120 { // a mark a second for two minutes, crossing 2³² for the first start
			n := start + uint64(k)*10000
			mid := truth(n)
			f.Add(meter.MarkEcho{ID: uint32(k), HostSent: hostclock.Time(mid - rtt/2), HostRecv: hostclock.Time(mid + rtt/2), MeterIndex: n})
		}
		c := f.Fit(0)
		if !c.Fitted || c.Used < 50 {
			t.Fatalf("start %d: fitted %v with %d marks", start, c.Fitted, c.Used)
		}
		if math.Abs(c.DriftPPM-drift) > 0.01 {
			t.Errorf("start %d: drift %.4f ppm, want %.1f", start, c.DriftPPM, drift)
		}
		for _, n := range []uint64{start, start + 1, start + 600000, start + 1199999, 1 << 32, 1<<32 + 1} {
			if n < start || n > start+1200000 {
				continue
			}
			if err := float64(c.Host(n)) - truth(n); math.Abs(err) > 2 {
				t.Errorf("start %d: Host(%d) off by %.1f ns", start, n, err)
			}
			if x := c.Index(hostclock.Time(math.Round(truth(n)))); math.Abs(x-float64(n)) > 1e-3 {
				t.Errorf("start %d: Index(host of %d) = %.4f", start, n, x)
			}
		}
		// Consecutive samples stay one period apart: nothing is lost to
		// float64 rounding at these magnitudes.
		n := start + 777
		if d := c.Host(n+1) - c.Host(n); math.Abs(float64(d)-period) > 1 {
			t.Errorf("start %d: Host(n+1)−Host(n) = %d ns, want %.1f", start, d, period)
		}
	}
}
