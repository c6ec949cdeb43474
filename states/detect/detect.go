package detect

import (
	"fmt"
	"math"
	"slices"
	"sort"
	"time"

	"github.com/idlewatt/idlewatt/hostclock"
	"github.com/idlewatt/idlewatt/internal/stat"
	"github.com/idlewatt/idlewatt/states/powerstate"
	"github.com/idlewatt/idlewatt/units"
)

// Levels are the steady power of each low state of one drive. A zero level
// means the drive has no such state (or it is not known); it then takes no
// part in classification.
type Levels struct {
	Idle    units.Watts `json:"idle_w"`
	Partial units.Watts `json:"partial_w"`
	Slumber units.Watts `json:"slumber_w"`
	DevSlp  units.Watts `json:"devslp_w"`
	// Off is the level below which the drive counts as powered off; zero
	// means the drive has no off state in this trace (noise around a DevSlp
	// floor of a few ADC counts dips below any small threshold).
	Off units.Watts `json:"off_w"`
}

// Validate checks that the known levels are ordered idle > partial >
// slumber > devslp.
func (l Levels) Validate() error {
	prev, prevName := math.Inf(1), ""
	for _, lv := range l.ordered() {
		if float64(lv.w) >= prev {
			return fmt.Errorf("levels: %s (%v) is not below %s", lv.s, lv.w, prevName)
		}
		prev, prevName = float64(lv.w), lv.s.String()
	}
	if len(l.ordered()) == 0 {
		return fmt.Errorf("levels: no level given")
	}
	return nil
}

type level struct {
	s powerstate.State
	w units.Watts
}

// ordered returns the known levels, highest first.
func (l Levels) ordered() []level {
	out := make([]level, 0, 4)
	for _, lv := range []level{{powerstate.Idle, l.Idle}, {powerstate.Partial, l.Partial}, {powerstate.Slumber, l.Slumber}, {powerstate.DevSlp, l.DevSlp}} {
		if lv.w > 0 {
			out = append(out, lv)
		}
	}
	return out
}

// thresholds is the compiled form of Levels: a sample with smoothed power w
// is in the first state whose floor w is above.
type thresholds struct {
	activeAbove float64 // above this (without I/O) counts as active: GC, wake spikes
	offBelow    float64
	floor       []float64 // descending
	state       []powerstate.State
}

func (l Levels) compile() thresholds {
	lv := l.ordered()
	t := thresholds{offBelow: float64(l.Off)}
	if t.offBelow == 0 {
		t.offBelow = math.Inf(-1)
	}
	// Anything above the highest level's band (idle, when known) without
	// I/O is work the host did not ask for (background GC) or a wake spike.
	// The band's upper edge mirrors its lower one (the threshold to the next
	// lower level) about the level, so the idle level sits in the middle of
	// its band, capped at 25 % above it. An HDD's partial level is 95–99 %
	// of idle and its background work 5–30 % above: a fixed 25 % put nearly
	// all of that work under idle.
	if len(lv) > 0 {
		x := float64(lv[0].w)
		t.activeAbove = x * 1.25
		if len(lv) > 1 {
			t.activeAbove = math.Min(t.activeAbove, 2*x-(x+float64(lv[1].w))/2)
		}
	}
	// Adjacent levels are split at their arithmetic midpoint: the sensor
	// noise is additive, so the midpoint is as many σ from either level,
	// and a running median crosses it where a step between the two really
	// is (near an even mix the median is either level's noise tail; a
	// threshold nearer one level is crossed late, by up to a third of the
	// window at 1.4 mA σ — the geometric mean used before put a DevSlp floor
	// of 0.4 mW 1.4 mW from a 1.8 mW threshold, and each Slumber → DevSlp
	// edge 20 ms late).
	for i, x := range lv {
		var below float64
		if i+1 < len(lv) {
			below = (float64(x.w) + float64(lv[i+1].w)) / 2
		} else {
			below = t.offBelow
		}
		t.floor = append(t.floor, below)
		t.state = append(t.state, x.s)
	}
	return t
}

// Band returns the power band [lo, hi) a smoothed sample without I/O must
// fall in to be classified st (lo = −Inf or hi = +Inf when unbounded);
// ok is false for a state with no level (active, unknown, a state the
// levels lack).
func (l Levels) Band(st powerstate.State) (lo, hi float64, ok bool) {
	t := l.compile()
	if st == powerstate.Background {
		return t.activeAbove, math.Inf(1), len(t.state) > 0
	}
	up := t.activeAbove
	for i, s := range t.state {
		if s == st {
			return t.floor[i], up, true
		}
		up = t.floor[i]
	}
	if st == powerstate.Off && !math.IsInf(t.offBelow, -1) {
		return math.Inf(-1), t.offBelow, true
	}
	return 0, 0, false
}

// minGap is the smallest distance from a level to either threshold of its
// band: the boundary the noise crosses most easily.
func (t *thresholds) minGap(l Levels) float64 {
	lv := l.ordered()
	g := math.Inf(1)
	for i, x := range lv {
		w := float64(x.w)
		up := t.activeAbove
		if i > 0 {
			up = t.floor[i-1]
		}
		if d := up - w; d > 0 {
			g = math.Min(g, d)
		}
		if f := t.floor[i]; !math.IsInf(f, -1) {
			if d := w - f; d > 0 {
				g = math.Min(g, d)
			}
		}
	}
	return g
}

func (t *thresholds) classify(w float64) powerstate.State {
	if w > t.activeAbove {
		return powerstate.Background
	}
	for i, f := range t.floor {
		if w >= f {
			return t.state[i]
		}
	}
	return powerstate.Off
}

// Span is a maximal interval in one state. Times are host monotonic ns.
type Span struct {
	State   powerstate.State
	Start   hostclock.Time
	End     hostclock.Time
	Samples int
	MeanW   units.Watts
	MinW    units.Watts
	MaxW    units.Watts
	// ExactStart and ExactEnd mark an edge located from the samples
	// themselves (carve), not where a running median crossed a threshold:
	// RefineBurstEdges leaves it.
	ExactStart, ExactEnd bool
	// Clear counts the span's samples whose own power lies clearly inside
	// a state's band (ClearSigmas per-sample σ from its edges), by state:
	// those of a state other than the span's are samples the smoothing put
	// in the wrong state — a short excursion the window and dwell hid, or
	// an edge placed late — which the residency's interval counts
	// (Misplaced). Zero without a noise estimate.
	Clear ClearCounts
}

// ClearSigmas is how far inside a band, in per-sample noise σ, a sample
// must lie to count as clearly in it (Span.Clear): 4 σ, one white-noise
// sample in 30 000 past an edge.
const ClearSigmas = 4

// ClearCounts holds a count of samples per state.
type ClearCounts [powerstate.NumDetected]int32

func (c *ClearCounts) add(o ClearCounts) {
	for i := range c {
		c[i] += o[i]
	}
}

func (c *ClearCounts) sub(o ClearCounts) {
	for i := range c {
		c[i] = max(0, c[i]-o[i])
	}
}

// Misplaced is how many of the span's samples lie clearly in a state
// other than st (its own): 0 for an active span, whose samples are the
// I/O's whatever their power.
func (s Span) Misplaced() int {
	if s.State == powerstate.Active {
		return 0
	}
	n := 0
	for st, k := range s.Clear {
		if powerstate.State(st) != s.State && powerstate.State(st) != powerstate.Unknown {
			n += int(k)
		}
	}
	return n
}

// clearCounts counts ws by clearOf.
func (t *thresholds) clearCounts(ws []float64, margin float64) (c ClearCounts) {
	if margin <= 0 {
		return c
	}
	for _, w := range ws {
		c[t.clearOf(w, margin)]++
	}
	return c
}

// clearOf is the state whose band holds w at least margin inside both
// edges, or Unknown.
func (t *thresholds) clearOf(w, margin float64) powerstate.State {
	if margin <= 0 || math.IsNaN(w) || len(t.state) == 0 {
		return powerstate.Unknown
	}
	if w > t.activeAbove+margin {
		return powerstate.Background
	}
	up := t.activeAbove
	for i, f := range t.floor {
		if w >= f {
			if w >= f+margin && w <= up-margin {
				return t.state[i]
			}
			return powerstate.Unknown
		}
		up = f
	}
	if !math.IsInf(t.offBelow, -1) && w < t.offBelow-margin {
		return powerstate.Off
	}
	return powerstate.Unknown
}

// Duration returns the span's length.
func (s Span) Duration() time.Duration { return s.End.Sub(s.Start) }

// Options tune a Classifier.
type Options struct {
	Levels   Levels
	Smooth   time.Duration // running-median window; default 1 ms (the shortest with Adaptive)
	MinDwell time.Duration // a state must hold this long to count; default 2 ms
	// Period is the sample period; required (1 / rate).
	Period time.Duration
	// Adaptive widens the window to the sensor noise: the noise σ is
	// measured over the first AdaptSamples samples (the median absolute
	// first difference ÷ 0.954: a level change moves few differences) and
	// the window made long enough that the median's noise (1.2533 σ/√n for
	// n samples) is a quarter of the smallest distance from a level to its
	// band's threshold, between Smooth and MaxSmooth (4 σ: a smoothed sample then crosses a
	// threshold with probability 3·10⁻⁵; at 3 σ, 1.3·10⁻³, states under the
	// space's full noise still missed ±1 pp on a quarter of the draws). A median keeps a
	// step's edge where it is whatever its width; it drops excursions
	// shorter than half the window. The dwell grows to half the window.
	Adaptive  bool
	MaxSmooth time.Duration // Adaptive's longest window; default 100 ms
}

// AdaptSamples is how many samples Options.Adaptive measures the noise over.
const AdaptSamples = 2048

// adaptZ is the margin, in standard deviations of the window's median,
// between a level and its band's threshold that Adaptive sizes the window for.
const adaptZ = 4

// Classifier turns a stream of (time, power, busy) samples into Spans.
// Push samples in time order; call Gap at a hole in the data and Close at the end.
type Classifier struct {
	th     thresholds
	dwellN int // dwell in samples
	period time.Duration
	onSpan func(Span)
	// The smoothing window: a centred running median over the last len(rw)
	// samples. A median moves a clean step by exactly half the window, which
	// the centring undoes, so edges keep their time; it also ignores spikes.
	rt      []hostclock.Time
	rw      []float64
	rb      []bool
	ringPos int
	ringN   int
	scratch []float64
	// rc holds each window sample's own threshold class and count how many
	// of the window are in each. Classes are contiguous power bands, so when
	// more than half the window is in one band its median is too, and the
	// sort is skipped — nearly always, away from edges.
	rc    []powerstate.State
	count [powerstate.NumDetected]int

	// sorted holds the ring's samples in order (the steady-state median);
	// idleSorted those taken with no I/O outstanding, busyN how many were.
	// A sample without I/O is classified from the median of the samples
	// without I/O in its window: the I/O's own power is not the level the
	// drive rests at (after a 130 ms read ending at the idle level, the
	// window's first half kept a Slumber drive in the idle band for up to
	// half the window).
	sorted     []float64
	idleSorted []float64
	busyN      int

	// Background is decided over a shorter window centred on the same
	// sample, sized like the long one but for the gap from the idle level
	// to the threshold into background: the long window is sized for the
	// closest pair of levels (Slumber and DevSlp a few mW apart) and
	// smoothed a 46 ms GC burst into 81 ms of Partial under its 90 ms.
	// sAbove and sNB count the window's samples without I/O above the
	// threshold and in all; shortH is its half-width (0: the long window
	// decides, as without Adaptive); bgDwellN the dwell of background.
	shortH      int
	sAbove, sNB int
	sInit       bool
	bgDwellN    int

	// Adaptive: samples held until the noise is known.
	adaptive bool
	decided  bool
	minN     int // the window bounds in samples, odd
	maxN     int
	levels   Levels
	pend     []pendSample
	smooth   time.Duration // the window in force
	resolved bool          // the window reached adaptZ (not capped at maxN)

	// Noise: the power's step-robust variogram (analysis/stat), and its
	// model as last computed (noiseAt: at how many samples).
	noise   stat.Variogram
	nm      stat.Noise
	noiseAt int

	cur     Span             // committed span being extended
	curSum  float64          // Σw of cur
	cand    powerstate.State // candidate state, != cur.State while pending
	candN   int
	candAt  hostclock.Time
	candSum float64
	candMin float64
	candMax float64
	// candClear is the candidate's Span.Clear; clearMargin the margin of
	// clearOf (ClearSigmas per-sample σ; 0 until the noise is known).
	candClear   ClearCounts
	clearMargin float64
	// transit holds the candidates that gave way to another before their
	// dwell, since the current span's last sample: the bands a median
	// passes on its way between two levels (commit splits them).
	transit []part
	started bool
	last    hostclock.Time
	// splits are the times (ascending) where a span must end whatever its
	// state (SplitAt): the DEVSLP pin's edges.
	splits []hostclock.Time

	// Carving background spans (carve): the samples pushed, the noise σ
	// the window was sized for, and the level state of the last span
	// emitted (None when it was not a level).
	hist      history
	sigma     float64
	prevLevel powerstate.State
}

// SplitAt asks for a span boundary at each of ts (host time; any order):
// where the drive is expected to change state (a DEVSLP pin edge) and the
// power, against noise, might not show it for a while. The span that holds
// the time ends at its first sample at or after it (from the samples the
// history holds; without one, a fixed window, at the first sample
// classified after it with no change pending). Both parts keep the state;
// a relabeling pass (MonotoneLevels) decides them by their means. Call
// before pushing samples past the first time.
func (c *Classifier) SplitAt(ts []hostclock.Time) {
	c.splits = append(c.splits, ts...)
	slices.Sort(c.splits)
}

// split applies the splits due before the sample at t (w): the current
// span's samples end where the pending change (candidate, transit) begins,
// or at t.
func (c *Classifier) split(t hostclock.Time, w float64) {
	end, pending := t, false
	switch {
	case len(c.transit) > 0:
		end, pending = c.transit[0].at, true
	case c.candN > 0:
		end, pending = c.candAt, true
	}
	c.splitCur(end)
	// Without the samples (no history: a fixed window), a split due is
	// made at t, once nothing is pending.
	for len(c.splits) > 0 && c.splits[0] <= t && !pending {
		if c.cur.Samples > 0 && c.cur.Start < t {
			c.cur.End = t
			c.emit()
			c.cur = Span{State: c.cur.State, Start: t, MinW: units.Watts(w), MaxW: units.Watts(w)}
			c.curSum = 0
		}
		c.splits = c.splits[1:]
	}
}

// splitCur ends the current span at each split time before end (the time
// its samples reach), from the samples the history holds: the part from
// the split on starts a span of the same state. A split at or before the
// span's start is one already made.
func (c *Classifier) splitCur(end hostclock.Time) {
	for len(c.splits) > 0 && c.splits[0] < end {
		at := c.splits[0]
		if at <= c.cur.Start || c.cur.Samples == 0 {
			c.splits = c.splits[1:]
			continue
		}
		_, ws, ok := c.hist.between(at, end)
		if !ok || len(ws) == 0 || len(ws) >= c.cur.Samples {
			return // not in the history: split leaves it for t
		}
		var sum float64
		lo, hi := math.Inf(1), math.Inf(-1)
		for _, w := range ws {
			sum += w
			lo, hi = math.Min(lo, w), math.Max(hi, w)
		}
		head := c.cur
		head.End, head.Samples = at, c.cur.Samples-len(ws)
		tailClear := c.th.clearCounts(ws, c.clearMargin)
		head.Clear.sub(tailClear)
		if _, hw, ok := c.hist.between(c.cur.Start, at); ok && len(hw) == head.Samples {
			head.MinW, head.MaxW = units.Watts(math.Inf(1)), units.Watts(math.Inf(-1))
			for _, w := range hw {
				head.MinW, head.MaxW = min(head.MinW, units.Watts(w)), max(head.MaxW, units.Watts(w))
			}
		}
		tailSum := sum
		c.cur, c.curSum = head, c.curSum-tailSum
		c.emit()
		c.cur = Span{State: head.State, Start: at, Samples: len(ws), MinW: units.Watts(lo), MaxW: units.Watts(hi), Clear: tailClear}
		c.curSum = tailSum
		c.splits = c.splits[1:]
	}
}

type pendSample struct {
	t    hostclock.Time
	w    float64
	busy bool
}

// New returns a Classifier that calls onSpan for every completed span.
func New(opt Options, onSpan func(Span)) (*Classifier, error) {
	if err := opt.Levels.Validate(); err != nil {
		return nil, err
	}
	if opt.Period <= 0 {
		return nil, fmt.Errorf("detect: sample period must be positive")
	}
	if opt.Smooth == 0 {
		opt.Smooth = time.Millisecond
	}
	if opt.MaxSmooth < opt.Smooth {
		opt.MaxSmooth = max(opt.Smooth, 100*time.Millisecond)
	}
	if opt.MinDwell == 0 {
		opt.MinDwell = 2 * time.Millisecond
	}
	dwellN := int(opt.MinDwell / opt.Period)
	if dwellN < 1 {
		dwellN = 1
	}
	c := &Classifier{th: opt.Levels.compile(), dwellN: dwellN, period: opt.Period, onSpan: onSpan,
		adaptive: opt.Adaptive, levels: opt.Levels,
		minN: int(opt.Smooth/opt.Period) | 1, maxN: int(opt.MaxSmooth/opt.Period) | 1}
	c.setWindow(c.minN)
	c.decided = !opt.Adaptive
	return c, nil
}

// setWindow sizes the smoothing ring for n samples (odd).
func (c *Classifier) setWindow(n int) {
	c.rt, c.rw, c.rb, c.rc = make([]hostclock.Time, n), make([]float64, n), make([]bool, n), make([]powerstate.State, n)
	c.scratch, c.sorted, c.idleSorted, c.busyN = make([]float64, n), make([]float64, 0, n), make([]float64, 0, n), 0
	c.smooth = time.Duration(n) * c.period
	c.sInit = false
}

// Resolved reports whether the adaptive window reached its margin: false
// when the noise is too large for the levels' gaps even at MaxSmooth (the
// residency then carries misread samples, which its uncertainty bounds).
func (c *Classifier) Resolved() bool { return c.resolved || !c.adaptive }

// Smooth returns the smoothing window in force (with Options.Adaptive, the
// one chosen from the noise; before the choice, the shortest).
func (c *Classifier) Smooth() time.Duration { return c.smooth }

// NoiseSigma is the per-sample noise of the power pushed so far (W): one
// sample's σ from the plateau of the power's robust variogram (stat.Noise),
// which the level changes between states do not inflate and a correlation
// between neighbouring samples does not shrink — first differences alone
// gave σ·√(1 − ρ), under AR(1) noise of 1–10 ms a fraction of σ; 0 before
// there is a model.
func (c *Classifier) NoiseSigma() float64 { return c.noiseModel().Sigma }

// NoiseLongRunSigma is the noise of the power as it averages out (W): the
// standard deviation of a mean of n samples is it over √n for n beyond the
// noise's correlation length — NoiseSigma for independent samples, more
// when neighbours are alike. 0 before there is a model.
func (c *Classifier) NoiseLongRunSigma() float64 {
	nm := c.noiseModel()
	return math.Sqrt(nm.LongRunVar())
}

// noiseModel is the noise model of the samples pushed so far, recomputed
// when their number has grown by a quarter.
func (c *Classifier) noiseModel() stat.Noise {
	if n := c.noise.N(); n != c.noiseAt && (c.noiseAt == 0 || n >= c.noiseAt+c.noiseAt/4) {
		c.nm, c.noiseAt = c.noise.Noise(), n
	}
	if !c.nm.Ok {
		return stat.Noise{TauInt: 1}
	}
	return c.nm
}

// NoiseMeanVar is the variance of the noise of a mean of n consecutive
// samples under the noise model measured so far (its autocorrelation;
// σ²/n for white noise), for weighing a span's mean against a level
// (MonotoneLevelsNoise). Beyond 16 correlation lengths it is the long-run
// variance over n.
func (c *Classifier) NoiseMeanVar() MeanVar {
	nm := c.noiseModel()
	if !(nm.Sigma > 0) {
		return nil
	}
	far := 16 * max(nm.CorrLen, 1)
	memo := map[int]float64{}
	return func(n int) float64 {
		if n >= far {
			return nm.LongRunVar() / float64(n)
		}
		if v, ok := memo[n]; ok {
			return v
		}
		v := nm.MeanVar(n)
		memo[n] = v
		return v
	}
}

// MinGap is the smallest distance (W) from a level to a threshold of its
// band, the scale the noise is judged against.
func (c *Classifier) MinGap() float64 { return c.th.minGap(c.levels) }

func (c *Classifier) noteDiff(w float64) { c.noise.Add(w) }

// decide picks the adaptive window from the held samples and classifies them.
func (c *Classifier) decide() {
	c.decided, c.resolved = true, true
	n := c.minN
	// The window's median scatters as a mean of n samples does: by the
	// noise as it averages out, which correlated noise makes larger than
	// one sample's σ.
	if sigma, gap := c.NoiseLongRunSigma(), c.MinGap(); sigma > 0 && gap > 0 && !math.IsInf(gap, 1) {
		need := math.Ceil(math.Pow(adaptZ*1.2533*sigma/gap, 2))
		n = int(math.Min(float64(c.maxN), math.Max(float64(c.minN), need))) | 1
		c.resolved = need <= float64(c.maxN)
	}
	if n != len(c.rw) {
		c.setWindow(n)
	}
	// A state must hold half the window: a median passing from one level
	// to a far one crosses the bands between them on the way (near an
	// even mix the median is the near level's noise tail) for up to half
	// the window, and that is no state — its samples stay with the state
	// before (where the window's centre still is). A real state shorter
	// than half the window the median smooths away anyway.
	c.dwellN = max(c.dwellN, n/2)
	c.sigma = c.NoiseLongRunSigma()
	c.clearMargin = ClearSigmas * c.NoiseSigma()
	c.shortH, c.bgDwellN = 0, 0
	if sigma := c.sigma; sigma > 0 && len(c.th.state) > 0 && !math.IsInf(c.th.activeAbove, 0) {
		if d, ok := c.levels.levelOf(c.th.state[0]); ok && c.th.activeAbove > d {
			ns := int(math.Max(float64(c.minN), math.Ceil(math.Pow(adaptZ*1.2533*sigma/(c.th.activeAbove-d), 2)))) | 1
			if ns < n-2 {
				c.shortH = min(ns/2, n/2-1)
				c.bgDwellN = max(int(2*time.Millisecond/c.period), c.shortH)
			}
		}
	}
	p := c.pend
	c.pend = nil
	for _, s := range p {
		c.push(s.t, s.w, s.busy)
	}
}

// Push adds one sample: its host time, its power (all rails), and whether an
// I/O was in flight (or within the settle tail) at that time. Classification
// lags by half the smoothing window.
func (c *Classifier) Push(t hostclock.Time, p units.Watts, busy bool) {
	w := float64(p)
	c.noteDiff(w)
	if !c.decided {
		c.pend = append(c.pend, pendSample{t, w, busy})
		if len(c.pend) >= AdaptSamples {
			c.decide()
		}
		return
	}
	c.push(t, w, busy)
}

// sortKey orders a reading in the sorted window: a NaN (a broken reading)
// counts as the lowest power, so it can be found again to be removed.
func sortKey(w float64) float64 {
	if math.IsNaN(w) {
		return math.Inf(-1)
	}
	return w
}

func (c *Classifier) push(t hostclock.Time, w float64, busy bool) {
	if c.adaptive {
		c.hist.add(t, w)
	}
	n := len(c.rw)
	rs := c.th.classify(w)
	if c.ringN == n {
		c.count[c.rc[c.ringPos]]--
		old := sortKey(c.rw[c.ringPos])
		c.sorted = removeSorted(c.sorted, old)
		if c.rb[c.ringPos] {
			c.busyN--
		} else {
			c.idleSorted = removeSorted(c.idleSorted, old)
		}
	}
	k := sortKey(w)
	c.sorted = insertSorted(c.sorted, k)
	if busy {
		c.busyN++
	} else {
		c.idleSorted = insertSorted(c.idleSorted, k)
	}
	c.rc[c.ringPos] = rs
	c.count[rs]++
	c.rt[c.ringPos], c.rw[c.ringPos], c.rb[c.ringPos] = t, w, busy
	c.ringPos = (c.ringPos + 1) % n
	if c.ringN < n {
		c.ringN++
		if c.ringN < n {
			return
		}
		// The window just filled: classify its older half with windows
		// that start at the first sample.
		oldest := c.ringPos // full ring: the oldest follows the newest
		for k := 0; k < n/2; k++ {
			i := (oldest + k) % n
			c.classify(c.rt[i], c.rw[i], c.rb[i], c.th.classify(c.median(oldest, k+n/2+1)))
		}
	}
	mid := (c.ringPos + n/2) % n // the centre of the (full) window
	var st powerstate.State
	switch {
	case c.busyN > 0 && !c.rb[mid] && len(c.idleSorted) > 0:
		st = c.th.classify(c.idleSorted[len(c.idleSorted)/2])
	case c.count[rs] > n/2:
		st = rs
	default:
		st = c.th.classify(c.sorted[n/2])
	}
	if c.shortH > 0 {
		c.slideShort(mid)
		if !c.rb[mid] && c.sNB > 0 {
			if 2*c.sAbove > c.sNB {
				st = powerstate.Background
			} else if st == powerstate.Background {
				st = c.th.state[0] // the long window still holds the burst; the short one has left it
			}
		}
	}
	c.classify(c.rt[mid], c.rw[mid], c.rb[mid], st)
	c.last = t
}

// slideShort moves the short window to be centred on ring index mid: the
// first time after the ring filled by counting, then by the sample that
// entered and the one that left.
func (c *Classifier) slideShort(mid int) {
	n, h, thr := len(c.rw), c.shortH, c.th.activeAbove
	tally := func(i, d int) {
		if !c.rb[i] {
			c.sNB += d
			if c.rw[i] > thr {
				c.sAbove += d
			}
		}
	}
	if !c.sInit {
		c.sInit, c.sAbove, c.sNB = true, 0, 0
		for k := -h; k <= h; k++ {
			tally((mid+k+n)%n, 1)
		}
		return
	}
	tally((mid+h)%n, 1)
	tally((mid-1-h+2*n)%n, -1)
}

// BurstSmooth is the window background is decided over (Smooth when the
// long window decides it).
func (c *Classifier) BurstSmooth() time.Duration {
	if c.shortH > 0 {
		return time.Duration(2*c.shortH+1) * c.period
	}
	return c.smooth
}

// insertSorted inserts k into the ascending xs.
func insertSorted(xs []float64, k float64) []float64 {
	i := sort.SearchFloat64s(xs, k)
	xs = append(xs, 0)
	copy(xs[i+1:], xs[i:])
	xs[i] = k
	return xs
}

// removeSorted removes one k from the ascending xs.
func removeSorted(xs []float64, k float64) []float64 {
	i := sort.SearchFloat64s(xs, k)
	if i < len(xs) && xs[i] == k {
		xs = append(xs[:i], xs[i+1:]...)
	}
	return xs
}

// median of the m most recent samples, the oldest at ring index from.
func (c *Classifier) median(from, m int) float64 {
	n := len(c.rw)
	sc := c.scratch[:m]
	for i := 0; i < m; i++ {
		sc[i] = c.rw[(from+i)%n]
	}
	return stat.UpperMedianSorting(sc)
}

// flushRing classifies the samples still waiting in the window, with the
// window shrinking towards the end.
func (c *Classifier) flushRing() {
	n := len(c.rw)
	if c.ringN == 0 {
		return
	}
	oldest := (c.ringPos - c.ringN + n) % n
	first := 0
	if c.ringN == n {
		first = n/2 + 1 // the older half was classified already
	}
	for k := first; k < c.ringN; k++ {
		lo := k - n/2
		if lo < 0 {
			lo = 0
		}
		m := c.ringN - lo
		if m > n {
			m = n
		}
		i := (oldest + k) % n
		c.classify(c.rt[i], c.rw[i], c.rb[i], c.th.classify(c.median((oldest+lo)%n, m)))
	}
	c.last = c.rt[(c.ringPos-1+n)%n]
	c.ringN, c.ringPos, c.count = 0, 0, [powerstate.NumDetected]int{}
	c.sorted, c.idleSorted, c.busyN, c.sInit = c.sorted[:0], c.idleSorted[:0], 0, false
}

// classify accounts the sample at t (power w) given its smoothed class.
func (c *Classifier) classify(t hostclock.Time, w float64, busy bool, smoothed powerstate.State) {
	s := powerstate.Active
	if !busy {
		s = smoothed
	}
	if !c.started {
		c.started = true
		c.cur = Span{State: s, Start: t, MinW: units.Watts(w), MaxW: units.Watts(w)}
		c.curSum, c.cand = 0, s
	}
	c.split(t, w)
	cs := c.th.clearOf(w, c.clearMargin)
	if s == c.cur.State {
		// Back in the current state: pending candidate samples belong to it.
		c.absorbTransit(len(c.transit))
		if c.candN > 0 {
			c.absorbCandidate()
		}
		c.add(&c.cur, &c.curSum, w)
		c.cur.Clear[cs]++
		return
	}
	if s != c.cand || c.candN == 0 {
		switch {
		case c.candN > 0 && elevated(c.cand) && elevated(s):
			// A wake spike (background: no I/O yet) running into the read
			// that woke the drive (active): both are above the low state,
			// so the pending samples go with the new candidate — not into
			// the DevSlp or Slumber interval they interrupted.
			c.cand = s
		case c.candN > 0:
			c.transit = append(c.transit, part{s: c.cand, at: c.candAt, n: c.candN, sum: c.candSum, min: c.candMin, max: c.candMax, clear: c.candClear})
			c.candN = 0
			c.cand, c.candAt, c.candN, c.candSum, c.candMin, c.candMax = s, t, 0, 0, w, w
			c.candClear = ClearCounts{}
		default:
			c.cand, c.candAt, c.candN, c.candSum, c.candMin, c.candMax = s, t, 0, 0, w, w
			c.candClear = ClearCounts{}
		}
	}
	c.candClear[cs]++
	c.candN++
	c.candSum += w
	c.candMin = math.Min(c.candMin, w)
	c.candMax = math.Max(c.candMax, w)
	// Busy edges are the host's I/O times, not noisy power: entering and
	// leaving active needs no dwell. (Before, a gap of less than the dwell
	// between two requests was absorbed into active, 1.6–7 ms of
	// residency per drive in the campaign.)
	need := c.dwellN
	if c.cand == powerstate.Background && c.bgDwellN > 0 {
		need = c.bgDwellN
	}
	if c.candN >= need || (busy && s == powerstate.Active) || (c.cur.State == powerstate.Active && !busy) {
		c.commit()
	}
}

// elevated reports whether s is above every low state: the drive working.
func elevated(s powerstate.State) bool { return s == powerstate.Active || s == powerstate.Background }

func (c *Classifier) add(sp *Span, sum *float64, w float64) {
	sp.Samples++
	*sum += w
	p := units.Watts(w)
	if p < sp.MinW {
		sp.MinW = p
	}
	if p > sp.MaxW {
		sp.MaxW = p
	}
}

func (c *Classifier) absorbCandidate() {
	c.cur.Samples += c.candN
	c.curSum += c.candSum
	c.cur.MinW = units.Watts(math.Min(float64(c.cur.MinW), c.candMin))
	c.cur.MaxW = units.Watts(math.Max(float64(c.cur.MaxW), c.candMax))
	c.cur.Clear.add(c.candClear)
	c.candClear = ClearCounts{}
	c.candN = 0
	c.cand = c.cur.State
}

func (c *Classifier) commit() {
	k := c.splitTransit()
	c.absorbTransit(k)
	start, n, sum, lo, hi, clr := c.candAt, c.candN, c.candSum, c.candMin, c.candMax, c.candClear
	for i, p := range c.transit {
		if i == 0 {
			start = p.at
		}
		n, sum, lo, hi = n+p.n, sum+p.sum, math.Min(lo, p.min), math.Max(hi, p.max)
		clr.add(p.clear)
	}
	c.transit = c.transit[:0]
	c.splitCur(start)
	c.cur.End = start
	c.emit()
	c.cur = Span{State: c.cand, Start: start, Samples: n, MinW: units.Watts(lo), MaxW: units.Watts(hi), Clear: clr}
	c.curSum = sum
	c.candN, c.candClear = 0, ClearCounts{}
}

// part is a candidate that gave way before its dwell.
type part struct {
	s             powerstate.State
	at            hostclock.Time
	n             int
	sum, min, max float64
	clear         ClearCounts
}

// absorbTransit gives the first k transit parts to the current span and
// keeps the rest.
func (c *Classifier) absorbTransit(k int) {
	for _, p := range c.transit[:k] {
		c.cur.Samples += p.n
		c.curSum += p.sum
		c.cur.MinW = units.Watts(math.Min(float64(c.cur.MinW), p.min))
		c.cur.MaxW = units.Watts(math.Max(float64(c.cur.MaxW), p.max))
		c.cur.Clear.add(p.clear)
	}
	c.transit = append(c.transit[:0], c.transit[k:]...)
}

// splitTransit is how many of the transit parts belong to the span that
// ends (the rest begin the candidate that now commits). A median passing
// from level A to a far level C crosses the bands between them; the
// change is where it crosses the midpoint of A and C, so a band whose
// level is on A's side of it is A's, the rest C's. (Before, every band
// passed stayed with A: right on the way up from a low state, where the
// bands passed are all on A's side, but a 73 ms GC burst over Slumber at
// 13 mW σ read 20 ms long, the median spending that long in the Partial
// band on its way down.) Spans bounded by the host's I/O keep their
// edges: every part stays with A, as before.
func (c *Classifier) splitTransit() int {
	if len(c.transit) == 0 || c.cur.State == powerstate.Active || c.cand == powerstate.Active {
		return len(c.transit)
	}
	la, oka := c.levelOf(c.cur.State, c.curSum, c.cur.Samples)
	lc, okc := c.levelOf(c.cand, c.candSum, c.candN)
	if !oka || !okc || la == lc {
		return len(c.transit)
	}
	m := (la + lc) / 2
	for i, p := range c.transit {
		if lp, ok := c.levelOf(p.s, p.sum, p.n); ok && (lp-m)*(la-m) <= 0 {
			return i
		}
	}
	return len(c.transit)
}

// levelOf is the power a state stands for: its level, or for background
// (no level known in advance) the mean of its samples; Off is 0.
func (c *Classifier) levelOf(s powerstate.State, sum float64, n int) (float64, bool) {
	switch s {
	case powerstate.Background:
		if n == 0 {
			return 0, false
		}
		return sum / float64(n), true
	case powerstate.Off:
		return 0, true
	}
	return c.levels.levelOf(s)
}

func (c *Classifier) emit() {
	if c.cur.Samples == 0 {
		return
	}
	c.cur.MeanW = units.Watts(c.curSum / float64(c.cur.Samples))
	if c.onSpan != nil {
		parts := []Span{c.cur}
		if c.cur.State == powerstate.Background {
			if p := c.carve(c.cur); p != nil {
				parts = p
			}
		}
		for _, p := range parts {
			c.onSpan(p)
		}
	}
	switch {
	case c.cur.State == powerstate.Background:
	case c.levels.has(c.cur.State):
		c.prevLevel = c.cur.State
	default:
		c.prevLevel = powerstate.Unknown
	}
}

// Gap ends the current span at the last sample; the next Push starts afresh.
func (c *Classifier) Gap() {
	if !c.decided {
		c.decide()
	}
	c.flushRing()
	if !c.started {
		return
	}
	c.absorbTransit(len(c.transit))
	if c.candN > 0 {
		c.absorbCandidate()
	}
	c.cur.End = c.last.Add(c.period)
	c.emit()
	c.started, c.prevLevel = false, powerstate.Unknown
}

// Close flushes the last span.
func (c *Classifier) Close() { c.Gap() }

// Summary accumulates spans into residency, per-state power and transitions.
type Summary struct {
	Time        [powerstate.NumDetected]time.Duration
	Energy      [powerstate.NumDetected]units.Joules
	Spans       [powerstate.NumDetected]int
	Transitions map[[2]powerstate.State]int
	last        powerstate.State
}

// Add accounts one span. Spans must come in time order.
func (s *Summary) Add(sp Span) {
	d := sp.Duration()
	s.Time[sp.State] += d
	s.Energy[sp.State] += units.Joules(float64(sp.MeanW) * d.Seconds())
	s.Spans[sp.State]++
	if s.Transitions == nil {
		s.Transitions = map[[2]powerstate.State]int{}
	}
	if s.last != powerstate.Unknown && s.last != sp.State {
		s.Transitions[[2]powerstate.State{s.last, sp.State}]++
	}
	s.last = sp.State
}

// Total returns the classified time.
func (s *Summary) Total() time.Duration {
	var t time.Duration
	for _, d := range s.Time {
		t += d
	}
	return t
}

// Residency returns the fraction of classified time spent in st.
func (s *Summary) Residency(st powerstate.State) float64 {
	tot := s.Total()
	if tot == 0 {
		return 0
	}
	return float64(s.Time[st]) / float64(tot)
}

// MeanPower returns the mean power while in st (0 if never).
func (s *Summary) MeanPower(st powerstate.State) units.Watts {
	if s.Time[st] == 0 {
		return 0
	}
	return units.Watts(float64(s.Energy[st]) / s.Time[st].Seconds())
}

// LevelHistogram learns levels without supervision: feed it the power of
// samples taken with no I/O in flight, then call Levels.
type LevelHistogram struct {
	bins  []float64 // sample counts per log-power bin
	total float64
}

// Log-spaced bins from 0.1 mW to 30 W, 2 % wide: fine enough to separate
// levels a factor 1.3 apart, coarse enough to smooth noise.
const (
	histMin   = 1e-4
	histMax   = 30.0
	histRatio = 1.02
)

var histBins = int(math.Ceil(math.Log(histMax/histMin) / math.Log(histRatio)))

// histEdges[i] is the lower edge of bin i; a binary search over them costs
// less than a logarithm per sample.
var histEdges = func() []float64 {
	e := make([]float64, histBins)
	for i := range e {
		e[i] = histMin * math.Pow(histRatio, float64(i))
	}
	return e
}()

// Add counts one idle sample's (smoothed) power.
func (h *LevelHistogram) Add(p units.Watts) {
	w := float64(p)
	if h.bins == nil {
		h.bins = make([]float64, histBins)
	}
	if !(w > histMin) { // also catches NaN
		w = histMin
	}
	i := sort.SearchFloat64s(histEdges, w) - 1 // the last edge ≤ w
	if i < 0 {
		i = 0
	}
	h.bins[i]++
	h.total++
}

func binCenter(i int) float64 { return histMin * math.Pow(histRatio, float64(i)+0.5) }

// Levels finds the peaks of the histogram that hold at least minShare of the
// idle samples and names them from the top: the highest is idle; a peak under
// 10 mW is devslp; the next peaks down are slumber (lowest remaining) and
// partial. With fewer peaks, the states the drive evidently lacks stay zero.
func (h *LevelHistogram) Levels(minShare float64) (Levels, error) {
	ws, err := h.Peaks(minShare)
	if err != nil {
		return Levels{}, err
	}
	type peak struct{ w float64 }
	merged := make([]peak, len(ws))
	for i, w := range ws {
		merged[i] = peak{float64(w)}
	}
	var l Levels
	rest := merged
	if merged[0].w >= 0.010 {
		// The highest level is idle — unless even it is a few mW: then the
		// drive sat in DevSlp throughout and its idle level is unknown.
		l.Idle = units.Watts(merged[0].w)
		rest = merged[1:]
	}
	if n := len(rest); n > 0 && rest[n-1].w < 0.010 {
		l.DevSlp = units.Watts(rest[n-1].w)
		rest = rest[:n-1]
	}
	switch len(rest) {
	case 0:
	case 1:
		l.Slumber = units.Watts(rest[0].w)
	default:
		l.Partial = units.Watts(rest[0].w)
		l.Slumber = units.Watts(rest[len(rest)-1].w)
	}
	return l, nil
}

// Peaks returns the histogram's stable levels, highest first: the peaks
// that hold at least minShare of the idle samples, those closer than a
// factor 1.3 merged (one level blurred by noise). Levels names them as
// SATA states; an NVMe drive's are named from its power-state table
// (states/nvme.LearnLevels).
func (h *LevelHistogram) Peaks(minShare float64) ([]units.Watts, error) {
	if h.total == 0 {
		return nil, fmt.Errorf("detect: no idle samples to learn levels from")
	}
	// Smooth counts over ±3 bins (≈ ±6 %) so a noisy level forms one peak.
	sm := make([]float64, len(h.bins))
	for i := range h.bins {
		for j := i - 3; j <= i+3; j++ {
			if j >= 0 && j < len(h.bins) {
				sm[i] += h.bins[j]
			}
		}
	}
	type peak struct {
		w    float64
		mass float64
	}
	var peaks []peak
	for i := range sm {
		if sm[i] == 0 || (i > 0 && sm[i-1] > sm[i]) || (i+1 < len(sm) && sm[i+1] >= sm[i]) {
			continue
		}
		// Mass: the valley-to-valley area around the peak.
		lo, hi := i, i
		for lo > 0 && sm[lo-1] <= sm[lo] && sm[lo-1] > 0 {
			lo--
		}
		for hi+1 < len(sm) && sm[hi+1] <= sm[hi] && sm[hi+1] > 0 {
			hi++
		}
		var mass, wsum float64
		for j := lo; j <= hi; j++ {
			mass += h.bins[j]
			wsum += h.bins[j] * binCenter(j)
		}
		if mass/h.total >= minShare {
			peaks = append(peaks, peak{w: wsum / mass, mass: mass})
		}
	}
	if len(peaks) == 0 {
		return nil, fmt.Errorf("detect: no stable power level among %d idle samples", int(h.total))
	}
	sort.Slice(peaks, func(a, b int) bool { return peaks[a].w > peaks[b].w })
	// Merge peaks closer than a factor 1.3: one level blurred by noise.
	merged := peaks[:1]
	for _, p := range peaks[1:] {
		last := &merged[len(merged)-1]
		if last.w/p.w < 1.3 {
			tot := last.mass + p.mass
			last.w = (last.w*last.mass + p.w*p.mass) / tot
			last.mass = tot
			continue
		}
		merged = append(merged, p)
	}
	out := make([]units.Watts, len(merged))
	for i, p := range merged {
		out[i] = units.Watts(p.w)
	}
	return out, nil
}
