package states

import (
	"encoding/json"
	"fmt"
	"math"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/idlewatt/idlewatt/hostclock"
	"github.com/idlewatt/idlewatt/internal/stat"
	"github.com/idlewatt/idlewatt/units"
)

// Num is a measured value of quantity Q (units.Watts, units.Milliseconds)
// that may be absent: NaN in code, null in JSON (never 0, never a number
// from another state). Q only types it: a floor in W and an entry in ms
// are different types, and PM takes a value and its interval of one.
type Num[Q ~float64] float64

// NumW is a power that may be absent; NumMs a time in ms.
type (
	NumW  = Num[units.Watts]
	NumMs = Num[units.Milliseconds]
)

// NoneW and NoneMs are absent values.
var (
	NoneW  = NumW(math.NaN())
	NoneMs = NumMs(math.NaN())
)

// Ok reports whether the value is present.
func (n Num[Q]) Ok() bool { return !math.IsNaN(float64(n)) && !math.IsInf(float64(n), 0) }

// Value is n as its quantity (NaN when absent).
func (n Num[Q]) Value() Q { return Q(n) }

// MarshalJSON writes null for an absent value.
func (n Num[Q]) MarshalJSON() ([]byte, error) {
	if !n.Ok() {
		return []byte("null"), nil
	}
	return strconv.AppendFloat(nil, float64(n), 'g', -1, 64), nil
}

// UnmarshalJSON reads null as absent.
func (n *Num[Q]) UnmarshalJSON(b []byte) error {
	if string(b) == "null" {
		*n = Num[Q](math.NaN())
		return nil
	}
	var f float64
	if err := json.Unmarshal(b, &f); err != nil {
		return err
	}
	*n = Num[Q](f)
	return nil
}

// Sample is one drive power reading on the aligned host clock.
type Sample struct {
	T hostclock.Time // host monotonic ns
	W float64        // watts, all rails of the drive
}

// Timing is what the host and the meter did in one DevSlp cycle, on the
// aligned host clock (ns). Assert and Deassert are when the meter saw the
// pin change when it reports pin events, else when the host asked.
type Timing struct {
	Cycle         int
	Start         hostclock.Time // start of the settle period
	Assert        hostclock.Time
	Deassert      hostclock.Time
	ProbeIssue    hostclock.Time // the first read after deassertion (0 = none)
	ProbeComplete hostclock.Time
	ProbeErr      bool
	End           hostclock.Time
	// HostStallMs is the host's worst scheduling stall while the read was
	// out (the rig's canary), 0 if none was recorded.
	HostStallMs units.Milliseconds
	// EntryOnly: an entry cycle ("devslp-cycle:N:entry"), whose pin was
	// held only as long as the entry latency needs (devslp.entry_hold).
	EntryOnly bool
}

// Criteria are a DevSlp verdict's limits.
type Criteria struct {
	LimitW       units.Watts        `json:"limit_w"`        // floor at or below this
	EntryBoundMs units.Milliseconds `json:"entry_bound_ms"` // entry latency at or below this
	MDATMs       units.Milliseconds `json:"mdat_ms"`        // floor held at least this
	DETOMs       units.Milliseconds `json:"deto_ms"`        // exit latency (to the first read) at or below this
}

// DefaultCriteria are the ATA defaults and idlewatt's floor limit.
func DefaultCriteria() Criteria {
	return Criteria{LimitW: 0.005, EntryBoundMs: 100, MDATMs: 10, DETOMs: 20}
}

// Outcome is a verdict.
type Outcome string

// Outcomes. Only Pass is a success; NotSupported is no failure of the
// drive, but nothing was verified.
const (
	Pass         Outcome = "pass"
	Fail         Outcome = "fail"
	Inconclusive Outcome = "inconclusive"
	NotSupported Outcome = "not_supported"
)

// worse orders outcomes for combining checks.
func worse(a, b Outcome) Outcome {
	rank := map[Outcome]int{Pass: 0, Inconclusive: 1, Fail: 2}
	if rank[b] > rank[a] {
		return b
	}
	return a
}

// Cycle is one DevSlp cycle's measured quantities (see docs/analysis.md,
// "DevSlp quantities") with their 95 % half-widths, and its outcome.
type Cycle struct {
	Cycle   int     `json:"cycle"`
	Outcome Outcome `json:"outcome"`
	// EntryOnly: an entry cycle (devslp.entry_hold). Its floor, over a
	// short hold, is reported but neither pooled nor judged against the
	// limit unless it is clearly above it: the full cycles measure the
	// floor (docs/analysis.md, "Entry cycles").
	EntryOnly bool     `json:"entry_only,omitempty"`
	Reasons   []string `json:"reasons,omitempty"`
	PreCycleW NumW     `json:"pre_cycle_w"` // resting power before assertion
	// PreCycleU95W is PreCycleW's 95 % half-width (see FloorU95W).
	PreCycleU95W NumW  `json:"pre_cycle_u95_w"`
	FloorW       NumW  `json:"floor_w"`
	FloorU95W    NumW  `json:"floor_u95_w"`
	EntryMs      NumMs `json:"entry_ms"`
	EntryU95Ms   NumMs `json:"entry_u95_ms"`
	RiseMs       NumMs `json:"rise_ms"`
	RiseU95Ms    NumMs `json:"rise_u95_ms"`
	HeldMs       NumMs `json:"held_ms"`
	HeldU95Ms    NumMs `json:"held_u95_ms"`
	ExitMs       NumMs `json:"exit_ms"`
	ExitU95Ms    NumMs `json:"exit_u95_ms"`
	ReturnedW    NumW  `json:"returned_w"` // power after the read, nearest the pre-cycle level
	// ExitHostLate: the host issued the read late or stalled while it was
	// out, so exit_ms is the host's as much as the drive's; it is left out
	// of the pooled exit.
	ExitHostLate bool `json:"exit_host_late,omitempty"`
	// HostStallMs is the host's worst scheduling stall while the read was
	// out, as the rig's canary measured it (0: none of 1 ms or more).
	HostStallMs units.Milliseconds `json:"host_stall_ms"`
	// FloorSamples is how many samples the floor is the mean of.
	FloorSamples int `json:"floor_samples"`
	// Host times (ns) of the fitted entry and rise, 0 = none (charts).
	EntryAt hostclock.Time `json:"-"`
	RiseAt  hostclock.Time `json:"-"`
	// entry is what the joint entry fit (Summarise) needs of a cycle that
	// entered: its samples from 10 ms before the pin.
	entry *entryWindow
	// floor and pre are the floor's and the pre-cycle level's uncertainty
	// in parts, for pooling: the statistical part averages over cycles,
	// the meter's resolution and calibration do not.
	floor, pre levelU
	// entryCut and riseCut are what clamping the latency at 0 took off
	// (ms): the cycles are pooled unclamped, so that cycles at the pin,
	// half of which read −½ period and are shown as 0, do not bias the
	// pooled latency up by a quarter period.
	entryCut, riseCut float64
	// periodMs is the sample period; noise the cycle's noise model.
	periodMs float64
	noise    stat.Noise
}

// clampLatency is a latency that cannot be negative, and what clamping it
// took off.
func clampLatency(ms float64) (NumMs, float64) {
	if ms < 0 {
		return 0, -ms
	}
	return NumMs(ms), 0
}

// levelU is a level's uncertainty in parts: the standard error of its
// statistical part with its degrees of freedom, and the standard
// uncertainty of the meter's (resolution, calibration), which does not
// shrink with more samples or more cycles.
type levelU struct {
	se, dof, sys float64
}

// u95 is the 95 % half-width of a level with uncertainty u.
func (u levelU) u95() float64 { return stat.Expanded(u.se*u.se, u.dof, u.sys) }

// entryWindow is a cycle's power from 10 ms before the pin to at most
// jointEntryMax after it (or the end of the entry's fit window).
type entryWindow struct {
	w      []float64
	pin    int     // index of the pin's sample in w
	base   float64 // the pre-cycle level
	period float64 // ns
}

// jointEntryMax bounds the samples a cycle keeps for the joint entry fit.
const jointEntryMax = time.Second

func (c *Cycle) judge(o Outcome, format string, a ...any) {
	c.Outcome = worse(c.Outcome, o)
	if o != Pass {
		c.Reasons = append(c.Reasons, string(o)+": "+fmt.Sprintf(format, a...))
	}
}

// checkAtMost judges x ± u against "x ≤ bound": pass when the whole
// interval is inside, fail when it is wholly outside.
func checkAtMost[Q ~float64](x, u, bound Q) Outcome {
	switch {
	case x+u <= bound:
		return Pass
	case x-u > bound:
		return Fail
	}
	return Inconclusive
}

// JudgeOptions carry what a cycle's judgement needs besides its samples.
type JudgeOptions struct {
	Criteria Criteria
	// ClockU95Ms is the 95 % uncertainty of a host time against a meter
	// time (the exit latency compares the read's completion, a host time,
	// with the pin's release the meter saw).
	ClockU95Ms units.Milliseconds
	// RunStallMs is the worst host stall the rig's canary recorded anywhere
	// in the run (every port's devslp-host-stall-ms notes), 0 if none: a
	// read with no stall of its own recorded may still have suffered one
	// that large, as the canary, one thread, does not see every thread's.
	RunStallMs units.Milliseconds
	// Rails are the drive's rails as the capture states them: the meter's
	// resolution and calibration, in every level's interval (none stated:
	// the intervals hold the noise alone).
	Rails []stat.Rail
}

// instrumentU is the standard uncertainty of a level from the meter: its
// resolution, dithered by the readings' scatter sd about the level (a
// level under one LSB read without noise keeps its whole ±½-LSB bias), and
// its stated calibration, in quadrature.
func (jo JudgeOptions) instrumentU(level, sd float64) float64 {
	if len(jo.Rails) == 0 {
		return 0
	}
	res, _ := stat.ResolutionU(jo.Rails, level, stat.DitherSigma(sd, stat.QuantStep(jo.Rails)))
	cal, _ := stat.CalibrationU(jo.Rails, level)
	return math.Hypot(res, cal)
}

// levelOf is the mean of x with its uncertainty in parts: batch means with
// a batch length from the data's own autocorrelation (stat.MeanStdErr) and
// the meter's term.
//
// cycle, when not empty, is the noise model of the whole cycle (robust to
// its level steps): a floor of a few hundred ms holds only some tens of
// correlation times of noise correlated over 5–20 ms, too few for its own
// autocorrelation to show all of it (AR(1) of 7–14 ms: floors held the
// truth in 61 of 70 cycles); the standard error is the larger of the
// segment's own and its variance × the cycle's integrated autocorrelation
// time over N.
func (jo JudgeOptions) levelOf(x []float64, cycle stat.Noise) (stat.MeanSE, levelU) {
	m := seAtLeast(stat.MeanStdErr(x), x, cycle)
	return m, levelU{se: m.SE, dof: m.Dof, sys: jo.instrumentU(m.Mean, math.Sqrt(stat.Var(x)))}
}

// seAtLeast raises the standard error of m, the mean of x, to Var(x) ×
// the cycle's integrated autocorrelation time over N (see levelOf).
func seAtLeast(m stat.MeanSE, x []float64, cycle stat.Noise) stat.MeanSE {
	if cycle.Ok && m.N > 1 {
		if v := stat.Var(x) * cycle.TauInt / float64(m.N); v > m.SE*m.SE {
			m.SE = math.Sqrt(v)
			m.Dof = math.Min(m.Dof, math.Max(1, float64(m.N)/cycle.TauInt-1))
		}
	}
	return m
}

// restingLevel is the resting power over w[a:b]: the mean of the samples
// of its windows whose mean is within 4 standard deviations of a window
// mean of the lower quartile of the window means (a GC burst can cover
// half the windows; the quietest quarter is resting), with its standard
// error by batch means. A window is restWindow (not the noise's
// correlation length, which may be longer than the gaps between bursts);
// the standard deviation of its mean is the larger of
// the noise model's (stat.Noise.MeanVar: σ from the plateau of the robust
// variogram, which bursts do not inflate, and the correlation between
// samples) and the robust spread of neighbouring windows' differences —
// not σ/√n of white noise from first differences, which under AR(1) noise
// of 1–10 ms is σ·√(1 − ρ)/√n, a band far inside the noise, so that only
// the lowest windows were kept: 3–16 mW low, and drives that entered
// DevSlp were failed as ignoring it. false when no window fits.
func restingLevel(w []float64, a, b int, period float64, cycle stat.Noise, holdSW float64) (m stat.MeanSE, kept []float64, ok bool) {
	if a < 0 || b > len(w) || b-a < 2 {
		return m, nil, false
	}
	x := w[a:b]
	nm := cycle // the cycle's noise, robust to its steps
	if !nm.Ok {
		nm = stat.NoiseOf(x)
	}
	per := min(max(1, int(math.Round(restWindow/period))), len(x))
	var means []float64
	for i := 0; i+per <= len(x); i += per {
		means = append(means, mean(x[i:i+per]))
	}
	sorted := append([]float64(nil), means...)
	sort.Float64s(sorted)
	q1 := sorted[len(sorted)/4]
	// The spread of a window mean: the noise model's, or that of the
	// differences between neighbouring windows when larger (hum a window
	// does not average out) — neighbours both inside the band only, so
	// that bursts and steps, which may cover half the windows, do not
	// widen it; the band and the spread are refined together.
	sw := math.Sqrt(nm.MeanVar(per))
	if !nm.Ok {
		sw = stat.DiffSigma(x) / math.Sqrt(float64(per))
	}
	// Nor below the spread of a window mean in the hold (holdWindowSpread):
	// the meter's level steps (a random telegraph, popcorn noise) move
	// whole windows, rarely between neighbours, so the neighbours'
	// differences miss them and the band kept only the lower state's
	// windows — the resting level read low by half a step (campaign seed 1,
	// the steps family: 0.3–0.8 mW on 3–14 mW).
	sw = math.Max(sw, holdSW)
	for range 5 {
		th := q1 + 4*sw
		var in []float64
		for i := 1; i < len(means); i++ {
			if means[i] <= th && means[i-1] <= th {
				in = append(in, means[i]-means[i-1])
			}
		}
		if len(in) < 3 {
			break
		}
		d := make([]float64, len(in)+1)
		for i, v := range in {
			d[i+1] = d[i] + v // DiffSigma of the differences' running sum is theirs
		}
		s := stat.DiffSigma(d)
		if !(s > sw*1.01) {
			break
		}
		sw = s
	}
	nk := 0
	for i, mw := range means {
		if mw <= q1+4*sw {
			kept = append(kept, x[i*per:(i+1)*per]...)
			nk++
		}
	}
	m = seAtLeast(stat.MeanStdErr(kept), kept, cycle)
	// Nor below the spread of the kept windows' means over √windows: 1/f
	// noise moves whole windows together more than 300 ms of samples
	// show in their autocorrelation.
	if se := sw / math.Sqrt(float64(nk)); se > m.SE {
		m.SE, m.Dof = se, math.Min(m.Dof, float64(max(1, nk-1)))
	}
	return m, kept, true
}

// holdWindowSpread is the robust spread (MAD) of the restWindow means of
// w[a:b] — the second half of the hold, where the drive rests at its floor
// (or, ignoring the pin, at its resting level) and the meter's noise at a
// window's scale shows whole, level steps included — 0 with fewer than 5
// windows.
func holdWindowSpread(w []float64, a, b int, period float64) float64 {
	per := max(1, int(math.Round(restWindow/period)))
	if a < 0 || b > len(w) || (b-a)/per < 5 {
		return 0
	}
	var means []float64
	for i := a; i+per <= b; i += per {
		means = append(means, mean(w[i:i+per]))
	}
	return stat.MAD(means)
}

// restWindow is restingLevel's shortest window, ns: one period of 50 Hz
// mains (1.2 of 60 Hz), so that hum averages out of a window mean rather
// than spreading the windows (5 ms windows of 50 Hz hum put the lower
// quartile a third of its amplitude low).
const restWindow = 20e6

// JudgeCycle measures one cycle from the samples that cover it (in time
// order, from Start to End of tm) and judges it against the criteria.
func JudgeCycle(tm Timing, samples []Sample, jo JudgeOptions) Cycle {
	c := Cycle{Cycle: tm.Cycle, EntryOnly: tm.EntryOnly, Outcome: Pass, PreCycleW: NoneW, PreCycleU95W: NoneW, FloorW: NoneW, FloorU95W: NoneW, EntryMs: NoneMs, EntryU95Ms: NoneMs,
		RiseMs: NoneMs, RiseU95Ms: NoneMs, HeldMs: NoneMs, HeldU95Ms: NoneMs, ExitMs: NoneMs, ExitU95Ms: NoneMs, ReturnedW: NoneW}
	if len(samples) < 16 || tm.Assert == 0 || tm.Deassert <= tm.Assert {
		c.judge(Inconclusive, "no power samples or pin changes cover the cycle")
		return c
	}
	j := newJudging(tm, samples, jo)
	c.periodMs = j.period / 1e6
	if !j.preCycle(&c) {
		return c
	}
	ke, fell := j.entry(&c)
	if !fell {
		return c
	}
	id := j.rise(&c, ke)
	j.floor(&c, ke, id)
	j.criteria(&c)
	return c.exit(tm, jo.Criteria, jo, j.period)
}

// judging is one cycle's samples as JudgeCycle reads them.
type judging struct {
	tm      Timing
	samples []Sample
	jo      JudgeOptions
	w       []float64
	period  float64 // ns
	pin     int     // the pin's sample
	nc      stat.Noise
	base    float64 // the pre-cycle level
	baseSE  float64
}

func newJudging(tm Timing, samples []Sample, jo JudgeOptions) *judging {
	j := &judging{tm: tm, samples: samples, jo: jo, period: samplePeriod(samples)}
	j.w = make([]float64, len(samples))
	for i, s := range samples {
		j.w[i] = s.W
	}
	j.pin = j.near(tm.Assert)
	j.nc = stat.NoiseOf(j.w) // the cycle's noise, robust to its steps
	return j
}

func (j *judging) idx(t hostclock.Time) int {
	return sort.Search(len(j.samples), func(i int) bool { return j.samples[i].T >= t })
}

// near is the sample whose time is nearest t: the meter stamps a pin event
// with the index of the sample it fell in, and a sample time computed a
// nanosecond below the event's (rounding) must not push the search for the
// change one sample late (before: every entry read one sample, 0.1 ms at
// 10 kS/s, against a true 0).
func (j *judging) near(t hostclock.Time) int { return j.idx(t.Add(-time.Duration(j.period / 2))) }

func msOf(d time.Duration) float64 { return float64(d) / 1e6 }

// preCycle is the pre-cycle level: the drive's resting power before the
// pin, GC bursts left out (restingLevel) — over the last 300 ms, or over
// the whole settle period when that is lower: a burst can cover the last
// 300 ms all but a few windows, and its level was then taken for the
// resting one (a broken drive at 136 mW after a 313 mW burst "fell" to a
// floor; accuracy campaign, seed 1, drive 73). (Only when clearly lower:
// the lower of two estimates of one level would be biased low.) false
// when the cycle is judged already.
func (j *judging) preCycle(c *Cycle) bool {
	tm, w := j.tm, j.w
	c.noise = j.nc
	hw := holdWindowSpread(w, j.idx(tm.Assert.Add(tm.Deassert.Sub(tm.Assert)/2)), j.idx(tm.Deassert.Add(-5*time.Millisecond)), j.period)
	rl, kept, ok := restingLevel(w, j.idx(tm.Assert.Add(-300*time.Millisecond)), j.pin, j.period, j.nc, hw)
	if !ok {
		c.judge(Inconclusive, "no samples before the assertion")
		return false
	}
	if tm.Start < tm.Assert.Add(-300*time.Millisecond) {
		// Or when the last 300 ms are no level at all — their kept windows
		// scatter three times as much as the settle period's: steps at
		// several heights covered them, and the lower quartile of their
		// windows was a step (a 28.8 mW drive read 126.8 ± 28 mW).
		if l, lk, ok := restingLevel(w, j.idx(tm.Start), j.pin, j.period, j.nc, hw); ok && (l.Mean < rl.Mean-4*math.Hypot(rl.SE, l.SE) || (rl.SE > 3*l.SE && l.Mean < rl.Mean)) {
			rl, kept = l, lk
		}
	}
	j.base, j.baseSE = rl.Mean, rl.SE
	c.pre = levelU{se: rl.SE, dof: rl.Dof, sys: j.jo.instrumentU(j.base, math.Sqrt(stat.Var(kept)))}
	c.PreCycleW, c.PreCycleU95W = NumW(j.base), NumW(c.pre.u95())
	return true
}

// entry is a step fit over the hold (from just before the assertion), the
// change searched from the assertion on; it returns the first floor
// sample and whether the power fell to a floor (false: the cycle is
// judged already). The window stops short of
// the release (5 ms, or a tenth of the hold): a wake seen a fraction of a
// millisecond before the meter's pin event is a far larger step than the
// entry and would capture the fit.
func (j *judging) entry(c *Cycle) (ke int, fell bool) {
	tm, w, base, pin, period := j.tm, j.w, j.base, j.pin, j.period
	hold := tm.Deassert.Sub(tm.Assert)
	ia, id := j.idx(tm.Assert.Add(-10*time.Millisecond)), j.idx(tm.Deassert.Add(-max(5*time.Millisecond, hold/10)))
	if id-ia < 8 {
		c.judge(Inconclusive, "too few samples while DEVSLP was asserted")
		return 0, false
	}
	// The level before the change is the pre-cycle power, known from the
	// 300 ms before the pin: fitting it from the 10 ms before the assertion
	// alone let noise place a small step anywhere in the hold.
	e, ok := fitStepFrom(w[ia:id], base, j.baseSE, pin-ia, id-ia-4, bootstrapRuns)
	if !ok {
		c.judge(Inconclusive, "too few samples while DEVSLP was asserted")
		return 0, false
	}
	ke = ia + e.K
	fitEnd := id
	id = j.idx(tm.Deassert)
	// Did it fall to a floor? The level after the step against the
	// pre-cycle level ÷ √2, with the level's own uncertainty: the geometric
	// midpoint between no fall (1) and the highest floor a drive may have,
	// half its Slumber level (docs/drive-profiles.md). Before, the bound was
	// half the pre-cycle level itself, so a floor at half of Slumber read
	// INCONCLUSIVE under any noise and had no value.
	post := stat.MeanStdErr(w[ke:id])
	fellTo := base / math.Sqrt2
	o := checkAtMost(post.Mean, 3*post.SE, fellTo)
	if o == Fail {
		// A drive that ignores the pin stays at its pre-cycle level over
		// the whole hold; one whose fit noise put the step late, over a
		// short noisy stretch, does not (AR(1) noise of 6 ms, 14 mW σ:
		// "stayed at 18 mW", a drive at 2 mW).
		if hold := stat.MeanStdErr(w[pin:id]); checkAtMost(hold.Mean, 3*hold.SE, fellTo) != Fail {
			o = Inconclusive
		}
	}
	switch o {
	case Fail:
		c.judge(Fail, "power stayed at %.2f mW while DEVSLP was asserted (pre-cycle %.2f mW): the drive ignores DEVSLP", post.Mean*1e3, base*1e3)
		*c = c.readWithoutDevSlp(tm)
		return 0, false
	case Inconclusive:
		c.judge(Inconclusive, "power fell to %.2f ± %.2f mW, not clearly below the pre-cycle %.2f mW ÷ √2", post.Mean*1e3, 3*post.SE*1e3, base*1e3)
		*c = c.readWithoutDevSlp(tm)
		return 0, false
	}
	c.EntryAt = j.samples[ke].T
	// The change lies between the last sample before the floor and the
	// first at it (the meter samples the drive's state at its sample
	// times), uniformly: its best estimate is half a period before the
	// first floor sample, not that sample (which read every entry late by
	// half a period on average: 0.05 ms at 10 kS/s). The drive cannot
	// enter before the pin, so not below 0.
	c.EntryMs, c.entryCut = clampLatency(msOf(c.EntryAt.Sub(tm.Assert)) - period/2e6)
	c.EntryU95Ms = NumMs(withGrid(e.U95) * period / 1e6)
	c.entry = &entryWindow{w: append([]float64(nil), w[ia:min(fitEnd, pin+int(float64(jointEntryMax)/period))]...),
		pin: pin - ia, base: base, period: period}
	return ke, true
}

// rise is a step fit from the floor (ke) to whatever follows the release;
// it returns where the floor ends: the rise's sample, or the release's.
func (j *judging) rise(c *Cycle, ke int) int {
	tm, w, period := j.tm, j.w, j.period
	id := j.idx(tm.Deassert)
	after := tm.Deassert.Add(50 * time.Millisecond)
	if tm.End > tm.Deassert {
		after = min(after, tm.End)
	}
	ir := j.idx(after)
	lo := j.idx(tm.Deassert.Add(-time.Millisecond)) - ke
	r, ok := FitStep(w[ke:ir], lo, ir-ke-1)
	if ok && r.After > r.Before {
		if k, found := firstDeparture(w[ke:ir], lo, r.K); found {
			// An earlier departure than the fit's step: the wake itself, the
			// step at a GC burst that followed it (the burst's larger step
			// won the single-step fit: rises 37–41 ms late on two cycles of
			// campaign 1:31, each ± 0.08 ms). Refit up to just past it.
			end := min(ir-ke, k+max(10, int(float64(time.Millisecond)/period)))
			if r2, ok2 := FitStep(w[ke:ke+end], lo, end-1); ok2 && r2.After > r2.Before {
				r = r2
			}
		}
	}
	if !ok || r.After <= r.Before {
		c.judge(Inconclusive, "power did not rise from the floor after DEVSLP was released")
		return id
	}
	kr := ke + r.K
	c.RiseAt = j.samples[kr].T
	// As the entry: the change lies between the sample before and the
	// first at the new level, half a period before that one on average
	// (before, every rise read +0.05–0.1 ms late); and the pin's release is
	// stamped to the nearest sample (withGrid).
	c.RiseMs, c.riseCut = clampLatency(msOf(c.RiseAt.Sub(tm.Deassert)) - period/2e6)
	c.RiseU95Ms = NumMs(withGrid(r.U95) * period / 1e6)
	c.HeldMs = NumMs(msOf(c.RiseAt.Sub(c.EntryAt)))
	c.HeldU95Ms = NumMs(math.Hypot(float64(c.EntryU95Ms), float64(c.RiseU95Ms)))
	return min(id, kr)
}

// floor is the mean of the samples between the entry (ke) and the earlier
// of the rise and the release (id), a guard of the fits' uncertainty (at
// least 1 ms) inside each. Not past the release: the rise's single step
// may land on a GC burst tens of ms after a short wake spike, and the wake
// and what followed it then counted as floor (a 0.65 mW floor read 1.16
// mW: campaign seed 1, drive 31).
func (j *judging) floor(c *Cycle, ke, id int) {
	g := time.Duration(math.Max(float64(time.Millisecond), 1e6*math.Max(float64(c.EntryU95Ms), float64(c.RiseU95Ms))))
	fa, fb := j.idx(c.EntryAt.Add(g)), j.idx(j.samples[id-1].T.Add(-g))
	if fb-fa < 8 {
		fa, fb = ke, id
	}
	fl, flu := j.jo.levelOf(j.w[fa:fb], j.nc)
	c.floor = flu
	c.FloorW, c.FloorU95W, c.FloorSamples = NumW(fl.Mean), NumW(flu.u95()), fl.N
}

// criteria judges the entry, the floor and the time held against the
// criteria.
func (j *judging) criteria(c *Cycle) {
	cr, tm := j.jo.Criteria, j.tm
	switch checkAtMost(c.EntryMs.Value(), c.EntryU95Ms.Value(), cr.EntryBoundMs) {
	case Fail:
		if z, ok := aboveFloorZ(j.w, j.pin, j.idx(tm.Assert.Add(time.Duration(cr.EntryBoundMs*1e6))), j.period, c.FloorW, c.FloorU95W); ok && z < entryFailZ {
			c.judge(Inconclusive, "the step fit puts the floor %.1f ± %.1f ms after assertion, beyond the %.1f ms bound, but the power over the bound was only %.1f standard errors above the floor: too noisy to judge", float64(c.EntryMs), float64(c.EntryU95Ms), cr.EntryBoundMs, z)
			break
		}
		c.judge(Fail, "floor reached %.1f ± %.1f ms after assertion, bound %.1f ms", float64(c.EntryMs), float64(c.EntryU95Ms), cr.EntryBoundMs)
	case Inconclusive:
		c.judge(Inconclusive, "floor reached %.1f ± %.1f ms after assertion, too close to the %.1f ms bound to judge", float64(c.EntryMs), float64(c.EntryU95Ms), cr.EntryBoundMs)
	}
	switch checkAtMost(c.FloorW.Value(), c.FloorU95W.Value(), cr.LimitW) {
	case Fail:
		c.judge(Fail, "DevSlp floor %.2f ± %.2f mW is above the %.2f mW limit", float64(c.FloorW)*1e3, float64(c.FloorU95W)*1e3, cr.LimitW*1e3)
	case Inconclusive:
		if c.EntryOnly {
			break // too short a hold to judge the floor: the full cycles do
		}
		c.judge(Inconclusive, "DevSlp floor %.2f ± %.2f mW straddles the %.2f mW limit", float64(c.FloorW)*1e3, float64(c.FloorU95W)*1e3, cr.LimitW*1e3)
	}
	if c.HeldMs.Ok() {
		// held ≥ MDAT, judged as −held ≤ −MDAT
		switch checkAtMost(-c.HeldMs.Value(), c.HeldU95Ms.Value(), -cr.MDATMs) {
		case Fail:
			c.judge(Fail, "held the floor %.1f ± %.1f ms, less than MDAT %.1f ms", float64(c.HeldMs), float64(c.HeldU95Ms), cr.MDATMs)
		case Inconclusive:
			c.judge(Inconclusive, "held the floor %.1f ± %.1f ms, too close to MDAT %.1f ms to judge", float64(c.HeldMs), float64(c.HeldU95Ms), cr.MDATMs)
		}
	}
}

// entryFailZ: an entry beyond the bound FAILs only when the power over
// the bound (assertion → assertion + entry_bound_ms) stood at least this
// many standard errors above the cycle's floor. A drive that enters late
// stands there at its pre-cycle level for the whole bound; one whose step
// fit noise put late did not. The fit's own interval, from refits of the
// fitted step, cannot say so: refits of a step at 208 ms find it there
// (campaign seed 1 drive 126, one entry cycle of 176: "floor reached
// 208.5 ± 81.2 ms", a floor 1.5 mW below Slumber under 13 mW σ, whose
// joint entry was 0.05 ± 0.51 ms). 5: over a few hundred cycles a false
// FAIL must not happen once (≈ 3·10⁻⁷ a cycle).
const entryFailZ = 5

// aboveFloorZ is how many standard errors the mean power over samples
// [a, b) stands above the floor (its batch-means error and the floor's
// combined); false when there are too few samples or no floor.
func aboveFloorZ(w []float64, a, b int, period float64, floor, floorU95 NumW) (float64, bool) {
	b = min(b, len(w))
	if b-a < 8 || !floor.Ok() || !floorU95.Ok() {
		return 0, false
	}
	m := stat.MeanStdErr(w[a:b])
	se := math.Hypot(m.SE, float64(floorU95)/1.96)
	if !(se > 0) {
		return 0, false
	}
	return (m.Mean - float64(floor)) / se, true
}

// readWithoutDevSlp judges the read after deassertion of a cycle in which
// the drive did not (or not clearly) reach a DevSlp floor: a failed read
// still fails, but the time to it is the exit from whatever state the
// drive was in (Slumber, active), not a DevSlp exit, so exit_ms stays
// null and DETO, which bounds the DevSlp exit, is not judged.
func (c Cycle) readWithoutDevSlp(tm Timing) Cycle {
	if tm.ProbeErr && tm.ProbeComplete != 0 {
		c.judge(Fail, "the read after deassertion failed")
	}
	return c
}

// exit judges the read after deassertion and the return to the pre-cycle
// level.
func (c Cycle) exit(tm Timing, cr Criteria, jo JudgeOptions, period float64) Cycle {
	ms := func(d time.Duration) float64 { return float64(d) / 1e6 }
	switch {
	case tm.ProbeComplete == 0:
		c.judge(Inconclusive, "no read after deassertion (host)")
		return c
	case tm.ProbeErr:
		c.judge(Fail, "the read after deassertion failed")
		return c
	}
	c.ExitMs = NumMs(ms(tm.ProbeComplete.Sub(tm.Deassert)))
	c.HostStallMs = tm.HostStallMs
	// The clock fit's bound, and the release's stamp to the nearest
	// sample (uniform over ±½ period: period/√12), in quadrature.
	per := period / 1e6
	c.ExitU95Ms = NumMs(stat.Z975 * math.Sqrt(float64(jo.ClockU95Ms*jo.ClockU95Ms)/(stat.Z975*stat.Z975)+per*per/12))
	late := ms(tm.ProbeIssue.Sub(tm.Deassert))
	switch o := checkAtMost(c.ExitMs.Value(), c.ExitU95Ms.Value(), cr.DETOMs); {
	case o == Pass:
	case tm.ProbeIssue != 0 && late > float64(cr.DETOMs)/2:
		// The host, not the drive, was slow: the read went out late.
		c.ExitHostLate = true
		c.judge(Inconclusive, "the host issued the read %.1f ms after deassertion (overloaded host), too late to judge DETO %.1f ms", late, cr.DETOMs)
	case tm.HostStallMs > 0 && checkAtMost(c.ExitMs.Value()-hostShareMs(c.ExitMs.Value(), tm.HostStallMs), c.ExitU95Ms.Value(), cr.DETOMs) != Fail:
		// Without the host's possible share the answer may be within DETO:
		// the host, not the drive, may have made it late.
		c.ExitHostLate = true
		c.judge(Inconclusive, "the read completed %.1f ms after deassertion, but the host stalled up to %.1f ms at a time meanwhile (overloaded host), too much to judge DETO %.1f ms", float64(c.ExitMs), tm.HostStallMs, cr.DETOMs)
	case checkAtMost(c.ExitMs.Value()-hostShareMs(c.ExitMs.Value(), tm.HostStallMs), c.ExitU95Ms.Value(), cr.DETOMs) != Fail:
		// No stall recorded, but the canary records none under 1 ms: an
		// excess that small may be the host's scheduling, not the drive.
		c.judge(Inconclusive, "the drive answered %.1f ± %.1f ms after deassertion, within the host's unrecorded scheduling delay (< 1 ms) of DETO %.1f ms, too close to judge", float64(c.ExitMs), float64(c.ExitU95Ms), cr.DETOMs)
	case tm.HostStallMs == 0 && checkAtMost(c.ExitMs.Value()-jo.RunStallMs-hostShareMs(c.ExitMs.Value(), 0), c.ExitU95Ms.Value(), cr.DETOMs) != Fail:
		// No stall recorded for this read, but the host stalled that long
		// elsewhere in the run: the canary is one thread and does not see
		// every thread's stall (campaign seed 1 drive 91, run alone: 6.5 ms
		// against DETO 5 ms, a true 3.3 ms, while a neighbour's read
		// recorded a stall). Not proof of a drive fault.
		c.ExitHostLate = true
		c.judge(Inconclusive, "the drive answered %.1f ± %.1f ms after deassertion, DETO is %.1f ms, but the host stalled up to %.1f ms at a time elsewhere in the run (overloaded host), enough to account for the excess", float64(c.ExitMs), float64(c.ExitU95Ms), cr.DETOMs, jo.RunStallMs)
	case o == Fail:
		c.judge(Fail, "the drive answered %.1f ± %.1f ms after deassertion, DETO is %.1f ms", float64(c.ExitMs), float64(c.ExitU95Ms), cr.DETOMs)
	default:
		c.judge(Inconclusive, "the drive answered %.1f ± %.1f ms after deassertion, too close to DETO %.1f ms to judge", float64(c.ExitMs), float64(c.ExitU95Ms), cr.DETOMs)
	}
	return c
}

// hostShareMs bounds how much of a read's exitMs the host itself may have
// added. The rig's canary sleeps 1 ms at a time while the read is out and
// records its worst lateness w when w ≥ 1 ms: each sleep then took at
// most 1 + w ms of which w was lost, so at most w/(1+w) of the read's time
// was the host's (several stalls add up: a worst of 43.6 ms came with
// 63 ms lost). Without a record the lateness was below 1 ms, and one such
// delay — the completion's own scheduling — is allowed.
func hostShareMs(exitMs, stallMs units.Milliseconds) units.Milliseconds {
	if stallMs <= 0 {
		return units.Milliseconds(math.Min(1, float64(exitMs)))
	}
	return exitMs * stallMs / (1 + stallMs)
}

// checkReturn judges whether the power came back to the pre-cycle level
// after the read: some 20 ms mean within 20 % (at least 1 mW, and three
// standard deviations of a 20 ms mean), plus the pre-cycle level's own
// interval, of it before the cycle ended.
func (c *Cycle) checkReturn(tm Timing, samples []Sample) {
	if !c.PreCycleW.Ok() || tm.ProbeComplete == 0 || tm.End <= tm.ProbeComplete {
		return
	}
	base := float64(c.PreCycleW)
	best := math.Inf(1)
	const win = 20 * time.Millisecond
	var w []float64
	for _, s := range samples {
		if s.T > tm.ProbeComplete && s.T <= tm.End {
			w = append(w, s.W)
		}
	}
	if len(w) < 16 {
		return
	}
	per := max(1, int(win/max(1, time.Duration(samplePeriod(samples)))))
	// The noise of a window mean from the noise model (correlation
	// included), not σ/√n.
	nm := c.noise
	if !nm.Ok {
		nm = stat.NoiseOf(w)
	}
	sw := math.Sqrt(nm.MeanVar(per))
	for a := 0; a+per <= len(w); a += per {
		m := mean(w[a : a+per])
		if math.Abs(m-base) < math.Abs(best-base) {
			best = m
		}
	}
	if math.IsInf(best, 1) {
		return
	}
	c.ReturnedW = NumW(best)
	// The pre-cycle level's own interval widens it: a level over 300 ms
	// of steps is known no better than that.
	tol := math.Max(math.Max(0.2*base, 0.001), 3*sw)
	if c.PreCycleU95W.Ok() {
		tol += float64(c.PreCycleU95W)
	}
	// A drive that did not come back at all stays near its floor.
	stuck := base / 4
	if c.FloorW.Ok() {
		stuck = math.Max(2*float64(c.FloorW), float64(c.FloorW)+0.001)
	}
	switch {
	case math.Abs(best-base) <= tol:
	case best < base-tol && best > stuck:
		// Back at a resting level below the pre-cycle one but far above the
		// floor: the 300 ms before the pin were more likely background
		// work at several levels than a drive that now rests lower (2 of
		// 560 cycles under level steps failed so).
		c.judge(Inconclusive, "came back to %.1f mW, below the pre-cycle level (%.1f mW): the pre-cycle level may hold background work; the return is not judged", best*1e3, base*1e3)
	default:
		c.judge(Fail, "did not return to the pre-cycle level (%.1f mW) before the cycle ended; came nearest at %.1f mW", base*1e3, best*1e3)
	}
}

func mean(w []float64) float64 {
	var s float64
	for _, x := range w {
		s += x
	}
	return s / float64(len(w))
}

// samplePeriod is the median spacing of the samples, ns.
func samplePeriod(s []Sample) float64 {
	if len(s) < 2 {
		return 1
	}
	d := make([]float64, 0, min(len(s)-1, 1024))
	for i := 1; i < len(s) && len(d) < cap(d); i++ {
		d = append(d, float64(s[i].T.Sub(s[i-1].T)))
	}
	return math.Max(1, stat.UpperMedian(d))
}

// batchOf is the batch-means batch length: 10 ms of samples.
func batchOf(periodNs float64) int { return max(1, int(1e7/periodNs)) }

// Judge is JudgeCycle plus the return check.
func Judge(tm Timing, samples []Sample, jo JudgeOptions) Cycle {
	c := JudgeCycle(tm, samples, jo)
	c.checkReturn(tm, samples)
	return c
}

// Verdict is one drive's DevSlp result over its cycles: the outcome and the
// quantities pooled over the cycles that measured them, each with a 95 %
// half-width (the larger of the cycles' own, propagated, and their scatter's
// standard error, × 1.96).
type Verdict struct {
	Outcome Outcome `json:"outcome"`
	Reason  string  `json:"reason,omitempty"`
	// Support says what the drive and host claim: "yes", "no (…why)" or
	// "unknown".
	Support   string   `json:"support,omitempty"`
	HostCause string   `json:"host_cause,omitempty"` // a host-side problem that makes a non-pass inconclusive
	Criteria  Criteria `json:"criteria"`
	Passed    int      `json:"passed"`
	PreCycleW NumW     `json:"pre_cycle_w"`
	// PreCycleU95W is PreCycleW's 95 % half-width.
	PreCycleU95W NumW    `json:"pre_cycle_u95_w"`
	FloorW       NumW    `json:"floor_w"`
	FloorU95W    NumW    `json:"floor_u95_w"`
	EntryMs      NumMs   `json:"entry_ms"`
	EntryU95Ms   NumMs   `json:"entry_u95_ms"`
	RiseMs       NumMs   `json:"rise_ms"`
	RiseU95Ms    NumMs   `json:"rise_u95_ms"`
	ExitMs       NumMs   `json:"exit_ms"`
	ExitU95Ms    NumMs   `json:"exit_u95_ms"`
	Cycles       []Cycle `json:"cycles"`
}

// Pass reports whether the verdict is a pass.
func (v Verdict) Pass() bool { return v.Outcome == Pass }

// Summarise folds the cycles into a verdict. support is "yes", "unknown"
// or "no …" (then the outcome is NotSupported, whatever was measured);
// hostCause, if set, turns any outcome but a pass into Inconclusive naming
// it.
func Summarise(cycles []Cycle, cr Criteria, support, hostCause string) Verdict {
	v := Verdict{Cycles: cycles, Criteria: cr, Support: support, HostCause: hostCause, Outcome: Pass}
	pool := func(get func(c Cycle) (NumMs, NumMs)) (NumMs, NumMs) { return poolCycles(cycles, get) }
	v.PreCycleW, v.PreCycleU95W = poolLevels(cycles, func(c Cycle) (NumW, levelU) { return c.PreCycleW, c.pre })
	// The floor is the full cycles' (an entry cycle's is over a short
	// hold: averaged in unweighted it would add its noise), or every
	// cycle's when none is full.
	full := false
	for _, c := range cycles {
		full = full || (!c.EntryOnly && c.FloorW.Ok())
	}
	v.FloorW, v.FloorU95W = poolLevels(cycles, func(c Cycle) (NumW, levelU) {
		if full && c.EntryOnly {
			return NoneW, levelU{}
		}
		return c.FloorW, c.floor
	})
	// A latency read on the sample grid is not known better than one
	// cycle's grid term (withGrid(0), 0.8 period) however many cycles
	// agree: each cycle reads one of two grid points a period apart (the
	// pin's stamp and the change's sample move together with the pin's
	// phase), and when they all fall on the farther one — (½ − q)³ of the
	// time for three cycles, q the latency's fraction of a period — their
	// mean is up to a period off. Pooled rises held the truth in 92.3 % of
	// 168 drives of TestDevSlpIntervalsUnderMeterNoise without the floor,
	// 94.0 % with ½ period.
	var grid float64
	for _, c := range cycles {
		grid = math.Max(grid, withGrid(0)*c.periodMs)
	}
	atLeastGrid := func(u NumMs) NumMs {
		if u.Ok() {
			return NumMs(math.Max(float64(u), grid))
		}
		return u
	}
	v.EntryMs, v.EntryU95Ms = pool(func(c Cycle) (NumMs, NumMs) { return c.EntryMs - NumMs(c.entryCut), c.EntryU95Ms })
	v.EntryMs, _ = clampLatency(float64(v.EntryMs))
	v.EntryU95Ms = atLeastGrid(v.EntryU95Ms)
	if e, u, ok := jointEntry(cycles); ok && (!v.EntryU95Ms.Ok() || u < float64(v.EntryU95Ms)) {
		v.EntryMs, v.EntryU95Ms = NumMs(e), atLeastGrid(NumMs(u))
	}
	v.RiseMs, v.RiseU95Ms = pool(func(c Cycle) (NumMs, NumMs) { return c.RiseMs - NumMs(c.riseCut), c.RiseU95Ms })
	v.RiseMs, _ = clampLatency(float64(v.RiseMs))
	v.RiseU95Ms = atLeastGrid(v.RiseU95Ms)
	v.ExitMs, v.ExitU95Ms = pool(func(c Cycle) (NumMs, NumMs) {
		if c.ExitHostLate {
			return NoneMs, NoneMs
		}
		return c.ExitMs, c.ExitU95Ms
	})

	count := map[string]int{}
	first := map[string]string{}
	firstCycle := map[string]int{} // the cycle the reason shown is worded from
	var order []string
	for _, c := range cycles {
		v.Outcome = worse(v.Outcome, c.Outcome)
		if c.Outcome == Pass {
			v.Passed++
		}
		for _, r := range c.Reasons {
			// Count reasons by their wording up to the first digit.
			key := r[:strings.IndexAny(r+"0", "0123456789")]
			if count[key] == 0 {
				first[key] = r
				firstCycle[key] = c.Cycle
				order = append(order, key)
			}
			count[key]++
		}
	}
	// The reason shown: the commonest among the worst outcome's.
	best := ""
	for _, k := range order {
		if strings.HasPrefix(k, string(v.Outcome)) && (best == "" || count[k] > count[best]) {
			best = k
		}
	}
	if best != "" {
		// The figures in a cycle's reason are that cycle's, not the pooled
		// ones the verdict line also prints: say whose they are.
		v.Reason = fmt.Sprintf("cycle %d: %s (%d of %d cycles)", firstCycle[best], strings.TrimPrefix(first[best], string(v.Outcome)+": "), count[best], len(cycles))
	}
	if len(cycles) == 0 {
		v.Outcome, v.Reason = Inconclusive, "no cycle completed"
	}
	if v.Outcome != Pass && hostCause != "" {
		v.Outcome, v.Reason = Inconclusive, "host: "+hostCause
	}
	if strings.HasPrefix(support, "no") {
		v.Outcome, v.Reason = NotSupported, "DevSlp not supported: "+strings.TrimLeft(strings.TrimPrefix(support, "no"), ": ")
	}
	return v
}

// String is the one-line verdict.
func (v Verdict) String() string {
	switch v.Outcome {
	case NotSupported:
		return "NOT SUPPORTED: " + strings.TrimPrefix(v.Reason, "DevSlp not supported: ")
	case Pass:
		return fmt.Sprintf("PASS: %d/%d cycles; %s", v.Passed, len(v.Cycles), v.Figures())
	}
	s := fmt.Sprintf("%s: %d/%d cycles passed; %s", strings.ToUpper(string(v.Outcome)), v.Passed, len(v.Cycles), v.Reason)
	if f := v.Figures(); f != "" {
		s += "; " + f
	}
	return s
}

// Figures are the pooled quantities as the headline prints them.
func (v Verdict) Figures() string {
	var parts []string
	parts = appendPM(parts, "DevSlp floor", v.FloorW, v.FloorU95W, 1e3, "mW")
	parts = appendPM(parts, "entry", v.EntryMs, v.EntryU95Ms, 1, "ms")
	parts = appendPM(parts, "power rise", v.RiseMs, v.RiseU95Ms, 1, "ms")
	parts = appendPM(parts, "exit to first read", v.ExitMs, v.ExitU95Ms, 1, "ms")
	return strings.Join(parts, ", ")
}

// appendPM appends "name x ± u unit" to parts when x is present.
func appendPM[Q ~float64](parts []string, name string, x, u Num[Q], scale float64, unit string) []string {
	if x.Ok() {
		parts = append(parts, fmt.Sprintf("%s %s %s", name, PM(x, u, scale), unit))
	}
	return parts
}

// PM formats x ± u scaled (1e3 for mW from W) with two decimals, as every
// output prints a DevSlp quantity; "—" when absent.
func PM[Q ~float64](x, u Num[Q], scale float64) string {
	if !x.Ok() {
		return "—"
	}
	if !u.Ok() {
		return fmt.Sprintf("%.2f", float64(x)*scale)
	}
	return fmt.Sprintf("%.2f ± %.2f", float64(x)*scale, float64(u)*scale)
}

// withGrid is the 95 % half-width of a latency between a pin edge and a
// change point (entry, power rise), in samples, from the step fit's
// displacement u95 (its bootstrap's) and the sample grid twice over: where
// within its sample the change fell, and the pin stamp's quantisation (the
// meter stamps the pin's edge with the nearest sample, so the edge lies
// anywhere within ±½ period of it) — each uniform over one period
// (standard uncertainty 1/√12 of a period), combined with u95 ÷ 1.96 and
// expanded again by 1.96: at least ±0.80 of a period. Without the stamp's
// term an entry at the pin stated ±0.5 samples for a difference of two
// sample-quantised times; without both the power rise, which had neither,
// held the truth in 54 of 144 cycles (docs/analysis.md).
func withGrid(u95 float64) float64 {
	const z = stat.Z975
	return z * math.Sqrt(u95*u95/(z*z)+2.0/12)
}

// jointEntry is the entry latency of the cycles that entered, fitted
// once to their mean power aligned at the pin: a step's change point is
// located to about (σ/Δ)² samples, so averaging n cycles first locates it
// n times better, where averaging n cycles' own fits gains only √n — what
// a few-mW floor below Slumber under 10–13 mW σ needs (the campaign's
// entry misses, 1.5–11 ms late from the per-cycle fits). It assumes the
// drive's entry latency is the same each cycle; Summarise keeps the mean of
// the cycles' fits when that is the more precise. ok is false with fewer
// than two such cycles.
func jointEntry(cycles []Cycle) (ms, u95 float64, ok bool) {
	var ws []*entryWindow
	for _, c := range cycles {
		if c.EntryMs.Ok() && c.entry != nil && len(c.entry.w) > c.entry.pin+8 {
			ws = append(ws, c.entry)
		}
	}
	if len(ws) < 2 {
		return 0, 0, false
	}
	pre, post := ws[0].pin, len(ws[0].w)-ws[0].pin
	for _, e := range ws[1:] {
		pre, post = min(pre, e.pin), min(post, len(e.w)-e.pin)
	}
	avg := make([]float64, pre+post)
	var base float64
	for _, e := range ws {
		for j := range avg {
			avg[j] += e.w[e.pin-pre+j]
		}
		base += e.base
	}
	n := float64(len(ws))
	for j := range avg {
		avg[j] /= n
	}
	// The change is searched from the window's start, 10 ms before the
	// pin, and the result clamped at the pin only then: searched from the
	// pin, noise can only move it later, and a drive entering at the pin
	// read 1.1–1.3 ms late with every cycle's fit late (seed 2 drives 13
	// and 91; a step of 5 mW under 8 mW σ).
	st, ok := fitStepFrom(avg, base/n, 0, 1, len(avg)-4, jointBootstrapRuns)
	if !ok {
		return 0, 0, false
	}
	period := ws[0].period
	return math.Max(0, float64(st.K-pre)*period/1e6-period/2e6), withGrid(st.U95) * period / 1e6, true
}

// poolLevels is a verdict's value of a level (the floor, the pre-cycle
// power) from its cycles: the mean of the cycles that have it, with a 95 %
// interval whose statistical part is the larger of the cycles' standard
// errors propagated (√Σse²/n, at their Welch–Satterthwaite degrees of
// freedom) and the spread between cycles (s/√n, at n − 1), and whose
// meter part (resolution, calibration) is the cycles' largest — one meter,
// one bias, which more cycles do not average away.
func poolLevels(cycles []Cycle, get func(Cycle) (NumW, levelU)) (NumW, NumW) {
	var xs []float64
	var us []levelU
	for _, c := range cycles {
		if x, u := get(c); x.Ok() {
			xs, us = append(xs, float64(x)), append(us, u)
		}
	}
	if len(xs) == 0 {
		return NoneW, NoneW
	}
	n := float64(len(xs))
	m := mean(xs)
	var prop2, ws, sys float64
	for _, u := range us {
		if math.IsNaN(u.se) {
			continue
		}
		prop2 += u.se * u.se
		if u.dof > 0 {
			ws += u.se * u.se * u.se * u.se / u.dof
		}
		sys = math.Max(sys, u.sys)
	}
	v, dof := prop2/(n*n), math.Inf(1)
	if ws > 0 {
		dof = prop2 * prop2 / ws
	}
	if len(xs) > 1 {
		if sp := stat.Var(xs) / n; sp > v {
			v, dof = sp, n-1
		}
	}
	if v == 0 && sys == 0 && len(xs) == 1 && math.IsNaN(us[0].se) {
		return NumW(m), NoneW
	}
	return NumW(m), NumW(stat.Expanded(v, dof, sys))
}

// poolCycles is a verdict's value of one quantity from its cycles: the
// mean of the cycles that have it, with a 95 % interval that is the larger
// of the cycles' own uncertainties propagated (√Σu²/n) and the spread
// between cycles (s/√n); None when no cycle has it.
func poolCycles[C any, Q ~float64](cycles []C, get func(C) (Num[Q], Num[Q])) (Num[Q], Num[Q]) {
	var xs, us []float64
	for _, c := range cycles {
		if x, u := get(c); x.Ok() {
			xs, us = append(xs, float64(x)), append(us, float64(u))
		}
	}
	if len(xs) == 0 {
		return Num[Q](math.NaN()), Num[Q](math.NaN())
	}
	m := mean(xs)
	var prop, ss float64
	for i, x := range xs {
		prop += (us[i] / 1.96) * (us[i] / 1.96)
		ss += (x - m) * (x - m)
	}
	n := float64(len(xs))
	u := math.Sqrt(prop) / n
	if len(xs) > 1 {
		u = math.Max(u, math.Sqrt(ss/(n-1))/math.Sqrt(n))
	}
	return Num[Q](m), Num[Q](1.96 * u)
}

// departRun is how many samples in a row must lie above the floor's band
// for the power to have left it (firstDeparture).
const departRun = 3

// firstDeparture is the first index in [lo, k) from which departRun samples
// in a row lie above the floor's band — the floor (w[:lo], the samples
// before the release) plus 6 robust σ of its samples — when that is more
// than departRun samples before k (the step a fit placed).
func firstDeparture(w []float64, lo, k int) (int, bool) {
	lo = max(lo, 0)
	if lo < 16 || k > len(w) || k-lo <= departRun {
		return 0, false
	}
	floor := w[:lo]
	thr := stat.Median(floor) + 6*stat.MAD(floor)
	run := 0
	for i := lo; i < k-departRun; i++ {
		if w[i] > thr {
			run++
			if run == departRun {
				return i - departRun + 1, true
			}
			continue
		}
		run = 0
	}
	return 0, false
}
