package drivesim

import (
	"math"
	"time"

	"github.com/idlewatt/idlewatt/states/powerstate"
	"github.com/idlewatt/idlewatt/units"
	"github.com/idlewatt/idlewatt/workload"
)

// compiled holds a profile in the units the state machine uses: ns and W.
type compiled struct {
	hdd                                  bool
	v5, v12                              float64
	sigma                                float64 // A
	idle, partial, slumber, devslp       float64
	standby, spindle, spinupW, share     float64
	activeRead, activeWrite              float64
	spikeW, gcW                          float64
	nsPerByteRead, nsPerByteWrite        float64
	partialExit, slumberExit, devslpExit int64
	mdat, ready, spinup, spike, gc       int64
	hipm, dipmP, dipmS, dito, standbyAft int64
	gcEvery                              float64 // ns, mean
	devslpWorks, deso                    bool
	noisy                                bool // the profile has a noise model
}

func msNs(x float64) int64 { return int64(math.Round(x * 1e6)) }

func compile(p Profile, opt Options) compiled {
	c := compiled{
		hdd: p.HDD(), v5: float64(opt.V5), v12: float64(opt.V12),
		sigma: p.NoiseMA / 1e3,
		idle:  float64(p.ActiveIdleW), partial: float64(p.PartialW), slumber: float64(p.SlumberW),
		devslp: float64(p.DevSlpW), standby: float64(p.StandbyW), spindle: float64(p.SpindleW),
		spinupW: float64(p.SpinupW), share: p.Active12VShare,
		spikeW: float64(p.WakeSpikeW), gcW: float64(p.GCW),
		nsPerByteRead:  1e3 / p.MaxReadMBps, // 1 MB/s = 1 B/µs
		nsPerByteWrite: 1e3 / p.MaxWriteMBps,
		partialExit:    int64(math.Round(p.PartialExitUs * 1e3)),
		slumberExit:    msNs(p.SlumberExitMs), devslpExit: msNs(p.DevSlpExitMs),
		mdat: msNs(p.MdatMs), ready: msNs(p.ReadyMs), spinup: msNs(p.SpinupMs),
		spike: msNs(p.WakeSpikeMs), gc: msNs(p.GCMs),
		hipm: msNs(p.HipmPartialAfterMs), dipmP: msNs(p.DipmPartialAfterMs), dipmS: msNs(p.DipmSlumberAfterMs),
		dito: msNs(p.DitoMs), standbyAft: msNs(p.StandbyAfterS * 1e3),
		gcEvery:     p.GCEveryS * 1e9,
		devslpWorks: p.DevSlpWorks(), deso: p.DESO,
		noisy: !p.Noise.IsZero(),
	}
	if c.v5 <= 0 {
		c.v5 = 5
	}
	if c.v12 <= 0 {
		c.v12 = 12
	}
	peak := float64(p.PeakWriteW)
	c.activeRead = math.Min(peak, c.idle+p.ReadWPerMBps*p.MaxReadMBps)
	c.activeWrite = math.Min(peak, c.idle+p.WriteWPerMBps*p.MaxWriteMBps)
	if c.spike > 0 && c.spikeW == 0 {
		c.spike = 0
	}
	return c
}

// xferNs is how long the drive is busy moving size bytes at its max rate.
// Flush and trim only keep the drive awake.
func (c *compiled) xferNs(op workload.Op, size int) int64 {
	if size <= 0 {
		return 0
	}
	var ns float64
	switch op {
	case workload.OpRead:
		ns = float64(size) * c.nsPerByteRead
	case workload.OpWrite:
		ns = float64(size) * c.nsPerByteWrite
	default:
		return 0
	}
	return int64(max(1, min(ns, float64(time.Hour)))) // no request is longer; keeps deadlines finite
}

// advance runs the machine from m.t to to, emitting segments.
func (m *Model) advance(to int64) {
	for guard := 0; guard < 1<<22; guard++ {
		nt := m.nextEvent()
		if nt > to {
			break
		}
		if nt > m.t {
			m.emit(nt)
		}
		m.fire()
	}
	if to > m.t {
		m.emit(to)
	}
}

// nextEvent is the earliest time something changes, or never.
func (m *Model) nextEvent() int64 {
	n := int64(never)
	consider := func(x int64) {
		if x < n {
			n = x
		}
	}
	switch m.st {
	case powerstate.Wake, powerstate.SpinUp:
		consider(m.wakeEnd)
	case powerstate.Idle:
		if m.qh < len(m.q) {
			consider(max(m.q[m.qh].start, m.t))
		}
	case powerstate.Active:
		consider(max(m.q[m.qh].end, m.t))
	}
	if m.spikeUntil > 0 {
		consider(max(m.spikeUntil, m.t))
	}
	if m.gcUntil > 0 {
		consider(max(m.gcUntil, m.t))
	}
	if m.quiet {
		consider(m.tPartial)
		consider(m.tSlumber)
		consider(m.tAutoDevSlp)
		consider(m.tStandby)
		consider(m.tGC)
	}
	consider(m.pinRelease)
	return max(n, m.t)
}

// fire applies everything due at m.t. Each branch moves its own deadline
// past m.t, so advance always makes progress.
func (m *Model) fire() {
	t := m.t
	if (m.st == powerstate.Wake || m.st == powerstate.SpinUp) && m.wakeEnd <= t {
		m.st, m.wakeEnd = m.wakeTo, never
		m.maybeQuiet()
	}
	for m.st == powerstate.Idle || m.st == powerstate.Active {
		if m.st == powerstate.Active && m.q[m.qh].end <= t {
			m.qh++
			m.st = powerstate.Idle
			m.maybeQuiet()
			continue
		}
		if m.st == powerstate.Idle && m.qh < len(m.q) && m.q[m.qh].start <= t {
			m.st = powerstate.Active
			continue
		}
		break
	}
	if m.spikeUntil > 0 && m.spikeUntil <= t {
		m.spikeUntil = 0
	}
	if m.gcUntil > 0 && m.gcUntil <= t {
		m.gcUntil = 0
	}
	if m.quiet {
		if m.tPartial <= t {
			m.tPartial = never
			if m.st == powerstate.Idle {
				m.st = powerstate.Partial
			}
		}
		if m.tSlumber <= t {
			m.tSlumber = never
			if m.st == powerstate.Idle || m.st == powerstate.Partial {
				m.st = powerstate.Slumber
			}
		}
		if m.tAutoDevSlp <= t {
			m.tAutoDevSlp = never
			m.autoDevSlp = true
		}
		if m.tStandby <= t {
			m.tStandby = never
			if lowLink(m.st) {
				m.st, m.gcUntil = powerstate.Standby, 0
			}
		}
		if m.tGC <= t {
			m.tGC = never
			if lowLink(m.st) && m.gcLeft > 0 {
				m.gcLeft--
				m.gcUntil = t + m.c.gc
				m.tGC = m.gcUntil + m.expGC()
			}
		}
	}
	if m.pinRelease <= t {
		m.pin, m.pinRelease = false, never
	}
	m.checkDevSlp()
}

// checkDevSlp enters or leaves DevSlp as the pin (or the HBA) asks.
func (m *Model) checkDevSlp() {
	want := (m.pin || m.autoDevSlp) && m.c.devslpWorks && m.on
	switch {
	case m.st == powerstate.DevSlp && !want:
		m.startWake(m.c.devslpExit, true, m.devslpFrom)
	case m.st != powerstate.DevSlp && want && m.quiet && lowLink(m.st) && (!m.c.deso || m.st == powerstate.Slumber):
		m.devslpFrom, m.st, m.devslpAt = m.st, powerstate.DevSlp, m.t
		m.gcUntil = 0
		if m.pinRelease != never {
			m.pinRelease = max(m.pinRelease, m.t+m.c.mdat)
		}
	}
}

func (m *Model) startWake(d int64, spike bool, to powerstate.State) {
	m.st, m.wakeEnd, m.wakeTo = powerstate.Wake, m.t+d, to
	m.quiet = false
	if spike && m.c.spike > 0 {
		m.spikeUntil = m.t + m.c.spike
	}
}

// maybeQuiet arms the idle timers once nothing is outstanding.
func (m *Model) maybeQuiet() {
	if m.quiet || !m.on || m.outstanding > 0 || m.qh < len(m.q) {
		return
	}
	if m.st == powerstate.Wake || m.st == powerstate.SpinUp || m.st == powerstate.Active || m.st == powerstate.Off {
		return
	}
	m.armQuiet()
}

// armQuiet starts the idle timers at m.t under the current policy.
func (m *Model) armQuiet() {
	m.quiet = true
	m.disarmTimers()
	t, c := m.t, &m.c
	partial, slumber, dito := int64(-1), int64(-1), int64(-1)
	switch m.policy {
	case PolicyMediumPower:
		partial = c.hipm
	case PolicyMedPowerDIPM:
		partial, slumber = min(c.hipm, c.dipmP), c.dipmS
	case PolicyMinPowerPartial:
		partial, slumber, dito = min(c.hipm, c.dipmP), c.dipmS, c.dito
	case PolicyMinPower:
		partial, slumber, dito = c.dipmP, min(c.hipm, c.dipmS), c.dito
	}
	if slumber >= 0 && partial >= slumber {
		partial = -1
	}
	at := func(d int64) int64 {
		if d < 0 {
			return never
		}
		return t + d
	}
	m.tPartial, m.tSlumber, m.tAutoDevSlp = at(partial), at(slumber), at(dito)
	if c.hdd && c.standbyAft > 0 {
		m.tStandby = t + c.standbyAft
	}
	if c.gcEvery > 0 {
		m.tGC = t + m.expGC()
		m.gcLeft = gcPerIdle
	}
}

func (m *Model) disarmTimers() {
	m.tPartial, m.tSlumber, m.tAutoDevSlp, m.tStandby, m.tGC = never, never, never, never, never
}

func (m *Model) disarm() {
	m.quiet = false
	m.disarmTimers()
}

// gcPerIdle caps the GC bursts of one idle period: a drive runs out of
// garbage to collect (and a long idle stretch stays cheap to simulate).
const gcPerIdle = 16

func (m *Model) expGC() int64 {
	return max(1, int64(m.rng.ExpFloat64()*m.c.gcEvery))
}

// power returns the true per-rail power at m.t.
func (m *Model) power() (p5, p12 float64, gc bool) {
	c := &m.c
	split := func(total float64, spinning bool) (float64, float64) {
		if !c.hdd {
			return total, 0
		}
		if !spinning {
			return total, 0
		}
		return max(0, total-c.spindle), c.spindle
	}
	spinning := m.st != powerstate.Off && m.st != powerstate.Standby && m.st != powerstate.DevSlp && m.st != powerstate.SpinUp
	switch {
	case m.spikeUntil > m.t:
		a, b := split(c.spikeW, spinning)
		return a, b, false
	case m.gcUntil > m.t:
		a, b := split(c.gcW, spinning)
		return a, b, true
	}
	switch m.st {
	case powerstate.Off:
		return 0, 0, false
	case powerstate.SpinUp:
		return max(0, c.idle-c.spindle), c.spinupW, false
	case powerstate.Wake, powerstate.Idle:
		a, b := split(c.idle, true)
		return a, b, false
	case powerstate.Partial:
		a, b := split(c.partial, true)
		return a, b, false
	case powerstate.Slumber:
		a, b := split(c.slumber, true)
		return a, b, false
	case powerstate.DevSlp:
		return c.devslp, 0, false
	case powerstate.Standby:
		return c.standby, 0, false
	case powerstate.Active:
		total := c.activeRead
		if m.q[m.qh].op == workload.OpWrite {
			total = c.activeWrite
		}
		if !c.hdd {
			return total, 0, false
		}
		inc := total - c.idle
		return max(0, c.idle-c.spindle) + (1-c.share)*inc, c.spindle + c.share*inc, false
	}
	return 0, 0, false
}

func (m *Model) newSeg(start int64) seg {
	p5, p12, gc := m.power()
	return seg{start: start, end: start, st: m.st, gc: gc, io: m.outstanding > 0, p5: p5, p12: p12}
}

// emit extends the timeline from m.t to to in the current state.
func (m *Model) emit(to int64) {
	s := m.newSeg(m.t)
	last := &m.live[len(m.live)-1]
	if last.st == s.st && last.gc == s.gc && last.io == s.io && last.p5 == s.p5 && last.p12 == s.p12 {
		last.end = to
	} else {
		m.record(*last)
		s.end = to
		m.live = append(m.live, s)
	}
	m.t = to
	// Without renders nothing prunes; bound the history anyway.
	if n := len(m.live) - m.lh; n > 1<<20 {
		m.lh += n / 2
		m.compact()
	}
}

// prune drops live segments that end at or before t (never the open one).
func (m *Model) prune(t int64) {
	for m.lh < len(m.live)-1 && m.live[m.lh].end <= t {
		m.lh++
	}
	m.compact()
}

func (m *Model) compact() {
	if m.lh > 4096 && m.lh > len(m.live)/2 {
		n := copy(m.live, m.live[m.lh:])
		m.live = m.live[:n]
		m.lh = 0
	}
}

func (s seg) export() Segment {
	return Segment{Start: time.Duration(s.start), End: time.Duration(s.end), State: s.st, GC: s.gc, IO: s.io, P5: units.Watts(s.p5), P12: units.Watts(s.p12)}
}

// record hands a finished segment to the truth consumers.
func (m *Model) record(s seg) {
	if s.end <= s.start {
		return
	}
	if m.keepTruth {
		m.truth = append(m.truth, s.export())
	}
	m.writeTruth(s)
}

// writeTruth writes the part of s after what Finish already wrote.
func (m *Model) writeTruth(s seg) {
	if m.tw == nil || s.end <= m.truthFrom {
		return
	}
	s.start = max(s.start, m.truthFrom)
	m.tw.Write(s.export())
}
