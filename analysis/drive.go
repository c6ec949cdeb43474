package analysis

import (
	"math"
	"sort"

	"github.com/idlewatt/idlewatt/analysis/decimate"
	"github.com/idlewatt/idlewatt/capture"
	"github.com/idlewatt/idlewatt/hostclock"
	"github.com/idlewatt/idlewatt/internal/stat"
	"github.com/idlewatt/idlewatt/units"
)

// peakWindowsS are the window lengths of PeakWindows, in seconds.
var peakWindowsS = [4]float64{1e-3, 10e-3, 100e-3, 1}

// metricSet is what is accumulated for a drive and again for each phase.
//
// While streaming, each sample goes into exactly one metricSet — its phase's,
// or the drive's outside-phase set — and only into byAct and one histogram:
// hist holds the non-idle samples and idleHist the idle ones. collect then
// derives all, folds idleHist into hist and builds the drive total by merging
// the sets, so per sample there is one histogram update instead of up to four.
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
	dpeak    decPeak     // with a sensor response learned: the highest sample read through its inverse (pole.go)
	quiet    blockSeries // quiet samples in active idle (see estimate.go), not folded
	rest     blockSeries // with a classifier, quiet samples in any state (without, quiet is that)
	mp       blockSeries // quiet samples under max_performance (activeIdle's when idle merged with a lower level)
}

// addRun accumulates samples that share activity a and returns their
// summary.
func (m *metricSet) addRun(ps []float64, a Activity) acc {
	h := &m.hist
	if a == Idle {
		h = &m.idleHist
	}
	r := summarise(ps, h)
	m.byAct[a].merge(r)
	return r
}

// collected turns a streaming set into a finished one (see metricSet).
func (m *metricSet) collected() {
	m.all = acc{}
	for _, a := range m.byAct {
		m.all.merge(a)
	}
	m.hist.Merge(&m.idleHist)
}

// fold merges a collected set's samples into m.
func (m *metricSet) fold(o *metricSet) {
	m.all.merge(o.all)
	m.dpeak.fold(o.dpeak)
	for a := range m.byAct {
		m.byAct[a].merge(o.byAct[a])
	}
	m.hist.Merge(&o.hist)
	m.idleHist.Merge(&o.idleHist)
	for w := range m.win {
		if o.winSeen[w] {
			m.window(w, o.win[w])
		}
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
	phaseT     []int64      // host time each phase first started
	total      metricSet    // after collect; while streaming only io, first and seen
	outside    metricSet    // samples outside any phase, while streaming
	phases     []*metricSet // by phase index
	wins       *peakWins
	cls        StateClassifier
	hum        *humModel // the mains hum, subtracted from every sample first (nil: none)
	// pole is the sensor's response, learned (nil: none, or not resolved
	// from zero); dc reads the samples through its inverse for the peak.
	pole *sensorPole
	dc   deconv
	// unlearned is why the drive's levels could not be learned (state
	// detection on): its residency, state power and active idle are null.
	unlearned   string
	sink        SampleSink // Options.Samples; nil = none
	sinkSeen    bool
	sinkLast    State
	states      [numStates]acc
	dsHist      Histogram        // samples classified DevSlp
	hostBuf     []hostclock.Time // scratch: classify's host times
	stateBuf    []State          // scratch: classify's labels
	quiet       blockSeries      // the drive's quiet samples, in time order
	rest        blockSeries      // with a classifier, the drive's quiet samples in any state
	mp          blockSeries      // the drive's quiet samples under max_performance
	pol         policyCursor     // this port's ALPM policies (addMaxPerf)
	lsb         []railLSB        // per rail, for the resolution and calibration terms
	noise       stat.Variogram   // every quiet sample, any state (quietNoise)
	spans       spanNoise        // with a classifier, quiet spans of one level state
	dn          *driveNoise      // quietNoise, once measured
	ds          *devslpProc      // DevSlp cycles to judge; nil without
	devslpChart *devslpChart     // the cycle to chart, after finish

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
	// Rail samples the reader rejected (indices already covered) and their
	// summed power (W; × the period is their energy), and rail samples
	// analysis treated as missing for invalid values.
	rejected, invalid   uint64
	rejectedW, restartW float64 // restartW: the part after an index restart
	lastMissEnd         uint64

	dec         *decimate.Decimator // power envelope for charts
	decStart    float64             // its first bucket's left edge (s)
	t0          float64             // host ns of time zero (meter index 0)
	first, last int64               // host ns of the first and last sample processed
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
	rate := c.RateHz
	for i := range d.phases {
		d.phases[i] = &metricSet{}
		d.phases[i].quiet.init(rate)
		d.phases[i].rest.init(rate)
		d.phases[i].mp.init(rate)
	}
	d.quiet.init(rate)
	d.rest.init(rate)
	d.mp.init(rate)
	d.spans.init(rate)
	d.outside.quiet.init(rate)
	d.outside.rest.init(rate)
	d.outside.mp.init(rate)
	var n [numPeakWins]int
	for k, w := range peakWindowsS {
		n[k] = int(math.Round(rate.Samples(units.Seconds(w))))
	}
	d.wins = newPeakWins(n)
	d.lastMissEnd = math.MaxUint64
	return d
}

// run processes consecutive samples starting at index start.
func (d *driveProc) run(start uint64, ps []float64) {
	d.hum.remove(start, ps)
	dt := d.clock.NsPerSample
	t0 := d.clock.HostF(float64(start))
	if d.sink != nil {
		d.sink.DriveSamples(d.info.Port, (t0-d.t0)/1e9, dt/1e9, ps)
	}
	if d.ds != nil {
		d.ds.add(ps, dt, t0)
	}
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
		until = min(until, d.chartEdge(t0+dt*float64(k), dt))
		// Samples k..end-1 share activity, phase and pin state.
		end := len(ps)
		if until < int64(t0+dt*float64(len(ps))) {
			end = int(math.Ceil((float64(until) - t0) / dt))
			if end <= k {
				end = k + 1
			}
			end = min(end, len(ps))
		}
		m := &d.outside
		if pi >= 0 {
			m = d.phases[pi]
			if !m.seen {
				m.seen, m.first = true, t
			}
		}
		if !d.total.seen {
			d.total.seen, d.total.first = true, t
		}
		d.pinEdge(pinA != Idle, t)
		if pinA != Idle {
			d.pinN += uint64(end - k)
		}
		run := ps[k:end]
		sum := m.addRun(run, a)
		if d.pole != nil {
			d.dc.add(run, &m.dpeak)
		}
		best, ok := d.wins.push(run, sum.max, &m.win, &m.winSeen)
		for w, n := range d.wins.n {
			if ok[w] {
				m.window(w, best[w]/float64(n))
			}
		}
		if floorA == Busy {
			summarise(run, &d.pinHist)
		}
		if d.cls == nil {
			st := StateIdle
			if a == Busy {
				st = StateActive
			}
			d.states[st].merge(sum)
			d.sinkState(t, st)
			// Without a classifier every quiet sample counts as active
			// idle: quiet also serves as rest.
			if a == Idle && pinA == Idle {
				d.noise.AddAll(run)
				d.quiet.add(run)
				m.quiet.add(run)
			}
		} else {
			d.classify(start, k, run, a, pinA != Idle, m)
		}
		if d.dec != nil {
			d.chartRun((t0+dt*float64(k)-d.t0)/1e9, dt/1e9, run, sum)
		}
		if !d.any {
			d.any, d.first = true, t
		}
		d.last = int64(t0 + dt*float64(end-1))
		k = end
	}
}

// usePole sets the drive's sensor response: the peak is read through its
// inverse when a is resolved from zero (τ known), else as sampled.
func (d *driveProc) usePole(p *sensorPole) {
	if !p.resolved() {
		return
	}
	d.pole = p
	d.dc.b, _ = p.b()
}

// peakOf is a set's peak power: its highest sample, or with a sensor
// response its highest sample read through the inverse filter.
func (d *driveProc) peakOf(m *metricSet) (w, delta float64) {
	if d.pole != nil && m.dpeak.seen {
		return m.dpeak.max, m.dpeak.d
	}
	return m.all.max, 0
}

// chartRun adds run (samples at t, t+dt, … s) to the chart envelope. A run
// that falls within one envelope bucket goes in as one summary point built
// from s, its count, sum, min and max, which the run's metrics already
// computed: the envelope comes out the same as sample by sample (up to
// rounding in the bucket mean), since buckets are [decStart+k·w,
// decStart+(k+1)·w) and only ever merge in pairs. Other runs, and runs with
// non-finite values, go sample by sample.
func (d *driveProc) chartRun(t, dt float64, run []float64, s acc) {
	last := t + float64(len(run)-1)*dt
	w := d.dec.Width()
	if s.n > 0 && t >= d.decStart && finite(last) && finite(s.sum) && finite(s.min) && finite(s.max) &&
		int((t-d.decStart)/w) == int((last-d.decStart)/w) {
		d.dec.AddSummary(t, s.min, s.max, s.sum/float64(s.n), len(run))
		return
	}
	d.dec.AddUniform(t, dt, run)
}

// chartEdge returns the host time (ns) where the chart bucket holding host
// time t ends, so runs can be cut there and reach chartRun whole; "never"
// while buckets are narrower than chartMinRun samples, when per-run costs
// would outweigh what the summary points save.
func (d *driveProc) chartEdge(t, dt float64) int64 {
	const never = int64(^uint64(0) >> 1)
	if d.dec == nil {
		return never
	}
	w := d.dec.Width()
	if w*1e9 < chartMinRun*dt {
		return never
	}
	b := math.Floor(((t-d.t0)/1e9 - d.decStart) / w)
	edge := math.Ceil(d.t0 + (d.decStart+(b+1)*w)*1e9)
	if !(b >= 0) || !(edge < float64(never)) {
		return never
	}
	return int64(edge)
}

const chartMinRun = 512

// setPolicies gives d the ALPM policy events of its port (and of every
// port), for the quiet samples under max_performance (addMaxPerf).
func (d *driveProc) setPolicies(all []policyEvent) { d.pol = newPolicyCursor(all, d.info.Port) }

// addMaxPerf adds the parts of a quiet run (host times ts) recorded under
// max_performance to the drive's and m's max_performance series, the run
// cut at the policy's changes.
func (d *driveProc) addMaxPerf(ts []hostclock.Time, run []float64, m *metricSet) {
	if len(d.pol.pol) == 0 {
		return
	}
	for j := 0; j < len(run); {
		ctx := d.pol.at(int64(ts[j]))
		e := len(run)
		if next := d.pol.until(); next != math.MaxInt64 {
			e = j + sort.Search(len(run)-j, func(k int) bool { return int64(ts[j+k]) >= next })
		}
		if ctx == ctxMaxPerf && e > j {
			d.mp.addEach(run[j:e])
			m.mp.addEach(run[j:e])
		}
		j = max(e, j+1)
	}
}

func finite(x float64) bool { return !math.IsNaN(x) && !math.IsInf(x, 0) }

// classify labels run (samples start+k…) with the classifier, sample by
// sample; idle samples it calls active idle are quiet samples of m and the
// drive. What follows the labels goes by runs of one label: each
// accumulator takes the run's samples in order, as it took them one by
// one (TestClassifyByRuns).
func (d *driveProc) classify(start uint64, k int, run []float64, a Activity, pin bool, m *metricSet) {
	dt := d.clock.NsPerSample
	t0 := d.clock.HostF(float64(start))
	n := len(run)
	if cap(d.hostBuf) < n {
		d.hostBuf, d.stateBuf = make([]hostclock.Time, n), make([]State, n)
	}
	ts, sts := d.hostBuf[:n], d.stateBuf[:n]
	for j := range ts {
		ts[j] = hostclock.Time(int64(t0 + dt*float64(k+j)))
	}
	if rc, ok := d.cls.(runClassifier); ok {
		rc.classifyRun(ts, run, a == Busy, sts)
	} else {
		for j, p := range run {
			sts[j] = d.cls.Classify(Sample{Index: start + uint64(k+j), Host: ts[j], Power: units.Watts(p), Activity: a, DevSlpPin: pin})
		}
	}
	quiet := a == Idle && !pin
	if quiet {
		d.noise.AddAll(run)
		d.rest.addEach(run)
		m.rest.addEach(run)
		d.addMaxPerf(ts, run, m)
	}
	for j := 0; j < n; {
		raw := sts[j]
		e := j + 1
		for e < n && sts[e] == raw {
			e++
		}
		seg, tj := run[j:e], int64(ts[j])
		j = e
		// The latencies, the sink and the span's end change only at the
		// run's first sample: the same label again leaves them as they are.
		d.latency(raw, tj)
		st := raw
		if st == StateUnknown {
			st = StateIdle
			if a == Busy {
				st = StateActive
			}
		}
		if quiet && (st == StateIdle || st == StatePartial || st == StateSlumber) {
			d.spans.addRun(seg, st)
		} else {
			d.spans.end()
		}
		if quiet && st == StateIdle {
			d.quiet.addEach(seg)
			m.quiet.addEach(seg)
		}
		d.states[st].addEach(seg)
		d.sinkState(tj, st)
		if st == StateDevSlp {
			for _, p := range seg {
				d.dsHist.Add(p)
			}
		}
	}
}

// runClassifier is a StateClassifier that labels a run of samples at
// once: Classify of each in turn (the samples at host times ts, power ps,
// all busy or all not; out gets the labels).
type runClassifier interface {
	classifyRun(ts []hostclock.Time, ps []float64, busy bool, out []State)
}

// collect finishes the streaming accumulators: each phase's set and the
// drive total (see metricSet). Call once, after the last sample.
func (d *driveProc) collect() {
	t := &d.total
	d.outside.collected()
	t.fold(&d.outside)
	for _, m := range d.phases {
		m.collected()
		t.fold(m)
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
	d.wins.reset()
	d.dc.ok = false
	d.spans.end()
	if d.dec != nil {
		d.dec.Gap((d.clock.HostF(float64(start))-d.t0)/1e9, (d.clock.HostF(float64(start+count))-d.t0)/1e9)
	}
	if g, ok := d.cls.(GapObserver); ok {
		g.Gap(start, count)
	}
}
