package drivesim_test

import (
	"fmt"
	"time"

	"github.com/idlewatt/idlewatt/states/drivesim"
	"github.com/idlewatt/idlewatt/workload"
)

// A drive under med_power_with_dipm drops to Partial and Slumber between
// requests, makes a request that finds it in Slumber wait the Slumber exit,
// and honours a DEVSLP pulse for at least MDAT. "io" marks the time the
// request was outstanding (issued, not yet reported complete).
func Example() {
	p, _ := drivesim.Lookup("jmf667h-128-a19", nil)
	p.GCEveryS = 0 // no background GC, so the timeline is short
	m, _ := drivesim.New(p, drivesim.Options{Seed: 1, KeepTruth: true, Policy: drivesim.PolicyMedPowerDIPM})
	ms := time.Millisecond

	wait := m.IO(200*ms, workload.OpRead, 128<<10)
	fmt.Println("read waited", wait)
	m.IODone(210*ms, workload.OpRead, 128<<10)
	m.SetDevSlp(400*ms, true)
	m.SetDevSlp(402*ms, false)
	m.Advance(500 * ms)

	for _, s := range m.Truth() {
		io := ""
		if s.IO {
			io = " io"
		}
		fmt.Printf("%-8v %6.1f–%6.1f ms %.3f W%s\n", s.State, ms2(s.Start), ms2(s.End), s.Power(), io)
	}
	// Output:
	// read waited 6ms
	// idle        0.0–   1.0 ms 0.400 W
	// partial     1.0–  50.0 ms 0.300 W
	// slumber    50.0– 200.0 ms 0.070 W
	// wake      200.0– 202.0 ms 1.200 W io
	// wake      202.0– 206.0 ms 0.400 W io
	// active    206.0– 206.3 ms 1.284 W io
	// idle      206.3– 210.0 ms 0.400 W io
	// idle      210.0– 211.0 ms 0.400 W
	// partial   211.0– 260.0 ms 0.300 W
	// slumber   260.0– 400.0 ms 0.070 W
	// devslp    400.0– 410.0 ms 0.004 W
	// wake      410.0– 412.0 ms 1.200 W
	// wake      412.0– 450.0 ms 0.400 W
	// slumber   450.0– 500.0 ms 0.070 W
}

func ms2(d time.Duration) float64 { return float64(d) / 1e6 }
