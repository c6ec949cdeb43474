package sim

import (
	"math"
	"math/rand/v2"
	"time"

	"github.com/idlewatt/idlewatt/units"
)

// MeterOptions describe a simulated meter on the drive's 3.3 V rail: a
// sample every Period of the drive's draw plus Gaussian noise of NoiseW
// (σ), rounded to LSBW (0: not rounded).
type MeterOptions struct {
	Period time.Duration
	NoiseW units.Watts
	LSBW   units.Watts
	Seed   uint64
}

// DefaultMeter is a 20 kHz meter with 0.5 mW noise and a 0.1 mW step:
// fine enough to time the 980 PRO's 0.5 ms PS4 entry, noisy enough that
// a floor is a mean with an uncertainty.
func DefaultMeter() MeterOptions {
	return MeterOptions{Period: 50 * time.Microsecond, NoiseW: 0.0005, LSBW: 0.0001, Seed: 1}
}

// Sample is one simulated reading; Truth is the model's draw at At.
type Sample struct {
	At    time.Duration
	W     units.Watts
	Truth units.Watts
}

// Session is a host driving one simulated drive on a virtual clock while a
// simulated meter samples it: Idle and Read advance the clock, and every
// sample that falls in the time advanced is taken (in order, between the
// drive's events, so each reads the state the drive was in).
type Session struct {
	d       *Drive
	m       MeterOptions
	rng     *rand.Rand
	now     time.Duration
	next    time.Duration // the next sample time
	Samples []Sample
}

// NewSession starts a session at time start (the drive's clock).
func NewSession(d *Drive, m MeterOptions, start time.Duration) *Session {
	if m.Period <= 0 {
		m.Period = DefaultMeter().Period
	}
	return &Session{d: d, m: m, rng: rand.New(rand.NewPCG(m.Seed, 0x6e766d65)), now: start, next: start}
}

// Now is the session's clock.
func (s *Session) Now() time.Duration { return s.now }

// Drive is the drive the session drives.
func (s *Session) Drive() *Drive { return s.d }

// sampleTo takes the samples due before to.
func (s *Session) sampleTo(to time.Duration) {
	for ; s.next < to; s.next += s.m.Period {
		truth := s.d.Power(s.next)
		w := float64(truth) + float64(s.m.NoiseW)*s.rng.NormFloat64()
		if s.m.LSBW > 0 {
			w = math.Round(w/float64(s.m.LSBW)) * float64(s.m.LSBW)
		}
		s.Samples = append(s.Samples, Sample{At: s.next, W: units.Watts(w), Truth: truth})
	}
}

// Idle lets the drive sit for d with nothing outstanding.
func (s *Session) Idle(d time.Duration) {
	s.sampleTo(s.now + d)
	s.now += d
}

// Read issues one I/O now that the drive serves for service once awake,
// and waits for it: issue and completion times on the session's clock.
func (s *Session) Read(service time.Duration) (issue, complete time.Duration) {
	s.sampleTo(s.now)
	issue = s.now
	complete = issue + s.d.IO(issue) + service
	s.sampleTo(complete)
	_ = s.d.IODone(complete) // one outstanding, never an error
	s.now = complete
	return issue, complete
}

// APSTCycle is what the host did in one verification cycle: a read, an
// idle hold, then the probe read that wakes the drive and a warm read
// right after it (the probe's latency less the warm read's is the exit).
type APSTCycle struct {
	Cycle                     int
	Idle                      time.Duration // the completion the idle timers count from
	ProbeIssue, ProbeComplete time.Duration
	WarmIssue, WarmComplete   time.Duration
}

// RunAPSTCycles runs n cycles of: idle for hold after the last
// completion, a probe read, a warm read. Each cycle's idle starts at the
// previous cycle's warm read (the first at a read issued now).
func (s *Session) RunAPSTCycles(n int, hold, service time.Duration) []APSTCycle {
	_, idle := s.Read(service)
	out := make([]APSTCycle, 0, n)
	for i := range n {
		c := APSTCycle{Cycle: i + 1, Idle: idle}
		s.Idle(hold)
		c.ProbeIssue, c.ProbeComplete = s.Read(service)
		c.WarmIssue, c.WarmComplete = s.Read(service)
		idle = c.WarmComplete
		out = append(out, c)
	}
	return out
}
