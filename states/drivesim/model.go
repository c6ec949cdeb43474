package drivesim

import (
	"fmt"
	"io"
	"math"
	"math/rand/v2"
	"sync"
	"time"

	"github.com/idlewatt/idlewatt/meter"
	"github.com/idlewatt/idlewatt/states/powerstate"
	"github.com/idlewatt/idlewatt/units"
	"github.com/idlewatt/idlewatt/workload"
)

// Options configure a Model. The zero value is usable.
type Options struct {
	Seed   int64  // noise and GC timing; same seed + same calls = same samples
	Policy string // initial ALPM policy; "" = max_performance (a link after power-up has no LPM)
	V5     units.Volts
	V12    units.Volts // rail voltages reported with the samples; 0 = 5 V / 12 V
	Off    bool        // start powered off (SetPower(at, true) turns it on)
	// KeepTruth keeps every segment in memory for Truth, StateAt and
	// MeanPower over the whole run. Without it those see only the short
	// history Render still needs.
	KeepTruth bool
	// TruthOut, if set, receives the truth as JSON lines (see TruthWriter)
	// as segments end; call Finish at the end of the run.
	TruthOut io.Writer
	Port     int // written in the truth header only
}

// Model is a simulated drive. It implements meter.SimDrive. All methods are
// safe for concurrent use; see doc.go for the timing rules.
type Model struct {
	mu sync.Mutex
	p  Profile
	c  compiled

	seedMix uint64
	rng     *rand.Rand // GC timing only; noise is counter-based
	policy  string

	// The state machine has advanced to t (ns on the emulator clock).
	t           int64
	st          powerstate.State
	on          bool
	wakeEnd     int64
	wakeTo      powerstate.State
	spikeUntil  int64
	gcUntil     int64
	q           []xfer // transfers scheduled, in order; q[qh:] pending
	qh          int
	busyEnd     int64
	outstanding int
	quiet       bool // no command outstanding: the idle timers below run
	tPartial    int64
	tSlumber    int64
	tAutoDevSlp int64
	tStandby    int64
	tGC         int64
	gcLeft      int // GC bursts left in this idle period
	pin         bool
	pinRelease  int64 // deassert takes effect here (MDAT), or never
	autoDevSlp  bool  // the HBA's own DevSlp request under min_power*
	devslpAt    int64
	devslpFrom  powerstate.State

	live   []seg // segments from the render cursor on; the last is open
	lh     int
	cursor int64

	// The noise model's generators per rail (5 V, 12 V) at rate nzRate,
	// and Render's scratch (noise model only).
	nz      [2]*noiseGen
	nzRate  float64
	x5, x12 []float64

	keepTruth bool
	truth     []Segment
	ioStart   int64    // host-given time the current outstanding span began
	ioSpans   []IOSpan // with KeepTruth
	tw        *TruthWriter
	truthFrom int64 // segments before this were already written by Finish
}

const never = math.MaxInt64

// maxTime bounds event times (146 years) so deadlines computed from them
// cannot overflow.
const maxTime = 1 << 62

type xfer struct {
	start, end int64
	op         workload.Op
}

type seg struct {
	start, end int64
	st         powerstate.State
	gc, io     bool
	p5, p12    float64
}

var _ meter.SimDrive = (*Model)(nil)

// New returns a model of p, powered on and active idle at time 0.
func New(p Profile, opt Options) (*Model, error) {
	if err := p.Validate(); err != nil {
		return nil, err
	}
	pol, err := validPolicy(opt.Policy)
	if err != nil {
		return nil, err
	}
	m := &Model{p: p, c: compile(p, opt), policy: pol, keepTruth: opt.KeepTruth}
	m.seedMix = splitmix(uint64(opt.Seed) ^ 0x6a09e667f3bcc909)
	m.rng = rand.New(rand.NewPCG(uint64(opt.Seed), 0x9e3779b97f4a7c15))
	m.wakeEnd, m.pinRelease = never, never
	if opt.TruthOut != nil {
		m.tw = NewTruthWriter(opt.TruthOut, TruthHeader{Profile: p.Name, Seed: opt.Seed, Port: opt.Port})
	}
	if opt.Off {
		m.st = powerstate.Off
		m.disarm()
	} else {
		m.on, m.st = true, powerstate.Idle
		m.armQuiet()
	}
	m.live = append(m.live, m.newSeg(0))
	return m, nil
}

// Profile returns the model's profile.
func (m *Model) Profile() Profile { return m.p }

// Render implements meter.SimDrive. t0 must not go backwards between calls
// by more than the short history kept (segments that end before the previous
// call's t0 are gone).
func (m *Model) Render(t0 time.Duration, rate units.Hertz, v5 []units.Volts, i5 []units.Amps, v12 []units.Volts, i12 []units.Amps) {
	n := min(len(i5), len(v5), len(v12), len(i12))
	if n == 0 || !(rate > 0) {
		return
	}
	dt := 1e9 / float64(rate)
	start := float64(t0)
	end := start + float64(n)*dt
	m.mu.Lock()
	defer m.mu.Unlock()
	m.advance(int64(min(math.Ceil(end), maxTime)))
	hist := 0
	if m.c.noisy {
		m.noiseAt(float64(rate))
		hist = m.nz[0].history()
	}
	m.prune(int64(start - float64(hist)*dt))
	if int64(end) > m.cursor {
		m.cursor = int64(end)
	}
	segs := m.live[m.lh:]
	base := int64(math.Round(start / dt))
	V5, V12 := units.Volts(m.c.v5), units.Volts(m.c.v12)
	for k := range n {
		v5[k], v12[k] = V5, V12
	}
	sig5, sig12 := m.c.sigma, m.c.sigma
	if !m.c.hdd {
		sig12 = 0
	}
	if m.c.noisy {
		m.renderNoisy(segs, start, dt, base, hist, sig5, sig12, i5[:n], i12[:n])
		return
	}
	means(segs, start, dt, 1/m.c.v5, 1/m.c.v12, i5[:n], i12[:n])
	tab := &gaussTable
	for k := range n {
		h := splitmix(m.seedMix + uint64(base) + uint64(k))
		i5[k] = units.Amps(float64(i5[k]) + sig5*float64(tab[h&gaussMask]))
		i12[k] = units.Amps(float64(i12[k]) + sig12*float64(tab[(h>>32)&gaussMask]))
	}
}

// means writes the drive's mean current on each rail over sample k's
// interval [start + k·dt, start + (k+1)·dt) into c5[k] and c12[k], from
// the segments segs (which must cover the samples; before the first one,
// its power stands).
func means[T ~float64](segs []seg, start, dt, inv5, inv12 float64, c5, c12 []T) {
	n := len(c5)
	si := 0
	for k := 0; k < n; {
		a := start + float64(k)*dt
		for si < len(segs)-1 && float64(segs[si].end) <= a {
			si++
		}
		s := &segs[si]
		kEnd := n
		if si < len(segs)-1 {
			kEnd = min(n, int((float64(s.end)-start)/dt))
		}
		var x5, x12 float64
		if kEnd > k {
			x5, x12 = s.p5*inv5, s.p12*inv12
		} else {
			// Sample k straddles segment boundaries: average over its
			// interval, as an averaging ADC would.
			b := a + dt
			var e5, e12, cov float64
			parts, only := 0, si
			for j := si; j < len(segs); j++ {
				sa := max(a, float64(segs[j].start))
				sb := b
				if j < len(segs)-1 {
					sb = min(b, float64(segs[j].end))
				}
				if sb > sa {
					parts, only = parts+1, j
					e5 += segs[j].p5 * (sb - sa)
					e12 += segs[j].p12 * (sb - sa)
					cov += sb - sa
				}
				if sb >= b {
					break
				}
			}
			switch {
			case parts == 1: // exact, whatever the chunking
				x5, x12 = segs[only].p5*inv5, segs[only].p12*inv12
			case cov > 0:
				x5, x12 = e5/cov*inv5, e12/cov*inv12
			}
			kEnd = k + 1
		}
		for ; k < kEnd; k++ {
			c5[k], c12[k] = T(x5), T(x12)
		}
	}
}

// noiseAt makes the rails' noise generators for rate hz (once per rate).
func (m *Model) noiseAt(hz float64) {
	if m.nzRate == hz && m.nz[0] != nil {
		return
	}
	m.nzRate = hz
	for r := range m.nz {
		m.nz[r] = newNoiseGen(m.p.Noise, hz, splitmix(m.seedMix^(0x7f4a7c159e3779b9*uint64(r+1))))
	}
}

// renderNoisy is Render's last step with a noise model: the drive's mean
// current plus white noise, through the sensor's bandwidth (from hist
// samples before the first), then the gain and the added components. A
// rail without noise (12 V of a 5 V drive) reads its current exactly.
func (m *Model) renderNoisy(segs []seg, start, dt float64, base int64, hist int, sig5, sig12 float64, i5, i12 []units.Amps) {
	n := len(i5)
	if cap(m.x5) < hist+n {
		m.x5, m.x12 = make([]float64, hist+n), make([]float64, hist+n)
	}
	x5, x12 := m.x5[:hist+n], m.x12[:hist+n]
	means(segs, start-float64(hist)*dt, dt, 1/m.c.v5, 1/m.c.v12, x5, x12)
	first := base - int64(hist)
	for j := range x5 {
		h := splitmix(m.seedMix + uint64(first+int64(j)))
		x5[j] += sig5 * gauss(h)
		x12[j] += sig12 * gauss(h>>32)
	}
	m.nz[0].render(base, x5, i5)
	if sig12 == 0 {
		for k := range i12 {
			i12[k] = units.Amps(x12[hist+k])
		}
		return
	}
	m.nz[1].render(base, x12, i12)
}

// SetDevSlp implements meter.SimDrive.
func (m *Model) SetDevSlp(at time.Duration, asserted bool) {
	m.mu.Lock()
	defer m.mu.Unlock()
	t := m.catchUp(at)
	switch {
	case asserted && !m.pin:
		m.pin, m.pinRelease = true, never
	case asserted:
		m.pinRelease = never // re-asserted before a pending release
	case m.pin && m.pinRelease == never:
		// MDAT: once in DevSlp the drive stays at least MDAT.
		rel := t
		if m.st == powerstate.DevSlp {
			rel = max(t, m.devslpAt+m.c.mdat)
		}
		m.pinRelease = rel
	}
	m.fire()
}

// SetPower implements meter.SimDrive.
func (m *Model) SetPower(at time.Duration, on bool) {
	m.mu.Lock()
	defer m.mu.Unlock()
	t := m.catchUp(at)
	switch {
	case !on && m.on:
		m.on, m.st = false, powerstate.Off
		m.qh, m.q = 0, m.q[:0]
		if m.outstanding > 0 {
			m.endIO(t)
		}
		m.busyEnd, m.outstanding = t, 0
		m.spikeUntil, m.gcUntil, m.autoDevSlp = 0, 0, false
		m.wakeEnd = never
		m.disarm()
	case on && !m.on:
		m.on = true
		if m.c.hdd {
			m.st, m.wakeEnd, m.wakeTo = powerstate.SpinUp, t+m.c.spinup, powerstate.Idle
		} else {
			m.startWake(m.c.ready, true, powerstate.Idle)
		}
	}
	m.fire()
}

// SetPolicy sets the host's ALPM policy at emulator time at. Like libata,
// a change resets a link that sits in Partial or Slumber (it wakes with the
// state's exit latency); the idle timers restart under the new policy.
func (m *Model) SetPolicy(at time.Duration, policy string) error {
	pol, err := validPolicy(policy)
	if err != nil {
		return err
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	m.catchUp(at)
	m.policy = pol
	if pol != PolicyMinPower && pol != PolicyMinPowerPartial {
		m.autoDevSlp = false
	}
	switch {
	case m.st == powerstate.Partial:
		m.startWake(m.c.partialExit, false, powerstate.Idle)
	case m.st == powerstate.Slumber:
		m.startWake(m.c.slumberExit, true, powerstate.Idle)
	case m.quiet:
		m.armQuiet()
	}
	m.fire()
	return nil
}

// Policy returns the current ALPM policy.
func (m *Model) Policy() string {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.policy
}

// IO tells the model a request was issued at emulator time at. It returns
// how long the request must wait before the drive can serve it (the exit
// latency of the state it found the drive in; 0 if awake). Every IO must be
// followed by an IODone: the idle timers run only while nothing is
// outstanding. A powered-off drive returns 0 and ignores the request.
func (m *Model) IO(at time.Duration, op workload.Op, size int) (wait time.Duration) {
	w, _, _ := m.issue(at, op, size)
	return w
}

// ErrPoweredOff is returned by Target when the simulated drive has no power.
var ErrPoweredOff = fmt.Errorf("drivesim: drive is powered off")

// issue returns the wake wait (until the drive can start serving the
// request) and the service time (until its transfer has ended: the wake,
// the transfers queued before it and its own), both from at.
func (m *Model) issue(at time.Duration, op workload.Op, size int) (wait, service time.Duration, on bool) {
	m.mu.Lock()
	defer m.mu.Unlock()
	t := m.catchUp(at)
	if !m.on {
		return 0, 0, false
	}
	if m.outstanding == 0 {
		m.ioStart = int64(at)
	}
	m.outstanding++
	m.quiet, m.autoDevSlp = false, false
	m.gcUntil = 0 // host I/O pre-empts background GC
	m.disarm()
	switch m.st {
	case powerstate.Partial:
		m.startWake(m.c.partialExit, false, powerstate.Idle)
	case powerstate.Slumber:
		m.startWake(m.c.slumberExit, true, powerstate.Idle)
	case powerstate.DevSlp:
		m.startWake(m.c.devslpExit, true, powerstate.Idle)
	case powerstate.Standby:
		m.st, m.wakeEnd, m.wakeTo = powerstate.SpinUp, t+m.c.spinup, powerstate.Idle
	case powerstate.Wake, powerstate.SpinUp:
		m.wakeTo = powerstate.Idle
	}
	ready := t
	if m.st == powerstate.Wake || m.st == powerstate.SpinUp {
		ready = m.wakeEnd
	}
	end := ready
	if d := m.c.xferNs(op, size); d > 0 {
		s := max(ready, m.busyEnd)
		if m.qh == len(m.q) {
			m.qh, m.q = 0, m.q[:0]
		}
		m.q = append(m.q, xfer{s, s + d, op})
		m.busyEnd = s + d
		end = s + d
	}
	m.fire()
	return time.Duration(ready - t), time.Duration(end - t), true
}

// IODone tells the model a request issued with IO completed at at.
func (m *Model) IODone(at time.Duration, op workload.Op, size int) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.catchUp(at)
	if m.outstanding > 0 {
		m.outstanding--
		if m.outstanding == 0 {
			m.endIO(int64(at))
		}
	}
	m.maybeQuiet()
	m.fire()
}

// endIO records the outstanding span that ends at the host-given time at
// (not the model's own time, which may have run past it while the host
// was slow to report the completion).
func (m *Model) endIO(at int64) {
	sp := IOSpan{Start: time.Duration(m.ioStart), End: time.Duration(max(at, m.ioStart))}
	if m.keepTruth {
		m.ioSpans = append(m.ioSpans, sp)
	}
	if m.tw != nil {
		m.tw.WriteIO(sp)
	}
}

// IOSpans returns the outstanding-request spans recorded so far (with
// Options.KeepTruth), at the host-given times.
func (m *Model) IOSpans() []IOSpan {
	m.mu.Lock()
	defer m.mu.Unlock()
	return append([]IOSpan(nil), m.ioSpans...)
}

// Advance runs the model to emulator time to without rendering (tests,
// and the end of a run before Finish).
func (m *Model) Advance(to time.Duration) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.catchUp(to)
}

// Now returns the time the model has advanced to.
func (m *Model) Now() time.Duration {
	m.mu.Lock()
	defer m.mu.Unlock()
	return time.Duration(m.t)
}

// catchUp advances to at, or applies the event at the current time if at
// lies in the past (already rendered or passed by another event).
func (m *Model) catchUp(at time.Duration) int64 {
	t := min(int64(at), maxTime)
	if t > m.t {
		m.advance(t)
	}
	return m.t
}
