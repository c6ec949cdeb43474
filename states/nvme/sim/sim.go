package sim

import (
	"fmt"
	"sort"
	"time"

	"github.com/idlewatt/idlewatt/states/nvme"
	"github.com/idlewatt/idlewatt/units"
)

// Profile is a simulated NVMe drive.
type Profile struct {
	Name   string
	Source string // where the power-state table comes from
	// Identify holds the power-state table the drive reports (what the
	// host's PlanAPST reads).
	Identify *nvme.Identify
	// OperationalIdle is the draw in each operational state with nothing
	// to do (link in L1.2); non-operational states draw their declared
	// MaxPower.
	OperationalIdle []units.Watts
	Active          units.Watts // while serving an I/O
	// Link: extra draw while the link is in L0 or L1 (L1.2 adds nothing),
	// the idle time before L1, and the exit latencies from L1 and L1.2.
	LinkL0, LinkL1  units.Watts
	L1Idle          time.Duration
	L1Exit, L12Exit time.Duration
	Assumed         []string
}

// Link is the PCIe link state.
type Link string

const (
	L0  Link = "L0"
	L1  Link = "L1"
	L12 Link = "L1.2"
)

// Transition is one change of power state or link state, the model's
// ground truth.
type Transition struct {
	At       time.Duration `json:"at_ns"`
	PS       int           `json:"ps"`
	Link     Link          `json:"link"`
	Power    units.Watts   `json:"power_w"`
	Entering bool          `json:"entering"` // an APST entry in progress (at the source state's power)
}

// Drive is one simulated drive. Times are on the caller's clock and must
// not go backwards between calls that change state.
type Drive struct {
	p           Profile
	apste       bool
	table       []nvme.APSTEntry
	l1, l12     bool
	outstanding int
	idleFrom    time.Duration // the last completion (when outstanding == 0)
	busyFrom    time.Duration // when the current I/O burst became active
	wakeUntil   time.Duration // exit latency ends
	linkFrom    time.Duration // the link's idle timer restarts at an ASPM change
	truth       []Transition
	truthTo     time.Duration // the truth log covers up to here
	// entryScale, exitScale: the drive's actual latencies as a fraction
	// of the declared ones (0 = 1, exactly as declared).
	entryScale, exitScale float64
}

// SetLatencyScale makes the drive take scale × its declared entry and exit
// latencies (the descriptors are maxima: a drive within spec takes less;
// over 1 is a drive that breaks its own descriptor). 0 means 1.
func (d *Drive) SetLatencyScale(entry, exit float64) { d.entryScale, d.exitScale = entry, exit }

func scaled(v uint32, f float64) time.Duration {
	if f <= 0 {
		return us(v)
	}
	return time.Duration(float64(us(v)) * f)
}

func (d *Drive) entryLat(ps int) time.Duration {
	return scaled(d.p.Identify.PowerStates[ps].EntryLatencyUs, d.entryScale)
}

// New returns a drive in PS0, idle since time 0, APST off, link ASPM off.
func New(p Profile) *Drive { return &Drive{p: p} }

// Profile returns the drive's profile.
func (d *Drive) Profile() Profile { return d.p }

// SetAPST programs the APST feature as the host's Set Features 0Ch does.
// It counts as activity: the drive is back in PS0 at at.
func (d *Drive) SetAPST(at time.Duration, enabled bool, table []nvme.APSTEntry) {
	d.record(at)
	d.apste, d.table = enabled, append([]nvme.APSTEntry(nil), table...)
	if d.outstanding == 0 {
		d.idleFrom = at
	}
}

// SetASPM sets which link states the host enabled.
func (d *Drive) SetASPM(at time.Duration, l1, l12 bool) {
	d.record(at)
	d.l1, d.l12 = l1 || l12, l12
	d.linkFrom = at // the link re-enters L1 after L1Idle; APST timers go on
}

// state is where an idle drive is at time t (outstanding == 0).
type state struct {
	ps       int
	entering bool
	link     Link
	since    time.Duration // start of this power state (or entry)
	enterEnd time.Duration // end of the entry in progress
}

func us(v uint32) time.Duration { return time.Duration(v) * time.Microsecond }

// idleState walks the APST table from PS0 at idleFrom to time t.
func (d *Drive) idleState(t time.Duration) state {
	s := state{ps: 0, since: d.idleFrom, link: L0}
	if d.apste {
		seen := map[int]bool{0: true}
		for cur, at := 0, d.idleFrom; cur < len(d.table); {
			e := d.table[cur]
			if e.ITPTms == 0 || e.ITPS >= len(d.p.Identify.PowerStates) || seen[e.ITPS] {
				break
			}
			start := at + time.Duration(e.ITPTms)*time.Millisecond
			if t < start {
				break
			}
			end := start + d.entryLat(e.ITPS)
			if t < end {
				s = state{ps: cur, entering: true, since: start, enterEnd: end}
				break
			}
			seen[e.ITPS] = true
			cur, at = e.ITPS, end
			s = state{ps: cur, since: end}
		}
	}
	switch idle := t - max(d.idleFrom, d.linkFrom); {
	case d.l12 && idle >= d.p.L1Idle:
		s.link = L12
	case d.l1 && idle >= d.p.L1Idle:
		s.link = L1
	default:
		s.link = L0
	}
	return s
}

func (d *Drive) statePower(ps int) units.Watts {
	p := d.p.Identify.PowerStates[ps]
	if p.NonOperational {
		return p.MaxPower
	}
	if ps < len(d.p.OperationalIdle) {
		return d.p.OperationalIdle[ps]
	}
	return p.MaxPower
}

func (d *Drive) linkPower(l Link) units.Watts {
	switch l {
	case L0:
		return d.p.LinkL0
	case L1:
		return d.p.LinkL1
	}
	return 0
}

// Power returns the draw at time t. A time before the I/O in progress was
// issued (an emulator rendering late) gets the idle period's draw.
func (d *Drive) Power(t time.Duration) units.Watts {
	if d.outstanding > 0 && t >= d.busyFrom {
		if t < d.wakeUntil {
			return d.statePower(0) + d.p.LinkL0
		}
		return d.p.Active + d.p.LinkL0
	}
	s := d.idleState(t)
	return d.statePower(s.ps) + d.linkPower(s.link)
}

// State returns the power state and link state at t (an entry in
// progress reports the source state with entering set).
func (d *Drive) State(t time.Duration) (ps int, entering bool, link Link) {
	if d.outstanding > 0 && t >= d.busyFrom {
		return 0, false, L0
	}
	s := d.idleState(t)
	return s.ps, s.entering, s.link
}

// IO tells the drive an I/O was issued at at and returns how long it waits
// before the drive serves it: the rest of an entry in progress, the exit
// latency of a non-operational state, and the link's exit latency.
func (d *Drive) IO(at time.Duration) time.Duration {
	d.record(at)
	var wait time.Duration
	if d.outstanding == 0 {
		s := d.idleState(at)
		if s.entering {
			wait += s.enterEnd - at
			s.ps = d.entryTarget(s.ps)
		}
		if p := d.p.Identify.PowerStates[s.ps]; p.NonOperational {
			wait += scaled(p.ExitLatencyUs, d.exitScale)
		}
		switch s.link {
		case L12:
			wait += d.p.L12Exit
		case L1:
			wait += d.p.L1Exit
		}
		d.busyFrom, d.wakeUntil = at, at+wait
	} else if at < d.wakeUntil {
		wait = d.wakeUntil - at
	}
	d.outstanding++
	d.truth = append(d.truth, Transition{At: at, PS: 0, Link: L0, Power: d.Power(at)})
	d.truthTo = at
	return wait
}

func (d *Drive) entryTarget(ps int) int {
	if ps < len(d.table) {
		return d.table[ps].ITPS
	}
	return ps
}

// IODone tells the drive an I/O completed at at.
func (d *Drive) IODone(at time.Duration) error {
	if d.outstanding == 0 {
		return fmt.Errorf("IODone at %v with nothing outstanding", at)
	}
	d.outstanding--
	if d.outstanding == 0 {
		d.idleFrom, d.truthTo = at, at
		d.truth = append(d.truth, Transition{At: at, PS: 0, Link: L0, Power: d.Power(at)})
	}
	return nil
}

// record closes the idle period before at into the truth log.
func (d *Drive) record(at time.Duration) {
	if d.outstanding > 0 {
		return
	}
	for _, tr := range d.IdleTransitions(max(d.idleFrom, d.truthTo), at) {
		if n := len(d.truth); n > 0 {
			if l := d.truth[n-1]; l.PS == tr.PS && l.Link == tr.Link && l.Entering == tr.Entering {
				continue
			}
		}
		d.truth = append(d.truth, tr)
	}
	d.truthTo = max(d.truthTo, at)
}

// IdleTransitions lists the state changes of the current idle period
// between from and to (empty while an I/O is outstanding).
func (d *Drive) IdleTransitions(from, to time.Duration) []Transition {
	if d.outstanding > 0 || to <= from {
		return nil
	}
	// Candidate change times: each APST step start/end and the L1 entry.
	times := []time.Duration{from, max(d.idleFrom, d.linkFrom) + d.p.L1Idle}
	if d.apste {
		seen := map[int]bool{0: true}
		for cur, at := 0, d.idleFrom; cur < len(d.table); {
			e := d.table[cur]
			if e.ITPTms == 0 || e.ITPS >= len(d.p.Identify.PowerStates) || seen[e.ITPS] {
				break
			}
			start := at + time.Duration(e.ITPTms)*time.Millisecond
			end := start + d.entryLat(e.ITPS)
			times = append(times, start, end)
			seen[e.ITPS] = true
			cur, at = e.ITPS, end
		}
	}
	sort.Slice(times, func(i, j int) bool { return times[i] < times[j] })
	var out []Transition
	var last *Transition
	for _, t := range times {
		if t < from || t >= to {
			continue
		}
		s := d.idleState(t)
		tr := Transition{At: t, PS: s.ps, Link: s.link, Power: d.statePower(s.ps) + d.linkPower(s.link), Entering: s.entering}
		if last != nil && last.PS == tr.PS && last.Link == tr.Link && last.Entering == tr.Entering {
			continue
		}
		out = append(out, tr)
		last = &out[len(out)-1]
	}
	return out
}

// Truth returns the recorded transitions up to the last event.
func (d *Drive) Truth() []Transition { return d.truth }

// MeanIdlePower is the average draw over [from, to) of an idle drive: the
// value a measurement of that window should recover.
func (d *Drive) MeanIdlePower(from, to time.Duration) units.Watts {
	tr := d.IdleTransitions(from, to)
	if len(tr) == 0 {
		return d.Power(from)
	}
	var e float64
	for i, x := range tr {
		end := to
		if i+1 < len(tr) {
			end = tr[i+1].At
		}
		e += float64(x.Power) * (end - x.At).Seconds()
	}
	return units.Watts(e / (to - from).Seconds())
}
