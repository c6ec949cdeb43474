package synthcap

import (
	"time"
)

// Review returns a review-like scenario of length d at rateHz: two drives
// (0.4 W and 0.2 W idle), PCMark-like bursts every 2 s, idle and workload
// phases, one DEVSLP cycle per minute, marks every second on a meter clock
// drifting by driftPPM.
func Review(d time.Duration, rateHz, driftPPM float64) Scenario {
	s := Scenario{
		RateHz: rateHz, Duration: d, StartHost: 1e12, DriftPPM: driftPPM,
		Drives: []Drive{
			{Port: 1, Name: "JMF667H 128GB (sim)", IdleW: 0.40, BusyW: 2.2, DevSlpW: 0.006, Split5V: 1},
			{Port: 2, Name: "JMF667H 256GB (sim)", IdleW: 0.20, BusyW: 1.9, DevSlpW: 0.004, Split5V: 0.8},
		},
		MarkEvery: time.Second, RTTMin: 300 * time.Microsecond, Jitter: 500 * time.Microsecond, Seed: 7,
		Phases: []Phase{{At: 0, Name: "idle"}, {At: d / 4, Name: "workload:pcmark7-like"}},
	}
	for _, p := range []int{1, 2} {
		s.Bursts = append(s.Bursts, Bursts{Port: p, First: d/4 + time.Duration(p)*100*time.Millisecond, Every: 2 * time.Second, Ops: 20, OpDur: 400 * time.Microsecond, Size: 65536})
	}
	for t := time.Minute; t+10*time.Second < d; t += time.Minute {
		for _, p := range []int{1, 2} {
			s.Pins = append(s.Pins, Pin{Port: p, From: t, To: t + 5*time.Second})
		}
	}
	return s
}
