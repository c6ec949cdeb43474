package analysis

import (
	"math"

	"github.com/idlewatt/idlewatt/analysis/chart"
	"github.com/idlewatt/idlewatt/capture"
	"github.com/idlewatt/idlewatt/units"
)

// peakWindowsS are the window lengths of PeakWindows, in seconds.
var peakWindowsS = [4]float64{1e-3, 10e-3, 100e-3, 1}

// metricSet is what is accumulated for a drive and again for each phase.
type metricSet struct {
	all      acc
	byAct    [3]acc // indexed by Activity
	hist     Histogram
	idleHist Histogram
	win      [4]float64
	winSeen  [4]bool
	io       ioAcc
	first    int64 // host time of the first sample, ns
	seen     bool
}

func (m *metricSet) add(p float64, a Activity) {
	m.all.add(p)
	m.byAct[a].add(p)
	m.hist.Add(p)
	if a == Idle {
		m.idleHist.Add(p)
	}
}

func (m *metricSet) window(k int, mean float64) {
	if !m.winSeen[k] || mean > m.win[k] {
		m.win[k], m.winSeen[k] = mean, true
	}
}

// ioAcc totals I/O events.
type ioAcc struct {
	ops, bytes, errs uint64
	byOp             [5]OpTotal // indexed by capture.Op
}

func (a *ioAcc) add(e capture.IOEvent) {
	a.ops++
	if e.Size > 0 {
		a.bytes += uint64(e.Size)
	}
	if e.Err {
		a.errs++
	}
	if int(e.Op) < len(a.byOp) {
		a.byOp[e.Op].Ops++
		if e.Size > 0 {
			a.byOp[e.Op].Bytes += uint64(e.Size)
		}
	}
}

// driveProc accumulates one drive's samples, in index order.
type driveProc struct {
	info       capture.DriveInfo
	rails      []int // channel indices
	clock      *Clock
	act        activityCursor
	ph         phaseCursor
	phaseNames []string
	phaseT     []int64 // host time each phase first started
	total      metricSet
	phases     []*metricSet // by phase index
	wins       [4]*slidingMax
	cls        StateClassifier
	states     [numStates]acc
	dsHist     Histogram // samples classified DevSlp

	// DEVSLP pin spans (host time) and the per-cycle latency bookkeeping.
	pin        activityCursor // Busy = asserted
	pinFloor   activityCursor // Busy = asserted and past the entry allowance
	pinHist    Histogram      // samples while pinFloor is Busy
	pinSource  string
	cycles     int
	pinN       uint64 // samples with the pin asserted
	pinSpanIdx int
	inPin      bool
	entered    bool
	awaitExit  bool
	pinEnd     int64
	entries    acc // ms
	exits      acc // ms
	nEntered   int

	dropped, late uint64
	gaps          int
	lastMissEnd   uint64

	dec         *chart.Decimator // power envelope for charts
	t0          float64          // host ns of time zero (meter index 0)
	first, last int64            // host ns of the first and last sample processed
	any         bool
}

func newDriveProc(info capture.DriveInfo, rails []int, c *Clock, busy []span, settle int64, pins []span, pinAllowance int64, phases *phaseSet, cls StateClassifier) *driveProc {
	d := &driveProc{info: info, rails: rails, clock: c, cls: cls}
	d.act = activityCursor{spans: busy, settle: settle}
	d.pin = activityCursor{spans: pins}
	var floor []span
	for _, sp := range pins {
		if sp.s+pinAllowance <= sp.e {
			floor = append(floor, span{sp.s + pinAllowance, sp.e})
		}
	}
	d.pinFloor = activityCursor{spans: floor}
	d.ph, d.phaseNames = phases.cursor(info.Port)
	d.phases = make([]*metricSet, len(d.phaseNames))
	d.phaseT = make([]int64, len(d.phaseNames))
	for i := range d.phases {
		d.phases[i] = &metricSet{}
	}
	for k, w := range peakWindowsS {
		d.wins[k] = newSlidingMax(int(math.Round(w * c.RateHz)))
	}
	d.lastMissEnd = math.MaxUint64
	return d
}

// run processes consecutive samples starting at index start.
func (d *driveProc) run(start uint64, ps []float64) {
	dt := d.clock.NsPerSample
	t0 := d.clock.HostF(float64(start))
	k := 0
	for k < len(ps) {
		t := int64(t0 + dt*float64(k))
		a := d.act.at(t)
		until := d.act.next(t)
		pi := d.ph.at(t)
		until = min(until, d.ph.next(t))
		pinA := d.pin.at(t)
		until = min(until, d.pin.next(t))
		floorA := d.pinFloor.at(t)
		until = min(until, d.pinFloor.next(t))
		// Samples k..end-1 share activity, phase and pin state.
		end := len(ps)
		if until < int64(t0+dt*float64(len(ps))) {
			end = int(math.Ceil((float64(until) - t0) / dt))
			if end <= k {
				end = k + 1
			}
			end = min(end, len(ps))
		}
		var pm *metricSet
		if pi >= 0 {
			pm = d.phases[pi]
			if !pm.seen {
				pm.seen, pm.first = true, t
			}
		}
		if !d.total.seen {
			d.total.seen, d.total.first = true, t
		}
		d.pinEdge(pinA != Idle, t)
		if pinA != Idle {
			d.pinN += uint64(end - k)
		}
		for j := k; j < end; j++ {
			p := ps[j]
			d.total.add(p, a)
			if pm != nil {
				pm.add(p, a)
			}
			for w, sm := range d.wins {
				if m, ok := sm.push(p); ok {
					d.total.window(w, m)
					if pm != nil {
						pm.window(w, m)
					}
				}
			}
			if floorA == Busy {
				d.pinHist.Add(p)
			}
			st := StateUnknown
			if d.cls != nil {
				tj := int64(t0 + dt*float64(j))
				st = d.cls.Classify(Sample{Index: start + uint64(j), Host: tj, Power: units.Watts(p), Activity: a, DevSlpPin: pinA != Idle})
				d.latency(st, tj)
			}
			if st == StateUnknown {
				st = StateIdle
				if a == Busy {
					st = StateActive
				}
			}
			d.states[st].add(p)
			if st == StateDevSlp {
				d.dsHist.Add(p)
			}
		}
		if d.dec != nil {
			d.dec.AddUniform((t0+dt*float64(k)-d.t0)/1e9, dt/1e9, ps[k:end])
		}
		if !d.any {
			d.any, d.first = true, t
		}
		d.last = int64(t0 + dt*float64(end-1))
		k = end
	}
}

// pinEdge tracks DEVSLP pin assertions for cycle counting and latencies.
func (d *driveProc) pinEdge(asserted bool, t int64) {
	if asserted == d.inPin {
		return
	}
	d.inPin = asserted
	sp := d.pin.spans[d.pin.i]
	if asserted {
		d.cycles++
		d.entered = false
		d.awaitExit = false
		return
	}
	d.pinEnd = sp.e
	d.awaitExit = d.entered
}

func (d *driveProc) latency(st State, t int64) {
	if d.inPin && !d.entered && st == StateDevSlp {
		d.entered = true
		d.nEntered++
		d.entries.add(float64(t-d.pin.spans[d.pin.i].s) / 1e6)
	}
	if !d.inPin && d.awaitExit && st != StateDevSlp {
		d.awaitExit = false
		d.exits.add(float64(t-d.pinEnd) / 1e6)
	}
}

// missing records count missing samples from index start.
func (d *driveProc) missing(start, count uint64) {
	if count == 0 {
		return
	}
	d.dropped += count
	if start != d.lastMissEnd {
		d.gaps++
	}
	d.lastMissEnd = start + count
	for _, w := range d.wins {
		w.reset()
	}
	if d.dec != nil {
		d.dec.Gap((d.clock.HostF(float64(start))-d.t0)/1e9, (d.clock.HostF(float64(start+count))-d.t0)/1e9)
	}
	if g, ok := d.cls.(GapObserver); ok {
		g.Gap(start, count)
	}
}
