package analysis

import (
	"cmp"
	"fmt"
	"math"
	"math/rand/v2"
	"sort"
	"strings"
	"time"

	"github.com/idlewatt/idlewatt/capture"
	"github.com/idlewatt/idlewatt/internal/stat"
	"github.com/idlewatt/idlewatt/states/detect"
	"github.com/idlewatt/idlewatt/units"
)

// Level learning (docs/analysis.md, "States: levels learned from the
// capture"). Before the sample pass that classifies, one read of the
// capture gathers each SATA drive's quiet power — no I/O outstanding, the
// DEVSLP pin not in its entry allowance — as 10 ms block means, by what the
// capture says the host had set: the ALPM policy in force (its policy
// events) and whether DEVSLP was asserted (the pin events). The levels are
// the modes of those block means (levels.go); nothing but the capture goes
// in. A drive whose levels cannot be learned is not classified, and its
// state figures are null with a note that says why.

// learnCtx is what the host had set while a block was recorded.
type learnCtx uint8

const (
	ctxLPM      learnCtx = iota // a link power policy that allows Partial and Slumber, or none recorded
	ctxMaxPerf                  // max_performance: the link stays active, so quiet power is active idle
	ctxMedium                   // medium_power: host-initiated Partial only
	ctxMinPower                 // min_power(_with_partial): the HBA may also enter DevSlp itself
	ctxPin                      // DEVSLP asserted, past the entry allowance
	numCtx
)

var ctxNames = [numCtx]string{"lpm", "max_performance", "medium_power", "min_power", "devslp_pin"}

// policyCtx maps an ALPM policy name (capture.StatePolicy) to its context.
func policyCtx(p string) learnCtx {
	switch p {
	case "max_performance":
		return ctxMaxPerf
	case "medium_power":
		return ctxMedium
	case "min_power", "min_power_with_partial":
		return ctxMinPower
	}
	return ctxLPM
}

// policyEvent is an ALPM policy set at host time t (port 0: every port).
type policyEvent struct {
	t      int64
	port   int
	policy string
}

// minLearnBlocks is the quiet time, in blocks, below which no levels are
// learned: 200 ms.
const minLearnBlocks = 20

// levelLearner gathers one drive's quiet blocks in the learning pass.
type levelLearner struct {
	port int
	name string
	// noDevSlp: the capture records that the drive does not support
	// DevSlp (driveClaimsNoDevSlp): no level is named DevSlp.
	noDevSlp bool
	rails    []int
	busy     activityCursor
	pin      activityCursor // Busy = asserted
	entry    activityCursor // Busy = within the entry allowance of an assertion
	pre      activityCursor // Busy = in the prePinWindow before an assertion
	pol      policyCursor

	// quantum is the smallest non-zero difference between neighbouring
	// quiet readings and how often it was seen: a quantised meter's step in
	// power when the header states none (stepW, readingQuantum.step).
	quantum readingQuantum

	rng     *rand.Rand
	inQuiet bool
	lastIO  bool // the sample before the stretch was busy
	bctx    learnCtx
	bpre    bool
	// scales are the block lengths: levelBlock (the levels' means) and
	// shortBlock (levels held only tens of ms at a time, such as a
	// Partial between the end of I/O and Slumber).
	scales [2]blockScale

	// cycles are the DEVSLP assertions: the power summed over the
	// prePinWindow before each and over its asserted time past the entry
	// allowance.
	cycles []pinCycle

	// post is the power after I/O by policy context (postio.go).
	post  [numCtx]postProfile
	postT postTrack

	hum *humModel // the mains hum subtracted from each sample (nil: none)
	ws  []float64 // scratch: a run's power

	quietN   uint64 // quiet samples (blocks or not)
	samples  uint64
	rail     []railSeen
	totalMin float64
	totalMax float64
}

// pinCycle is one assertion's 10 ms block means before and under the pin
// (the first cycleBlocks of each).
type pinCycle struct {
	pre, pin []float64
}

const cycleBlocks = 512

// shortBlock is the second, shorter block of level learning.
const shortBlock = time.Millisecond

// prePinWindow is how long before a DEVSLP assertion a block counts as
// the level the drive held before it.
const prePinWindow = 500 * time.Millisecond

// blockScale is one block length's blocks.
type blockScale struct {
	per    int // samples per block
	skip   int // samples left to drop before the first block of a stretch
	sum    float64
	n      int
	ring   [ringLen]float64 // the last block means of the stretch
	ringN  int
	hist   [numCtx]modeHist
	pre    modeHist     // blocks in the prePinWindow
	d1, d4 medReservoir // |differences| of block means at lags 1 and 4
	// dMP: |differences| of block means ringLen apart in a stretch under
	// max_performance, where the link holds one level (oneLevelSigma).
	dMP    reservoir
	blocks int

	// keepSteps: the long blocks keep steps (below), the only blocks whose
	// steps are read (naming, doublets); the short ones neither find them
	// nor keep sigmaEst, which only judges them.
	keepSteps bool
	// Steps within stretches (the long blocks only): pairs of block means
	// two apart that differ by more than stepSigmas of the block noise
	// found so far — which levels are entered from below without I/O
	// (background work) — and the first block of each stretch that began
	// at the end of an I/O (the level the link is at then).
	steps    []step
	stepSeen int
	stepKeep int // keep every stepKeep-th step once steps is full
	sigmaEst float64
	// fine are the steps beyond stepSigmas of sigma1, the block noise from
	// lag-1 differences alone, which a telegraph slower than a block
	// barely moves (sigmaEst takes lag 4 too, where its steps are; a
	// telegraph as wide as the gap between Slumber and DevSlp was then
	// inside its own threshold and never seen). Read only for the
	// telegraph's size (telegraphStep) when the steps above show none.
	fine             []step
	fineSeen, fineKp int
	sigma1           float64
	afterIO          bool
	starts           modeHist
}

// step is a change between two block means of one stretch.
type step struct{ from, to float64 }

// keepStep adds st to steps, keeping every keep-th of those seen once
// stepCap are held (every other one dropped, keep doubled): a thinned
// sample of the whole capture's steps in bounded memory.
func keepStep(steps *[]step, seen, keep *int, st step) {
	*seen++
	if *keep == 0 {
		*keep = 1
	}
	if *seen%*keep != 0 {
		return
	}
	*steps = append(*steps, st)
	if len(*steps) >= stepCap {
		s, k := *steps, 0
		for j := 0; j < len(s); j += 2 {
			s[k] = s[j]
			k++
		}
		*steps = s[:k]
		*keep *= 2
	}
}

const (
	stepSigmas = 6
	stepCap    = 8192
)

// ringLen is how many block means of a stretch the ring keeps: the lag of
// dMP's differences, 160 ms of 10 ms blocks — past the longest
// correlation of the meter noises the campaign draws but for the slowest
// level steps (redrawn every 100 ms on average, most pairs straddle one).
const ringLen = 16

func (b *blockScale) reset() { b.n, b.sum, b.ringN = 0, 0, 0 }

// block completes the block being filled and returns its mean.
func (b *blockScale) block(ctx learnCtx, pre bool) float64 {
	m := b.sum / float64(b.n)
	b.sum, b.n = 0, 0
	b.hist[ctx].add(m)
	if pre {
		b.pre.add(m)
	}
	b.blocks++
	if b.afterIO {
		b.starts.add(m)
		b.afterIO = false
	}
	if b.keepSteps && b.blocks%256 == 0 {
		b.sigmaEst = b.sigma()
		if m1 := b.d1.median(); !math.IsNaN(m1) {
			b.sigma1 = stat.MADScale * m1 / math.Sqrt2
		}
	}
	if b.keepSteps && b.ringN >= 2 && b.sigmaEst > 0 {
		from := b.ring[(b.ringN-2)%ringLen]
		d := math.Abs(m - from)
		if d > stepSigmas*b.sigmaEst {
			keepStep(&b.steps, &b.stepSeen, &b.stepKeep, step{from, m})
		}
		if d > stepSigmas*b.sigma1 && b.sigma1 > 0 {
			keepStep(&b.fine, &b.fineSeen, &b.fineKp, step{from, m})
		}
	}
	// Without steps their medians are asked for only at the end: the
	// values are kept, the median selected then (medReservoir.median
	// without its heaps), not kept as they come.
	if b.ringN >= 1 {
		if x := math.Abs(m - b.ring[(b.ringN-1)%ringLen]); b.keepSteps {
			b.d1.add(x)
		} else {
			b.d1.reservoir.add(x)
		}
	}
	if b.ringN >= 4 {
		if x := math.Abs(m - b.ring[(b.ringN-4)%ringLen]); b.keepSteps {
			b.d4.add(x)
		} else {
			b.d4.reservoir.add(x)
		}
	}
	if b.ringN >= ringLen && ctx == ctxMaxPerf {
		b.dMP.add(math.Abs(m - b.ring[b.ringN%ringLen]))
	}
	b.ring[b.ringN%ringLen] = m
	b.ringN++
	return m
}

// addRun takes a run of samples, one by one as add does; the means of
// the long blocks it completes go to cy (nil: none) while it holds fewer
// than cycleBlocks. Within a block only the sum moves, so the samples of
// one are summed in a loop of their own, in order.
func (b *blockScale) addRun(run []float64, ctx learnCtx, pre bool, cy *[]float64) {
	for k := 0; k < len(run); {
		if b.skip > 0 {
			d := min(b.skip, len(run)-k)
			b.skip -= d
			k += d
			continue
		}
		e := min(len(run), k+b.per-b.n)
		sum := b.sum
		for _, w := range run[k:e] {
			sum += w
		}
		b.sum, b.n = sum, b.n+e-k
		k = e
		if b.n < b.per {
			return
		}
		if m := b.block(ctx, pre); cy != nil && len(*cy) < cycleBlocks {
			*cy = append(*cy, m)
		}
	}
}

// railSeen tracks whether a rail ever read more than one value.
type railSeen struct {
	n        uint64
	i0       units.Amps
	v0       units.Volts
	constant bool
}

func newLevelLearner(port int, name string, rails []int, p *pass1, c *Clock, opts Options) *levelLearner {
	l := &levelLearner{port: port, name: name, rails: rails, totalMin: math.Inf(1), totalMax: math.Inf(-1), quantum: readingQuantum{q: math.Inf(1)},
		noDevSlp: driveClaimsNoDevSlp(p.devslp.support[port])}
	for i, d := range []time.Duration{levelBlock, shortBlock} {
		l.scales[i].per = max(1, int(math.Round(float64(d)/c.NsPerSample)))
	}
	l.scales[0].keepSteps = true
	if ss := p.busy[port]; ss != nil {
		l.busy = activityCursor{spans: ss.spans}
	}
	pins, _ := p.pinSpans(port, c)
	l.pin = activityCursor{spans: pins}
	var entry, pre []span
	last := int64(math.MinInt64)
	for _, sp := range pins {
		entry = append(entry, span{sp.s, min(sp.e, sp.s+int64(opts.DevSlpAllowance))})
		if from := max(last+1, sp.s-int64(prePinWindow)); from < sp.s {
			pre = append(pre, span{from, sp.s - 1})
		}
		last = sp.e
	}
	l.entry, l.pre = activityCursor{spans: entry}, activityCursor{spans: pre}
	l.cycles = make([]pinCycle, len(pins))
	l.pol = newPolicyCursor(p.policies, port)
	// The block phase is drawn afresh for each quiet stretch (see stretch),
	// from a generator seeded by the port: the same capture gives the same
	// blocks in every run.
	l.rng = rand.New(rand.NewPCG(uint64(port), 0x1e4e15))
	l.postT.per = max(1, int(math.Round(float64(postBin)/c.NsPerSample)))
	l.rail = make([]railSeen, len(rails))
	for i := range l.rail {
		l.rail[i].constant = true
	}
	return l
}

// policyCursor walks a port's ALPM policy events (its own and every
// port's, by time) forward in host time.
type policyCursor struct {
	pol []policyEvent
	i   int      // the next event
	ctx learnCtx // the context in force before pol[i]
}

// newPolicyCursor is the cursor over the events of all for port (port 0:
// every port's).
func newPolicyCursor(all []policyEvent, port int) policyCursor {
	var c policyCursor
	for _, e := range all {
		if e.port == 0 || e.port == port {
			c.pol = append(c.pol, e)
		}
	}
	sort.SliceStable(c.pol, func(a, b int) bool { return c.pol[a].t < c.pol[b].t })
	return c
}

// at advances to host time t and returns the policy context in force.
func (c *policyCursor) at(t int64) learnCtx {
	for c.i < len(c.pol) && c.pol[c.i].t <= t {
		c.ctx = policyCtx(c.pol[c.i].policy)
		c.i++
	}
	return c.ctx
}

// until is the time the context at last returned holds until: the next
// policy event's (math.MaxInt64: none).
func (c *policyCursor) until() int64 {
	if c.i < len(c.pol) {
		return c.pol[c.i].t
	}
	return math.MaxInt64
}

// policyAt advances to host time t and returns the policy context in force.
func (l *levelLearner) policyAt(t int64) learnCtx { return l.pol.at(t) }

// nextPin is the index of the first assertion after host time t.
func (l *levelLearner) nextPin(t int64) int {
	sp := l.pin.spans
	return sort.Search(len(sp), func(i int) bool { return sp[i].s > t })
}

// breakStretch ends the quiet stretch: the blocks being filled are dropped.
func (l *levelLearner) breakStretch() {
	l.inQuiet, l.lastIO = false, false
	l.postT.busy(false)
	for i := range l.scales {
		l.scales[i].reset()
	}
}

// stretch starts a quiet stretch. Its first blocks start a random number
// of samples in: the link's timers run from the end of the I/O, so blocks
// aligned to it would put each timer's step at the same place in a block
// every time, and the mixed block means would pile up into a false level.
func (l *levelLearner) stretch(ctx learnCtx, pre bool) {
	l.inQuiet, l.bctx, l.bpre = true, ctx, pre
	for i := range l.scales {
		b := &l.scales[i]
		b.reset()
		b.skip = l.rng.IntN(b.per)
		b.afterIO = l.lastIO
	}
	l.lastIO = false
}

// addFrom adds the drive's samples ws[j:] (sample index first+j on, none
// NaN) for as long as what add asks of the host's record — I/O, the entry
// allowance, the pin, the pre-pin window, the policy — answers as it did
// for the first: those answers are found once, with the time they hold
// until, not per sample (with the same answers, since each cursor only
// moves forward; a time that goes back ends the run). It returns the index
// after the last sample added, at least j+1.
func (l *levelLearner) addFrom(ws []float64, j int, first uint64, c *Clock) int {
	t := int64(c.Host(first + uint64(j)))
	pol, until := l.policyAt(t), l.policyUntil()
	io := l.busy.at(t) == Busy
	until = min(until, holdsUntil(&l.busy, t))
	held := io
	if !io {
		held = l.entry.at(t) == Busy
		until = min(until, holdsUntil(&l.entry, t))
	}
	ctx := pol
	var cy *[]float64 // the cycle list a 10 ms block goes to
	pre := false
	if !held {
		if l.pin.at(t) == Busy {
			ctx = ctxPin
			cy = &l.cycles[l.pin.i].pin
		}
		until = min(until, holdsUntil(&l.pin, t))
		pre = l.pre.at(t) == Busy
		until = min(until, holdsUntil(&l.pre, t))
		if pre {
			k := l.nextPin(t)
			if k < len(l.cycles) {
				cy = &l.cycles[k].pre
			}
			if k < len(l.pin.spans) {
				until = min(until, l.pin.spans[k].s) // nextPin holds until that pin starts
			}
		}
	}
	e := runEnd(ws, j, first, t, until, c)
	run := ws[j:e]
	l.samples += uint64(len(run))
	l.totalMin, l.totalMax = minMax(run, l.totalMin, l.totalMax)
	if held {
		// As per sample: each of these leaves the same state again.
		l.breakStretch()
		l.postT.busy(io)
		l.lastIO = io
	} else {
		l.addQuiet(first+uint64(j), t, run, ctx, pre, cy, c)
	}
	return e
}

// runEnd is where addFrom's run from ws[j] (index first+j, host time t)
// ends: at the first NaN, at the first sample whose host time is before
// the one before it or at or past until, or at the end of ws — as asked
// sample by sample. On a clock whose host time cannot go back (a positive
// rate; the times in int64's range) it is the first at or past until, found
// by bisection rather than per sample.
func runEnd(ws []float64, j int, first uint64, t, until int64, c *Clock) int {
	e := len(ws)
	if c.NsPerSample > 0 && !math.IsInf(c.NsPerSample, 0) && !math.IsNaN(c.Base) && !math.IsInf(c.Base, 0) &&
		math.Abs(float64(c.Host(first+uint64(len(ws)-1)))) < 1<<62 && math.Abs(float64(t)) < 1<<62 {
		// Host is then non-decreasing in the index (each step of its
		// arithmetic is), so the samples before until are a prefix.
		if lo := j + 1; lo < e && int64(c.Host(first+uint64(e-1))) >= until {
			hi := e - 1 // Host(hi) >= until; the first such is in [lo, hi]
			for lo < hi {
				m := lo + (hi-lo)/2
				if int64(c.Host(first+uint64(m))) >= until {
					hi = m
				} else {
					lo = m + 1
				}
			}
			e = lo
		}
		for k := j + 1; k < e; k++ {
			if math.IsNaN(ws[k]) {
				return k
			}
		}
		return e
	}
	k := j + 1
	for last := t; k < len(ws) && !math.IsNaN(ws[k]); k++ {
		tk := int64(c.Host(first + uint64(k)))
		if tk < last || tk >= until {
			break
		}
		last = tk
	}
	return k
}

// minMax is the least and the greatest of run (no NaN in it), mn and mx:
// as the builtin min and max (−0 below +0) folded over them one by one,
// which order does not change; two chains at a time.
func minMax(run []float64, mn, mx float64) (float64, float64) {
	mn1, mx1 := mn, mx
	k := 0
	for ; k+2 <= len(run); k += 2 {
		a, b := run[k], run[k+1]
		mn, mx = min(mn, a), max(mx, a)
		mn1, mx1 = min(mn1, b), max(mx1, b)
	}
	if k < len(run) {
		mn, mx = min(mn, run[k]), max(mx, run[k])
	}
	return min(mn, mn1), max(mx, mx1)
}

// addQuiet takes a run of quiet samples from index i (host time t) on:
// power run, in policy context ctx, in the pre-pin window or not, their
// 10 ms blocks going to cy (nil: none). Each block scale takes the run
// whole (blockScale.addRun), then the profile after I/O.
func (l *levelLearner) addQuiet(i uint64, t int64, run []float64, ctx learnCtx, pre bool, cy *[]float64, c *Clock) {
	l.quietN += uint64(len(run))
	l.quantum.add(run)
	if !l.inQuiet || ctx != l.bctx || pre != l.bpre {
		l.stretch(ctx, pre) // once: it leaves inQuiet, bctx and bpre as the run's
	}
	l.scales[0].addRun(run, ctx, pre, cy)
	for k := 1; k < len(l.scales); k++ {
		l.scales[k].addRun(run, ctx, pre, nil)
	}
	p := &l.postT
	switch {
	case ctx == ctxPin || ctx == ctxMaxPerf:
		p.on, p.afterIO = false, false // what postAdd does, for every sample
	case !p.on && !p.afterIO: // postAdd does nothing with any of them
	default:
		for k, w := range run {
			if k > 0 {
				t = int64(c.Host(i + uint64(k)))
			}
			l.postAdd(t, w, ctx)
		}
	}
}

// policyUntil is the time the policy context policyAt last returned holds
// until: the next policy event's.
func (l *levelLearner) policyUntil() int64 { return l.pol.until() }

// holdsUntil is the first time after t (the last time c was asked about)
// at which c.at may answer other than it did for t: where at's comparisons
// with the span it is on flip, or where it would move on to the next.
func holdsUntil(c *activityCursor, t int64) int64 {
	u := int64(math.MaxInt64)
	if len(c.spans) == 0 {
		return u
	}
	if c.i+1 < len(c.spans) {
		u = c.spans[c.i+1].s
	}
	sp := c.spans[c.i]
	// The edges wrap as at's sums do: an edge past MaxInt64 never comes.
	for _, edge := range [...]int64{sp.s, sp.e + 1, sp.e + c.settle + 1} {
		if edge > t && edge < u {
			u = edge
		}
	}
	return u
}

// seeRails notes the rails' raw readings of one sample (for the
// one-value check).
func (l *levelLearner) seeRails(k int, v []units.Volts, i []units.Amps) {
	r := &l.rail[k]
	if r.n == 0 {
		r.v0, r.i0 = v[0], i[0]
	}
	// A rail known to change needs no looking through its runs again.
	for j := 0; r.constant && j < len(i); j++ {
		if i[j] != r.i0 || v[j] != r.v0 {
			r.constant = false
		}
	}
	r.n += uint64(len(i))
}

// reservoir keeps a bounded, evenly thinned sample of a stream of values
// for a median.
type reservoir struct {
	v      []float64
	stride int
	seen   int
	max    int // values kept at most; 0: reservoirCap
}

const reservoirCap = 1 << 14

func (r *reservoir) add(x float64) {
	if r.stride == 0 {
		r.stride = 1
	}
	r.seen++
	if r.seen%r.stride != 0 {
		return
	}
	r.v = append(r.v, x)
	if limit := cmp.Or(r.max, reservoirCap); len(r.v) >= limit {
		k := 0
		for j := 0; j < len(r.v); j += 2 {
			r.v[k] = r.v[j]
			k++
		}
		r.v = r.v[:k]
		r.stride *= 2
	}
}

// median is the reservoir's median, NaN when empty.
func (r *reservoir) median() float64 {
	return stat.UpperMedian(r.v)
}

// LevelLearning is what the learning pass found for one drive: the levels
// and the evidence behind each, or why none could be learned (Err).
type LevelLearning struct {
	Levels detect.Levels `json:"levels"`
	// BlockMs is the block the levels were learned over; BlockSigmaW the
	// noise of one block mean (from differences of blocks 40 ms apart,
	// which the level steps barely move), the modes' bandwidth.
	BlockMs     units.Milliseconds `json:"block_ms"`
	BlockSigmaW units.Watts        `json:"block_sigma_w"`
	QuietS      units.Seconds      `json:"quiet_s"`
	// LevelStepW is how far the meter's level steps (a random telegraph,
	// popcorn noise) move a level: the widest cluster of modes merged as
	// one level, or the steps the capture shows (0: none found).
	LevelStepW units.Watts `json:"level_step_w,omitempty"`
	// IdleSpreadW is how wide active idle's blocks under max_performance
	// read, the 5th to 95th percentile (one level: level steps and slow
	// noise included; absent without enough of them).
	IdleSpreadW units.Watts `json:"idle_spread_w,omitempty"`
	// Modes are the modes of the quiet block means, highest first, with
	// the state each was named (or "" when it names none: background above
	// idle, or a mode the states have no room for) and the time behind it
	// by what the host had set.
	Modes []LearnedMode `json:"modes"`
	// Evidence says, per state, what named its level.
	Evidence map[string]string `json:"evidence,omitempty"`
	Err      string            `json:"error,omitempty"`
	// readingStep is the readings' own step (W: the smallest difference
	// between neighbouring quiet readings) when it is coarser than the LSB
	// the capture states, or it states none: the DevSlp intervals take it
	// as the meter's resolution.
	readingStep float64
	// idleMP: the idle level is the max_performance mode's, the mode over
	// every context holding a lower level too (naming.nameIdle): active
	// idle is read over max_performance quiet time (driveProc.activeIdle).
	idleMP bool
}

// LearnedMode is one mode of a drive's quiet block means.
type LearnedMode struct {
	W     units.Watts              `json:"w"`
	S     units.Seconds            `json:"s"`               // quiet time in the mode's region
	ByCtx map[string]units.Seconds `json:"by_context_s"`    // of which, by what the host had set
	State string                   `json:"state,omitempty"` // the state it was named
}

// learn learns the drive's levels from its blocks.
func (l *levelLearner) learn(h capture.Header, opts Options) LevelLearning {
	blockS := float64(h.RateHz.Span(float64(l.scales[0].per)))
	out := LevelLearning{BlockMs: units.Milliseconds(blockS * 1e3), QuietS: h.RateHz.Span(float64(l.quietN))}
	fail := func(format string, a ...any) LevelLearning {
		out.Err = fmt.Sprintf(format, a...)
		return out
	}
	if l.samples == 0 {
		return fail("no samples")
	}
	var zero, stuck []string
	for k, r := range l.rail {
		name := h.Channels[l.rails[k]].Name()
		switch {
		case !r.constant || r.n < 2:
		case r.i0 == 0:
			zero = append(zero, name)
		default:
			stuck = append(stuck, fmt.Sprintf("channel %s reads one value (%g V, %g A) in all %d samples", name, float64(r.v0), float64(r.i0), r.n))
		}
	}
	if len(stuck) > 0 {
		return fail("levels not learned: %s — a stuck or disconnected sensor, not a drive's power", strings.Join(stuck, "; "))
	}
	if len(zero) == len(l.rail) {
		return fail("levels not learned: every rail (%s) reads 0 A throughout: no power to learn levels from", strings.Join(zero, ", "))
	}
	if l.quietN == 0 {
		return fail("levels not learned: no quiet time (I/O was outstanding, or DEVSLP entering, throughout)")
	}
	if l.scales[0].blocks == 0 {
		return fail("levels not learned: no quiet stretch as long as one %.0f ms block (%.0f ms of quiet time in all, between I/O)", blockS*1e3, out.QuietS*1e3)
	}
	if q := l.scales[0].blocks; q < minLearnBlocks {
		return fail("levels not learned: %d ms of quiet time in whole %.0f ms blocks (no I/O outstanding, DEVSLP not entering); at least %.0f ms are needed",
			int(math.Round(float64(q)*blockS*1e3)), blockS*1e3, minLearnBlocks*blockS*1e3)
	}
	return l.nameLevels(out, h, blockS)
}

// readingQuantum is the smallest non-zero step between neighbouring quiet
// readings (q, W; +Inf before one) and how many steps were that one (n: a
// step under 1.5 q, so float32 storage's rounding of one LSB counts as it).
type readingQuantum struct {
	q       float64
	n       uint64
	adopted bool // another drive's on the same meter (shareQuantum)
}

// add takes a quiet run's neighbouring differences.
func (r *readingQuantum) add(run []float64) {
	for k := 1; k < len(run); k++ {
		d := math.Abs(run[k] - run[k-1])
		switch {
		case !(d > 0) || d >= 1.5*r.q:
		case d < r.q:
			if d*1.5 <= r.q {
				r.n = 0 // the earlier ones were multiples of this step
			}
			r.q = d
			r.n++
		default:
			r.n++
		}
	}
}

// shareQuantum gives a drive whose quiet readings show no quantum the
// best-supported one of another drive on the same meter: readings whose
// noise is under a twentieth of a step may never cross one (a 0.3 mW floor
// 0.1 step off the lattice read 16 µW high with an interval of nW, while the
// drive beside it showed the meter's 0.16 mW step 614 times:
// TestFloorIntervalHoldsTheReadingsStep).
func shareQuantum(ll []*levelLearner) {
	best := -1
	for i, l := range ll {
		if !math.IsInf(l.quantum.step(l.quietN), 1) && (best < 0 || l.quantum.n > ll[best].quantum.n) {
			best = i
		}
	}
	if best < 0 {
		return
	}
	for _, l := range ll {
		if math.IsInf(l.quantum.step(l.quietN), 1) {
			l.quantum = readingQuantum{q: ll[best].quantum.q, n: ll[best].quantum.n, adopted: true}
		}
	}
}

// Minimum support of a reading quantum: quantumMinN steps and
// quantumMinShare of the quiet samples' neighbour pairs.
const (
	quantumMinN     = 20
	quantumMinShare = 1e-4
)

// step is the readings' quantum over quiet quiet samples, or +Inf where the
// data do not show one: a quantised meter's step recurs wherever noise
// moves a reading across a boundary (a share of the pairs of order σ/LSB),
// while readings without noise change only where the level does — a
// noise-free capture's smallest step was its drive's DevSlp entry, 0.39 W,
// once a cycle, taken for the LSB: every interval ±0.22 W on a 0.4 W idle
// (TestNoQuantumFromLevelSteps).
func (r readingQuantum) step(quiet uint64) float64 {
	if r.adopted {
		return r.q
	}
	if r.n < quantumMinN || float64(r.n) < quantumMinShare*float64(quiet) {
		return math.Inf(1)
	}
	return r.q
}
