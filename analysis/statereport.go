package analysis

import (
	"github.com/idlewatt/idlewatt/analysis/judge"
	"math"
	"sort"
	"time"

	"github.com/idlewatt/idlewatt/capture"
	"github.com/idlewatt/idlewatt/hostclock"
	"github.com/idlewatt/idlewatt/internal/stat"
	"github.com/idlewatt/idlewatt/states/detect"
	"github.com/idlewatt/idlewatt/states/powerstate"
	"github.com/idlewatt/idlewatt/units"
)

// StatesSchema is states.json's schema value.
const StatesSchema = "idlewatt.states/v1"

// StateReport is one drive's interface-state detection from its power trace
// (states/detect's offline classifier, with hysteresis): the intervals'
// residency, power, transitions and latencies. Its JSON form is one drive
// of states.json. Residency and power are the report's (one
// classification), and DevSlp is the report's devslp block.
type StateReport struct {
	Port   int           `json:"port"`
	Name   string        `json:"name"`
	Levels detect.Levels `json:"levels"`
	// Learning is how the levels were learned from the capture: the modes
	// of its quiet power and what named each (docs/analysis.md, "States").
	Learning  *LevelLearning         `json:"learning"`
	MeasuredS units.Seconds          `json:"measured_s"`
	Residency map[string]float64     `json:"residency"` // fraction of measured time
	PowerW    map[string]units.Watts `json:"power_w"`   // mean power in each state
	// PowerU95W is the 95 % half-width of PowerW: cluster-robust over the
	// state's intervals (absent with fewer than two).
	PowerU95W map[string]units.Watts `json:"power_u95_w"`
	// ResidencyU95 is the 95 % half-width of Residency from the timing of
	// the state's boundaries (each uniform within ±½ smoothing window); it
	// does not cover samples put in the wrong state.
	ResidencyU95 map[string]float64 `json:"residency_u95"`
	// Misplaced counts, per state, the samples whose own power lies
	// clearly in that state's band but were read in another state's
	// interval (in), and those of its intervals that lie clearly in
	// another's (out): what ResidencyU95's misplaced term holds. Absent
	// when there are none.
	Misplaced map[string]MisplacedCount `json:"misplaced_samples,omitempty"`
	// DevSlpUnresolved is the pin-asserted time a drive without a learned
	// DevSlp level may have spent at its floor, which ResidencyU95 holds;
	// absent when the level was learned or the pin never asserted.
	DevSlpUnresolved *DevSlpUnresolved `json:"devslp_unresolved,omitempty"`
	// Smoothing is the classifier's running-median window, chosen from the
	// measured per-sample noise (detect.Options.Adaptive).
	Smoothing   SmoothingInfo          `json:"smoothing"`
	Spans       map[string]int         `json:"spans"`         // intervals per state
	Transitions []TransitionCount      `json:"transitions"`   // from → to, count
	Entry       map[string]LatencyStat `json:"entry_latency"` // by state entered (DevSlp's are in devslp)
	Exit        map[string]LatencyStat `json:"exit_latency"`  // by state left (DevSlp's are in devslp)
	DevSlp      *DevSlp                `json:"devslp,omitempty"`
	Note        string                 `json:"note,omitempty"`
	// intervals are the classifier's spans, made once by fill (Intervals).
	intervals []StateInterval
}

// MisplacedCount is one state's misplaced samples (StateReport.Misplaced).
type MisplacedCount struct {
	Out int `json:"out"`
	In  int `json:"in"`
}

// SmoothingInfo is the classifier's window and the noise it was sized for.
type SmoothingInfo struct {
	WindowMs    units.Milliseconds `json:"window_ms"`
	NoiseSigmaW units.Watts        `json:"noise_sigma_w"`
}

// StateInterval is one maximal interval of one detected state: a span of
// the offline classifier whose intervals states.json counts (Spans) and
// averages (PowerW).
type StateInterval struct {
	State string
	// StartNs and EndNs bound the interval on the host clock
	// (CLOCK_MONOTONIC ns, the capture's aligned timeline); StartS and EndS
	// are the same from the host time of sample index 0, in seconds.
	StartNs, EndNs hostclock.Time
	StartS, EndS   units.Seconds
	Samples        int
	MeanW          units.Watts
	// EnergyJ is MeanW × the interval's duration, as states/detect sums a
	// state's energy: a state's Σ EnergyJ ÷ Σ duration is states.json's
	// power_w of that state, and its Σ duration ÷ measured_s its residency.
	EnergyJ units.Joules
}

// DurationS is the interval's length, (EndNs − StartNs) in seconds.
func (iv StateInterval) DurationS() units.Seconds { return units.SecondsOf(iv.EndNs.Sub(iv.StartNs)) }

// Intervals lists the drive's detected state intervals in time order (nil
// when the drive was not classified).
func (s *StateReport) Intervals() []StateInterval { return s.intervals }

// TransitionCount counts one kind of transition.
type TransitionCount struct {
	From  string `json:"from"`
	To    string `json:"to"`
	Count int    `json:"count"`
}

// LatencyStat summarises latencies, by cause ("io" or "pin").
type LatencyStat struct {
	Count  int                `json:"count"`
	Cause  string             `json:"cause"`
	MeanMs units.Milliseconds `json:"mean_ms"`
	P50Ms  units.Milliseconds `json:"p50_ms"`
	MaxMs  units.Milliseconds `json:"max_ms"`
}

// StateOptions turn on state detection in Analyze. Every drive's levels
// are learned from the capture itself (learn.go, levels.go): there is
// nothing to configure.
type StateOptions struct{}

// stateDetector runs the classifiers of one Analyze: each SATA drive's
// levels are learned in a pass of their own, before the sample pass, and
// the drive is classified against them inside it.
type stateDetector struct {
	learned map[int]LevelLearning
	cols    map[int]*stateCollector
}

func newStateDetector() *stateDetector {
	return &stateDetector{cols: map[int]*stateCollector{}}
}

// classifier makes a drive's classifier for the sample pass; nil for an
// NVMe drive and for a drive whose levels could not be learned (its state
// figures are null: see unclassified).
func (sd *stateDetector) classifier(d capture.DriveInfo, rate units.Hertz) StateClassifier {
	if d.Interface == capture.InterfaceNVMe {
		return nil // SATA link states only; Analyze notes it
	}
	ll, ok := sd.learned[d.Port]
	if !ok || ll.Err != "" {
		return nil
	}
	period := rate.Period()
	l := ll.Levels
	on, err := detect.NewOnline(l, period, 0)
	if err != nil {
		return nil
	}
	c := &stateCollector{online: on, rep: StateReport{Port: d.Port, Name: d.Name, Levels: l, Learning: &ll}}
	if c.off, err = detect.New(detect.Options{Levels: l, Period: period, Adaptive: true}, func(s detect.Span) {
		c.spans = append(c.spans, s)
		c.sum.Add(s)
	}); err != nil {
		return nil
	}
	sd.cols[d.Port] = c
	return c
}

// unclassified is why a SATA drive has no classifier ("" when it has one,
// or is not a SATA drive the detector knows).
func (sd *stateDetector) unclassified(port int) string {
	if sd == nil {
		return ""
	}
	if _, ok := sd.cols[port]; ok {
		return ""
	}
	if ll, ok := sd.learned[port]; ok {
		if ll.Err != "" {
			return ll.Err
		}
		return "levels learned, but no classifier could be made for them"
	}
	return ""
}

// stateCollector labels samples online for residency and feeds the same
// samples to the offline classifier with hysteresis (states.json).
type stateCollector struct {
	online *detect.Online
	off    *detect.Classifier
	spans  []detect.Span
	sum    detect.Summary
	rep    StateReport
}

func (c *stateCollector) Classify(s Sample) State {
	busy := s.Activity == Busy
	c.off.Push(s.Host, s.Power, busy)
	return c.online.Classify(s.Power, busy)
}

// classifyRun is Classify of each sample in turn (runClassifier): the
// offline classifier takes the run first, then the online one labels it
// (neither sees the other).
func (c *stateCollector) classifyRun(ts []hostclock.Time, ps []float64, busy bool, out []State) {
	c.off.PushRun(ts, ps, busy)
	for j, p := range ps {
		out[j] = c.online.Classify(units.Watts(p), busy)
	}
}

// IdleBand is IdleBandOf the drive's levels; with no level below idle
// learned (a run under max_performance throughout), up to the classifier's
// own threshold into background and as far below the idle level (the
// level in the band's middle, as IdleBandOf has it): active idle is then
// found the same way, level-based, as for every other drive.
func (c *stateCollector) IdleBand() (lo, hi units.Watts, ok bool) {
	if lo, hi, ok := IdleBandOf(c.rep.Levels); ok {
		return lo, hi, true
	}
	idle := c.rep.Levels.Idle
	if idle <= 0 {
		return 0, 0, false
	}
	bg, _, _ := c.rep.Levels.Band(powerstate.Background)
	return 2*idle - units.Watts(bg), units.Watts(bg), true
}

// LevelStep is the learning's LevelStepW (0: none).
func (c *stateCollector) LevelStep() float64 {
	if c.rep.Learning == nil {
		return 0
	}
	return float64(c.rep.Learning.LevelStepW)
}

// ReadingStep is the readings' own step when it is coarser than the LSB
// the capture states, or it states none (0: not).
func (c *stateCollector) ReadingStep() float64 {
	if c.rep.Learning == nil {
		return 0
	}
	return c.rep.Learning.readingStep
}

// IdleFromMaxPerformance says whether the learned idle level is the
// max_performance mode's because the mode over every context held a lower
// level too (activeIdle then estimates over max_performance time).
func (c *stateCollector) IdleFromMaxPerformance() bool {
	return c.rep.Learning != nil && c.rep.Learning.idleMP
}

// IdleSpread is the learning's IdleSpreadW (0: none).
func (c *stateCollector) IdleSpread() float64 {
	if c.rep.Learning == nil {
		return 0
	}
	return float64(c.rep.Learning.IdleSpreadW)
}

// SplitAt passes the DEVSLP edges to the offline classifier: spans end
// there, and fill's MonotoneLevels reads each part by its mean.
func (c *stateCollector) SplitAt(ts []hostclock.Time) { c.off.SplitAt(ts) }

// pinSplitter is a classifier told where the DEVSLP pin changed.
type pinSplitter interface{ SplitAt([]hostclock.Time) }

// pinTimes are the times of the pin changes.
func pinTimes(pins []detect.Pin) []hostclock.Time {
	ts := make([]hostclock.Time, len(pins))
	for i, p := range pins {
		ts[i] = p.At
	}
	return ts
}

func (c *stateCollector) Gap(start, count uint64) {
	c.online.Reset()
	c.off.Gap()
}

// levelBlock is the averaging window for level learning.
const levelBlock = 10 * time.Millisecond

func blockSamples(period time.Duration) int { return max(1, int(levelBlock/period)) }

// busyIO turns a port's merged busy intervals into detect's I/O list.
func busyIO(p *pass1, port int) []detect.IO {
	ss := p.busy[port]
	if ss == nil {
		return nil
	}
	out := make([]detect.IO, len(ss.spans))
	for i, s := range ss.spans {
		out[i] = detect.IO{Issue: hostclock.Time(s.s), Complete: hostclock.Time(s.e)}
	}
	return out
}

// drivePins are a port's DEVSLP changes on the aligned host clock: the
// meter's events when it reports them, else the host's requests.
func drivePins(p *pass1, c *Clock, port int) []detect.Pin {
	var dp []detect.Pin
	for _, e := range p.meterPins[port] {
		dp = append(dp, detect.Pin{At: c.Host(uint64(e.t)), Asserted: e.asserted})
	}
	if len(dp) == 0 {
		for _, e := range append(append([]pinEvent(nil), p.hostPins[port]...), p.hostPins[0]...) {
			dp = append(dp, detect.Pin{At: hostclock.Time(e.t), Asserted: e.asserted})
		}
	}
	sort.Slice(dp, func(a, b int) bool { return dp[a].At < dp[b].At })
	return dp
}

// devslpSignal is what the capture says of a port's DEVSLP signal beyond
// the pin: when the drive may be in DevSlp (devslpPossible), and when the
// HBA released it (hbaReleases).
type devslpSignal struct {
	can      detect.DevSlpPossible
	released []hostclock.Time
}

// fill completes a report from the classifier's spans; c is the capture's
// clock, cn what the classifier measured of the noise.
func (s *StateReport) fill(sum *detect.Summary, spans []detect.Span, ios []detect.IO, pins []detect.Pin, sig devslpSignal, cycles []judge.Cycle, c *Clock, cn classNoise) {
	// The running median places background edges early and late when the
	// noise reaches over the threshold into background; the spans and
	// their summary are corrected once, here, for every output.
	// Then each quiet stretch's level spans are read in the order the link
	// can take (MonotoneLevels).
	refined := detect.RefineBurstEdges(spans, s.Levels, cn.sigma, cn.burst, cn.period)
	if len(refined) > 0 {
		refined = detect.MonotoneLevelsReleased(refined, s.Levels, withSteps(cn.meanVar, s.Learning, cn.period), pins, sig.can, sig.released)
		refined = judgedDevSlp(refined, cycles, s.Levels, float64(cn.period))
	}
	if len(refined) > 0 {
		spans, sum = refined, &detect.Summary{}
		for _, sp := range refined {
			sum.Add(sp)
		}
	}
	s.MeasuredS = units.SecondsOf(sum.Total())
	t0 := c.HostF(0)
	s.intervals = make([]StateInterval, len(spans))
	for i, sp := range spans {
		s.intervals[i] = StateInterval{State: sp.State.String(), StartNs: sp.Start, EndNs: sp.End,
			StartS: units.Seconds((float64(sp.Start) - t0) / 1e9), EndS: units.Seconds((float64(sp.End) - t0) / 1e9), Samples: sp.Samples,
			MeanW: sp.MeanW, EnergyJ: units.Joules(float64(sp.MeanW) * sp.Duration().Seconds())}
	}
	s.Residency, s.PowerW, s.Spans = map[string]float64{}, map[string]units.Watts{}, map[string]int{}
	s.PowerU95W, s.ResidencyU95 = map[string]units.Watts{}, map[string]float64{}
	for _, st := range powerstate.Detected {
		s.Residency[st.String()] = sum.Residency(st)
		s.PowerW[st.String()] = sum.MeanPower(st)
		s.Spans[st.String()] = sum.Spans[st]
	}
	s.Smoothing = SmoothingInfo{WindowMs: units.Milliseconds(float64(cn.smooth) / 1e6), NoiseSigmaW: units.Watts(cn.sigma)}
	s.uncertainty(spans, cn, ioPlacement(spans, c))
	s.devslpUnresolved(spans, pins, cn.smooth)
	for k, n := range sum.Transitions {
		s.Transitions = append(s.Transitions, TransitionCount{From: k[0].String(), To: k[1].String(), Count: n})
	}
	sort.Slice(s.Transitions, func(a, b int) bool {
		x, y := s.Transitions[a], s.Transitions[b]
		if x.Count != y.Count {
			return x.Count > y.Count
		}
		return x.From+x.To < y.From+y.To
	})
	entries, exits := detect.Latencies(spans, ios, pins, 50*time.Millisecond)
	s.Entry, s.Exit = map[string]LatencyStat{}, map[string]LatencyStat{}
	group := func(m map[string][]float64, causes map[string]string, state, cause string, d time.Duration) {
		m[state] = append(m[state], float64(d)/1e6)
		if c, ok := causes[state]; ok && c != cause {
			causes[state] = "mixed"
		} else {
			causes[state] = cause
		}
	}
	em, ec := map[string][]float64{}, map[string]string{}
	for _, e := range entries {
		group(em, ec, e.State.String(), e.Cause, e.Latency)
	}
	xm, xc := map[string][]float64{}, map[string]string{}
	for _, x := range exits {
		group(xm, xc, x.State.String(), x.Cause, x.Latency)
	}
	// DevSlp's entry and exit are measured by change points around the pin
	// (the devslp block), not here: one definition per name.
	delete(em, powerstate.DevSlp.String())
	delete(xm, powerstate.DevSlp.String())
	for st, v := range em {
		s.Entry[st] = latencyStat(v, ec[st])
	}
	for st, v := range xm {
		s.Exit[st] = latencyStat(v, xc[st])
	}
}

func latencyStat(v []float64, cause string) LatencyStat {
	sort.Float64s(v)
	var sum float64
	for _, x := range v {
		sum += x
	}
	return LatencyStat{Count: len(v), Cause: cause, MeanMs: units.Milliseconds(sum / float64(len(v))), P50Ms: units.Milliseconds(stat.UpperMedian(v)),
		MaxMs: units.Milliseconds(v[len(v)-1])}
}

// applyStates makes each drive's residency and per-state power the state
// detection's (one classification for report.json, report.md and
// states.json) and gives each state report the drive's DevSlp block.
func (r *Report) applyStates() {
	for i := range r.States {
		st := &r.States[i]
		for j := range r.Drives {
			d := &r.Drives[j]
			if d.Port != st.Port {
				continue
			}
			if res, p := st.Residency, st.PowerW; res != nil {
				d.Residency = Residency{Active: res["active"], Background: res["background"], Idle: res["idle"], Partial: res["partial"],
					Slumber: res["slumber"], DevSlp: res["devslp"], Off: res["off"]}
				d.StatePowerW = StatePower{Active: p["active"], Background: p["background"], Idle: p["idle"], Partial: p["partial"],
					Slumber: p["slumber"], DevSlp: p["devslp"]}
				d.ResidencyU95, d.StatePowerU95W = st.ResidencyU95, st.PowerU95W
				if n := st.devslpUnresolvedNote(); n != "" {
					r.note(n)
				}
				if res["devslp"] > 0 {
					// No judged pin cycles (the HBA's own DevSlp): entered; the
					// floor stays the judged cycles' (state_power_w.devslp is the
					// DevSlp intervals' mean, another quantity).
					d.DevSlp.Entered = true
				}
			}
			ds := d.DevSlp
			st.DevSlp = &ds
		}
	}
}

// finishStates builds the state reports after the sample pass from the
// drives' collectors; a SATA drive whose levels could not be learned gets
// a report with its note and null figures.
func (sd *stateDetector) finishStates(p *pass1, c *Clock, drives []DriveReport) []StateReport {
	var out []StateReport
	period := time.Duration(c.NsPerSample)
	for _, d := range drives {
		if col := sd.cols[d.Port]; col != nil {
			col.off.Close()
			pins := drivePins(p, c, d.Port)
			col.rep.fill(&col.sum, col.spans, busyIO(p, d.Port), pins, devslpSignal{devslpPossible(p, pins, d.Port), hbaReleases(p, d.Port)}, d.DevSlp.CycleResults, c, classifierNoise(col.off, period))
			out = append(out, col.rep)
			continue
		}
		ll, ok := sd.learned[d.Port]
		if !ok {
			continue // NVMe: noted by Analyze
		}
		rep := StateReport{Port: d.Port, Name: d.Name, Note: sd.unclassified(d.Port)}
		rep.Learning = &ll
		out = append(out, rep)
	}
	return out
}

// withSteps adds the meter's level steps to the noise of a span's mean
// (nil mv stays nil): the classifier's noise model is read from
// differences robust to level steps, which a random telegraph is made of.
// A span of a few ms sits on one half of the level, ±step/2 from it, so
// the steps' variance, (step/2)², does not average down within it; read
// without it, a fast telegraph's halves were evidence of many rises, and
// DevSlp under the pin came in short spans read as Slumber between them
// (campaign seed 14 drive 101, a 3.6 mW telegraph redrawn every 3.5 ms:
// 14 of DevSlp's 33 points). Long spans hold many steps and average them,
// but every span of a stretch gains the same variance, so a level's long
// spans still outweigh its short ones.
//
// The same holds of a telegraph faster than a block (no halves to merge):
// the learning's 10 ms block means scatter by σ_b, which is then far more
// than the classifier's model says of a 10 ms mean. A span's mean is no
// surer than that: at least σ_b² for a span of up to a block, σ_b²·b/n
// beyond (b samples a block; white noise gives the model's own σ²/n).
func withSteps(mv detect.MeanVar, ll *LevelLearning, period time.Duration) detect.MeanVar {
	if mv == nil || ll == nil {
		return mv
	}
	v := float64(ll.LevelStepW) * float64(ll.LevelStepW) / 4
	vb := float64(ll.BlockSigmaW) * float64(ll.BlockSigmaW)
	b := float64(ll.BlockMs) * 1e6 / float64(period)
	if !(v > 0) && !(vb > 0 && b >= 1) {
		return mv
	}
	return func(n int) float64 {
		x := mv(n) + v
		if vb > 0 && b >= 1 {
			x = math.Max(x, vb*b/math.Max(float64(n), b))
		}
		return x
	}
}

// classNoise is what a classifier measured that residency's uncertainty
// propagates: its window, the sample period, the per-sample noise and the
// levels' bands.
type classNoise struct {
	smooth, burst, period time.Duration // the window, background's window, the sample period
	sigma                 float64
	// meanVar is the noise of a span's mean under the measured
	// autocorrelation (nil without a noise model).
	meanVar detect.MeanVar
	// hidden: the samples the dwell absorbed from excursions, by span
	// state and excursion state (detect.Classifier.Hidden).
	hidden detect.HiddenCounts
}

func classifierNoise(c *detect.Classifier, period time.Duration) classNoise {
	return classNoise{smooth: c.Smooth(), burst: c.BurstSmooth(), period: period, sigma: c.NoiseSigma(), meanVar: c.NoiseMeanVar(), hidden: c.Hidden()}
}

// uncertainty fills PowerU95W and ResidencyU95 from the spans.
//
// Per-state power: the intervals are clusters; with k ≥ 2 intervals of n_i
// samples and means m_i, var(mean) = k/(k−1) · Σ n_i²(m_i − m)² / N², which
// holds the sensor noise within each interval and the spread between them.
//
// Residency (docs/analysis.md, "States"), three terms in quadrature:
//   - boundary timing: each of the state's 2k boundaries is placed within
//     ±½ window of the running median (W, uniform: W/√12) and within a
//     sample (P/√12), so u = √(2k · (W² + P²)/12) / T;
//   - misread samples: a sample of a level x whose band is [lo, hi) is
//     read as the neighbour with probability Φ(−d/σ_m) at each edge
//     (d = x − lo or hi − x, σ_m = 1.2533 σ/√n the median's noise over n
//     samples); the state loses r·(p_lo + p_hi) and gains its neighbours'
//     share across its edges, a bias bounded by their sum B, taken as
//     rectangular: u = B/√3;
//   - the I/O boundaries of `active` (and of the state beside each): each
//     of its 2k edges is placed by the clock fit and the host's stamps,
//     within a sample (P/√12) — included in the timing term;
//   - the clock line (align): the I/O edges are host times placed on the
//     samples by the clock fit, whose own error every edge shares
//     (Clock.Place): per state, the 95 % half-width of Σ ±ε(edge) over
//     its edges at I/O (ioPlacement), in quadrature with the above;
//   - misplaced samples (added to the half-width, not in quadrature: their
//     errors share a sign): samples whose own power lies clearly inside
//     another state's band (detect.ClearSigmas σ from its edges) than the
//     span's they were read in — an excursion shorter than the window and
//     dwell hid, an edge the median placed late. Of state X, out = those
//     in X's spans, in = X's samples in other spans; the truth lies near
//     r − out + in, so max(out, in)·P/T is added.
func (s *StateReport) uncertainty(spans []detect.Span, cn classNoise, align map[string]float64) {
	type agg struct {
		n, sumW float64
		means   []float64
		ns      []float64
	}
	by := map[string]*agg{}
	for _, sp := range spans {
		a := by[sp.State.String()]
		if a == nil {
			a = &agg{}
			by[sp.State.String()] = a
		}
		n := float64(sp.Samples)
		a.n += n
		w := float64(sp.MeanW)
		a.sumW += n * w
		a.means, a.ns = append(a.means, w), append(a.ns, n)
	}
	total := float64(s.MeasuredS)
	w, per := cn.smooth.Seconds(), cn.period.Seconds()
	if w <= 0 {
		w = time.Millisecond.Seconds()
	}
	mis := s.misread(cn)
	// A state never entered has residency 0, its interval the samples the
	// noise could have put into it (0 for a state with no level: active
	// without I/O, off without an off level). Excursions shorter than half
	// the window are not seen at all (docs/analysis.md, "States").
	//
	// A state with a learned level but no span is not thereby known to be
	// 0: an excursion into it shorter than half the window at any boundary
	// of a neighbouring state is read as that neighbour. Each of a
	// neighbour's 2k boundaries may hide up to W/2 of it, a bound
	// B = Σ 2k·(W/2)/T, taken as rectangular (B/√3) beside the misread term.
	if total > 0 {
		for _, st := range powerstate.Detected {
			if _, ok := by[st.String()]; !ok {
				hid := s.hiddenBound(st, w, total)
				s.ResidencyU95[st.String()] = 1.96 * math.Hypot(mis[st.String()], hid) / math.Sqrt(3)
			}
		}
	}
	for st, a := range by {
		k := float64(len(a.means))
		if total > 0 {
			timing := math.Sqrt(2*k*(w*w+per*per)/12) / total
			s.ResidencyU95[st] = math.Hypot(1.96*math.Hypot(timing, mis[st]/math.Sqrt(3)), align[st]/total)
		}
		if k < 2 || a.n == 0 {
			continue
		}
		m := a.sumW / a.n
		var v float64
		for i, mi := range a.means {
			v += a.ns[i] * a.ns[i] * (mi - m) * (mi - m)
		}
		v *= k / (k - 1) / (a.n * a.n)
		s.PowerU95W[st] = units.Watts(1.96 * math.Sqrt(v))
	}
	s.unlearned(total)
	s.misplaced(spans, cn.hidden, cn.period.Seconds(), total)
}

// ioPlacement is, per state, the 95 % half-width in seconds that the
// clock line's error (Clock.Place) puts into the state's time: an active
// span starts and ends at host-stamped I/O edges, and a span of another
// state next to one starts (−1) or ends (+1) there. The line's error is
// the same for every edge (an offset, and a slope over the run), so a
// state entered after k reads gains or loses k times it; the two edges of
// one read cancel in active's time, not in its neighbours'. Nil without a
// line error (no fit through three marks).
func ioPlacement(spans []detect.Span, c *Clock) map[string]float64 {
	if c == nil || c.Place.N < 3 {
		return nil
	}
	xs, ws := map[string][]float64{}, map[string][]float64{}
	add := func(st powerstate.State, t hostclock.Time, w float64) {
		xs[st.String()] = append(xs[st.String()], c.Index(t))
		ws[st.String()] = append(ws[st.String()], w)
	}
	for i, sp := range spans {
		if sp.State == powerstate.Active {
			add(sp.State, sp.Start, -1)
			add(sp.State, sp.End, 1)
			continue
		}
		if i > 0 && spans[i-1].State == powerstate.Active && spans[i-1].End == sp.Start {
			add(sp.State, sp.Start, -1)
		}
		if i+1 < len(spans) && spans[i+1].State == powerstate.Active && spans[i+1].Start == sp.End {
			add(sp.State, sp.End, 1)
		}
	}
	out := map[string]float64{}
	for st := range xs {
		out[st] = c.Place.PlaceU(xs[st], ws[st])
	}
	return out
}

// misplaced adds the misplaced-samples term (see uncertainty) to every
// state's residency interval, and keeps the counts (Misplaced).
func (s *StateReport) misplaced(spans []detect.Span, hidden detect.HiddenCounts, per, total float64) {
	if total <= 0 || per <= 0 {
		return
	}
	var out, in detect.ClearCounts
	for _, sp := range spans {
		if sp.State == powerstate.Active {
			continue
		}
		for st, k := range sp.Clear {
			if powerstate.State(st) == sp.State || powerstate.State(st) == powerstate.Unknown || k == 0 {
				continue
			}
			out[sp.State] += k
			in[st] += k
		}
	}
	// The dwell's absorbed excursions (detect.Classifier.Hidden): a state's
	// spans hid hOut samples the smoothed power put elsewhere, and hIn of
	// its own lie hidden in others' spans. Under correlated noise few of an
	// excursion's samples are 4 σ clear of the band's edge (a 1.8 ms idle
	// excursion inside Partial at 2.7 mW σ: 6 of 18), so each count is the
	// larger of the two.
	var hOut, hIn [powerstate.NumDetected]int
	for a := range hidden {
		if powerstate.State(a) == powerstate.Active {
			continue
		}
		for b, k := range hidden[a] {
			if a == b || powerstate.State(b) == powerstate.Unknown {
				continue
			}
			hOut[a] += k
			hIn[b] += k
		}
	}
	for _, st := range powerstate.Detected {
		o, i := max(int(out[st]), hOut[st]), max(int(in[st]), hIn[st])
		if n := max(o, i); n > 0 {
			s.ResidencyU95[st.String()] += float64(n) * per / total
			if s.Misplaced == nil {
				s.Misplaced = map[string]MisplacedCount{}
			}
			s.Misplaced[st.String()] = MisplacedCount{Out: o, In: i}
		}
	}
}

// hiddenBound is the residency an unentered state st can hide in
// sub-window excursions at its classified neighbours' boundaries: st
// needs a learned level (or be background, the band above idle), and each
// neighbour boundary hides at most half the window w (seconds).
// unlearned widens the residency intervals for a link state the learner
// found no level for although the drive's levels were learned (a Partial
// or a Slumber of a SATA drive whose idle level is known): a level must
// hold minLevelTime of the quiet time to be
// learned (docs/analysis.md, "Levels learned from the capture"), so a state
// the drive held for less than that may be missing, its time read as a
// neighbour's. The bound B = that time / T is the state's interval
// (residency 0, truth in [0, B]) and is added to the intervals of the
// states beside it, which may hold that time.
func (s *StateReport) unlearned(total float64) {
	l := s.Levels
	if total <= 0 || l.Idle <= 0 || s.Learning == nil {
		return
	}
	b := minLevelTime(float64(s.Learning.QuietS)) / total
	order := []struct {
		st powerstate.State
		w  units.Watts
	}{{powerstate.Idle, l.Idle}, {powerstate.Partial, l.Partial}, {powerstate.Slumber, l.Slumber}, {powerstate.DevSlp, l.DevSlp}}
	for i, x := range order {
		if x.w > 0 || (x.st != powerstate.Partial && x.st != powerstate.Slumber) {
			continue
		}
		s.ResidencyU95[x.st.String()] = math.Max(s.ResidencyU95[x.st.String()], b)
		// Its time went to the nearest learned level above or below.
		for j := i - 1; j >= 0; j-- {
			if order[j].w > 0 {
				s.ResidencyU95[order[j].st.String()] += b
				break
			}
		}
		for j := i + 1; j < len(order); j++ {
			if order[j].w > 0 {
				s.ResidencyU95[order[j].st.String()] += b
				break
			}
		}
	}
}

func (s *StateReport) hiddenBound(st powerstate.State, w, total float64) float64 {
	l := s.Levels
	has := st == powerstate.Background && l.Idle > 0
	switch st {
	case powerstate.Idle:
		has = l.Idle > 0
	case powerstate.Partial:
		has = l.Partial > 0
	case powerstate.Slumber:
		has = l.Slumber > 0
	case powerstate.DevSlp:
		has = l.DevSlp > 0
	}
	if !has || total <= 0 {
		return 0
	}
	var edges float64
	for _, nb := range []powerstate.State{stateAbove(l, st), stateBelow(l, st)} {
		if st == powerstate.Background {
			nb = powerstate.Idle
		}
		if nb != powerstate.Unknown {
			edges += 2 * float64(s.Spans[nb.String()])
		}
		if st == powerstate.Background {
			break
		}
	}
	return edges * w / 2 / total
}

// misread bounds, per state, the residency moved by samples the noise
// puts across a band edge (see uncertainty).
func (s *StateReport) misread(cn classNoise) map[string]float64 {
	out := map[string]float64{}
	if cn.sigma <= 0 || cn.period <= 0 || cn.smooth <= 0 {
		return out
	}
	n := math.Max(1, float64(cn.smooth/cn.period))
	sm := 1.2533 * cn.sigma / math.Sqrt(n)
	if s.Learning != nil && s.Learning.LevelStepW > 0 {
		// A meter's level steps (a random telegraph, ±step/2) move a
		// sample across an edge as its noise does, and a window's median
		// does not average them out: the classifier's σ, robust to the
		// steps, leaves them out (held-out campaign seeds 34–36: `steps`
		// Partial residency intervals held 66 of 75, missing by 0.005–0.4
		// points; TestIntervalsUnderLevelSteps).
		sm = math.Hypot(sm, float64(s.Learning.LevelStepW)/2)
	}
	phi := func(d float64) float64 { return 0.5 * math.Erfc(d/sm/math.Sqrt2) }
	l := s.Levels
	lv := []struct {
		st powerstate.State
		w  units.Watts
	}{{powerstate.Idle, l.Idle}, {powerstate.Partial, l.Partial}, {powerstate.Slumber, l.Slumber}, {powerstate.DevSlp, l.DevSlp}}
	for _, x := range lv {
		lo, hi, ok := l.Band(x.st)
		if !ok || x.w <= 0 {
			continue
		}
		r := s.Residency[x.st.String()]
		for _, e := range []struct {
			edge float64
			d    float64
		}{{lo, float64(x.w) - lo}, {hi, hi - float64(x.w)}} {
			if math.IsInf(e.edge, 0) || e.d <= 0 {
				continue
			}
			moved := r * phi(e.d)
			out[x.st.String()] += moved
			// The neighbour across this edge gains what this state loses.
			var nb powerstate.State
			if e.edge == hi {
				nb = stateAbove(l, x.st)
			} else {
				nb = stateBelow(l, x.st)
			}
			if nb != powerstate.Unknown {
				out[nb.String()] += moved
			}
		}
	}
	return out
}

// stateAbove and stateBelow are the classified neighbours of a level's band.
func stateAbove(l detect.Levels, st powerstate.State) powerstate.State {
	prev := powerstate.Background
	for _, x := range []struct {
		st powerstate.State
		w  units.Watts
	}{{powerstate.Idle, l.Idle}, {powerstate.Partial, l.Partial}, {powerstate.Slumber, l.Slumber}, {powerstate.DevSlp, l.DevSlp}} {
		if x.w <= 0 {
			continue
		}
		if x.st == st {
			return prev
		}
		prev = x.st
	}
	return powerstate.Unknown
}

func stateBelow(l detect.Levels, st powerstate.State) powerstate.State {
	found := false
	for _, x := range []struct {
		st powerstate.State
		w  units.Watts
	}{{powerstate.Idle, l.Idle}, {powerstate.Partial, l.Partial}, {powerstate.Slumber, l.Slumber}, {powerstate.DevSlp, l.DevSlp}} {
		if x.w <= 0 {
			continue
		}
		if found {
			return x.st
		}
		found = x.st == st
	}
	if found && l.Off > 0 {
		return powerstate.Off
	}
	return powerstate.Unknown
}
