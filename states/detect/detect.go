package detect

import (
	"fmt"
	"math"
	"slices"
	"time"

	"github.com/idlewatt/idlewatt/hostclock"
	"github.com/idlewatt/idlewatt/internal/stat"
	"github.com/idlewatt/idlewatt/states/powerstate"
	"github.com/idlewatt/idlewatt/units"
)

// Options tune a Classifier.
type Options struct {
	Levels   Levels
	Smooth   time.Duration // running-median window; default 1 ms (the shortest with Adaptive)
	MinDwell time.Duration // a state must hold this long to count; default 2 ms
	// Period is the sample period; required (1 / rate).
	Period time.Duration
	// Adaptive widens the window to the sensor noise: the noise σ is
	// measured over the first AdaptSamples samples, or AdaptSpan at a high
	// rate, whichever is longer (the median absolute
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

// AdaptSamples is how many samples Options.Adaptive measures the noise
// over, at least: at a high rate, as many as AdaptSpan holds.
const AdaptSamples = 2048

// AdaptSpan is the least stretch Options.Adaptive measures the noise over:
// ten times the longest correlation a meter's noise is drawn with
// (docs/drive-profiles.md, 20 ms), or the window came out as for white
// noise — 2048 samples are 20 ms at 100 kS/s (a PPK2's rate), and a drive
// under noise correlated over 8–20 ms got a 0.1 ms window where 100 ms was
// due: +0.12 pp of DevSlp against an interval of ±0.009 pp
// (scripts/blind-independent, seed 1 drive 11).
const AdaptSpan = 200 * time.Millisecond

// adaptN is how many samples c holds before it sizes its window.
func (c *Classifier) adaptN() int {
	if c.period <= 0 {
		return AdaptSamples
	}
	return max(AdaptSamples, int(AdaptSpan/c.period))
}

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
	// idleCount counts the bands of the samples without I/O alike, for
	// their median; nanN how many of the window are NaN (whose band, Off,
	// is not where sortKey puts it: the counts then do not decide). maj
	// and idleMaj are the bands that last held more than half.
	idleCount    [powerstate.NumDetected]int
	nanN         int
	maj, idleMaj powerstate.State
	band         bandMemo // each sample's own band

	// sorted holds the ring's samples in order (the median when no band
	// holds more than half the window); idleSorted those taken with no I/O
	// outstanding, busyN how many were. Both are kept only while asked for
	// (sortedWin). A sample without I/O is classified from the median of
	// the samples without I/O in its window: the I/O's own power is not
	// the level the drive rests at (after a 130 ms read ending at the idle
	// level, the window's first half kept a Slumber drive in the idle band
	// for up to half the window).
	sorted     sortedWin
	idleSorted sortedWin
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
	// hidden counts the samples whose smoothed state left the current
	// span's and came back before the dwell: by the span's state and the
	// excursion's (Hidden).
	hidden  HiddenCounts
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
	sigma1    float64 // one sample's σ when the window was sized (carveHead)
	prevLevel powerstate.State
	// prevState is the state of the last span emitted (Unknown after a
	// gap): a span after Active has its head carved (carveHead).
	prevState powerstate.State
	// noHeadCarve turns carveHead off (tests of the median and dwell
	// alone).
	noHeadCarve bool
	// noRiseCarve turns carveRise off (the same tests).
	noRiseCarve bool
	// beforeIO: the span being emitted ends where an I/O begins (emit
	// from commit, the candidate Active): carveHead fits all of it.
	beforeIO bool
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
	if len(c.splits) == 0 {
		return
	}
	end, pending := t, false
	switch {
	case len(c.transit) > 0:
		end, pending = c.transit[0].at, true
	case c.candN > 0:
		end, pending = c.candAt, true
	}
	if next := c.splits[0]; next >= end && next > t {
		return // neither loop below would take it
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
	c.scratch, c.busyN, c.nanN = make([]float64, n), 0, 0
	c.count, c.idleCount = [powerstate.NumDetected]int{}, [powerstate.NumDetected]int{}
	c.sorted.alloc(n)
	c.idleSorted.alloc(n)
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

// HiddenCounts holds, by a span's state and another state, how many
// samples the smoothed power put in the other state inside the span — an
// excursion shorter than the dwell, absorbed back into it.
type HiddenCounts [powerstate.NumDetected][powerstate.NumDetected]int

// Hidden is how many samples of each state's spans the dwell absorbed
// from excursions into another state (the smoothed power left the span's
// band and came back within MinDwell): a 1.8 ms return to idle inside a
// Partial span, plain in the samples (28 mW above Partial at 2.7 mW σ),
// stays Partial under the 2 ms dwell. Their time may be the other state's:
// the residency interval counts them (analysis, Misplaced).
func (c *Classifier) Hidden() HiddenCounts { return c.hidden }

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
	c.sigma, c.sigma1 = c.NoiseLongRunSigma(), c.NoiseSigma()
	c.clearMargin = ClearSigmas * c.sigma1
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
