package judge

import (
	"fmt"
	"math"
	"sort"
	"time"

	"github.com/idlewatt/idlewatt/hostclock"
	"github.com/idlewatt/idlewatt/internal/stat"
	"github.com/idlewatt/idlewatt/units"
)

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
	// sensor is the sensor's steps as the cycle showed them (the joint
	// entry pools them).
	sensor sensorFit
	// floor and pre are the floor's and the pre-cycle level's uncertainty
	// in parts, for pooling: the statistical part averages over cycles,
	// the meter's resolution and calibration do not.
	floor, pre levelU
	// entryCut and riseCut are what clamping the latency at 0 took off
	// (ms): the cycles are pooled unclamped, so that cycles at the pin,
	// half of which read −½ period and are shown as 0, do not bias the
	// pooled latency up by a quarter period.
	entryCut, riseCut float64
	// exitClockU95 is the clock fit's part of ExitU95Ms (ms): one line
	// maps every cycle's read, so pooling the cycles does not shrink it.
	exitClockU95 float64
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
	// LevelStepW is how far the meter's level steps (a random telegraph,
	// popcorn noise) move a level, as level learning found them (0: none):
	// a window of the resting level may sit on either half, so the band of
	// windows it keeps is never narrower than that (preCycle).
	LevelStepW units.Watts
}

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
	defer cycleBufs.Put(j.w)
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
	// sensor is the meter's sensor as the cycle's sharp steps show it;
	// pole, poleSE its pole when it is slow enough to correct the edges
	// for (sensorTerm), else 0.
	sensor       sensorFit
	pole, poleSE float64
}

func newJudging(tm Timing, samples []Sample, jo JudgeOptions) *judging {
	j := &judging{tm: tm, samples: samples, jo: jo, period: samplePeriod(samples)}
	j.w = cycleBufs.Get(len(samples))
	for i, s := range samples {
		j.w[i] = s.W
	}
	j.pin = j.near(tm.Assert)
	j.nc = stat.NoiseOf(j.w) // the cycle's noise, robust to its steps
	j.sensor.sensorSteps(j.w, j.nc.Sigma)
	if a, se := j.sensor.pole(); a > 0 {
		if _, _, ok := sensorTerm(a, se); ok {
			j.pole, j.poleSE = a, se
		}
	}
	return j
}

// cycleBufs keeps a few buffers for judging's power w across cycles
// (given back when JudgeCycle returns: a Cycle keeps copies of what it
// needs, never w itself): a new w per cycle, tens of thousands of values,
// was one of the largest allocations of a report.
var cycleBufs = stat.NewScratch(2) // about one per drive worker

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
	// A telegraph slower than the hold's windows may not step within it:
	// half the steps the learning found is a window's spread at least
	// (campaign seed 13 drive 40, a drive that ignores the pin: the resting
	// level read 4.52 for 4.91 mW, the lower half of ±0.4 mW steps).
	hw = math.Max(hw, float64(j.jo.LevelStepW)/2)
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
		l, lk, ok := restingLevel(w, j.idx(tm.Start), j.pin, j.period, j.nc, hw)
		switch {
		case !ok:
		case l.Mean < rl.Mean-4*math.Hypot(rl.SE, l.SE) || (rl.SE > 3*l.SE && l.Mean < rl.Mean):
			rl, kept = l, lk
		case l.SE < rl.SE && math.Abs(l.Mean-rl.Mean) <= math.Hypot(rl.SE, l.SE) && float64(len(lk)) >= settleShare*float64(j.pin-j.idx(tm.Start)):
			// One level over most of the settle period, known better:
			// under the meter's level steps 300 ms hold few of them
			// (campaign steps family: pre-cycle levels 0.2–0.3 mW off on
			// 3–7 mW, their intervals holding). Not where the drive spent
			// much of it reaching that level: the approach's tail biased
			// the level and the entry fit under 1/f noise.
			rl, kept = l, lk
		}
	}
	rl.SE = math.Hypot(rl.SE, telegraphSE(kept, j.period, float64(j.jo.LevelStepW)))
	j.base, j.baseSE = rl.Mean, rl.SE
	c.pre = levelU{se: rl.SE, dof: rl.Dof, sys: j.jo.instrumentU(j.base, math.Sqrt(stat.Var(kept)))}
	c.PreCycleW, c.PreCycleU95W = NumW(j.base), NumW(c.pre.u95())
	return true
}

// settleShare is the least share of the settle period the resting level
// must hold for it to be read over the whole period (preCycle).
const settleShare = 0.8

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
	e, ok := fitStepFrom(w[ia:id], base, j.baseSE, pin-ia, id-ia-4, bootstrapRuns, j.pole)
	if !ok {
		c.judge(Inconclusive, "too few samples while DEVSLP was asserted")
		return 0, false
	}
	// A drive busy when the pin asserts (a GC burst, far above its resting
	// level) falls from that level, not from the resting one: fitted from
	// the known resting level the busy samples before the fall pulled the
	// change late (up to 0.8 ms through a 1 kHz sensor), and that cycle's
	// own entry is the drive's for it in the mean over cycles
	// (entryWithJoint). Its level before the change is fitted instead.
	probe := *c
	probe.FloorW = NumW(e.After)
	probe.entry = &entryWindow{w: w[ia:id], pin: pin - ia, base: base, period: period}
	if !atBaseAtPin(probe) {
		if f, ok := fitStep(w[ia:id], pin-ia, id-ia-4, j.pole); ok && f.Before > f.After {
			e = f
		}
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
	// A fall is read against the pre-cycle level ÷ √2; a resting level at
	// or below 0 W tells no fall at all, and "stayed" — the drive
	// ignores the pin — must hold against the pre-cycle level's error too
	// (its standard error ÷ √2 in quadrature with the hold's): under 1/f
	// noise of 9 mW σ a 1.49 mW Slumber read −0.71 mW before the pin and
	// 1.96 mW under it, "the drive ignores DEVSLP" for a drive at 0.56 mW
	// (the independent generator's seed 12, drive 47).
	post := stat.MeanStdErr(w[ke:id])
	fellTo := base / math.Sqrt2
	bu := j.baseSE / math.Sqrt2
	if !(base > 0) {
		c.judge(Inconclusive, "the resting level before the pin, %.2f ± %.2f mW, is not above 0 W: a fall to a floor cannot be told", base*1e3, 3*j.baseSE*1e3)
		*c = c.readWithoutDevSlp(tm)
		return 0, false
	}
	o := checkAtMost(post.Mean, 3*post.SE, fellTo)
	if o == Fail && post.Mean-3*math.Hypot(post.SE, bu) <= fellTo {
		o = Inconclusive
	}
	if o == Fail {
		// A drive that ignores the pin stays at its pre-cycle level over
		// the whole hold; one whose fit noise put the step late, over a
		// short noisy stretch, does not (AR(1) noise of 6 ms, 14 mW σ:
		// "stayed at 18 mW", a drive at 2 mW).
		if hold := stat.MeanStdErr(w[pin:id]); hold.Mean-3*math.Hypot(hold.SE, bu) <= fellTo {
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
	if shift, v, ok := sensorTerm(j.pole, j.poleSE); ok {
		// A slow sensor puts the fitted change late by its delay and
		// spreads where the change fell (sensorEdge).
		c.EntryMs, c.entryCut = clampLatency(msOf(c.EntryAt.Sub(tm.Assert)) - period/2e6 - shift*period/1e6)
		c.EntryU95Ms = NumMs(withGridVar(e.U95, v) * period / 1e6)
	}
	c.sensor = j.sensor
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
	r, ok := fitStep(w[ke:ir], lo, ir-ke-1, j.pole)
	if ok && r.After > r.Before {
		if k, found := firstDeparture(w[ke:ir], lo, r.K); found {
			// An earlier departure than the fit's step: the wake itself, the
			// step at a GC burst that followed it (the burst's larger step
			// won the single-step fit: rises 37–41 ms late on two cycles of
			// campaign 1:31, each ± 0.08 ms). Refit up to just past it.
			end := min(ir-ke, k+max(10, int(float64(time.Millisecond)/period)))
			if r2, ok2 := fitStep(w[ke:ke+end], lo, end-1, j.pole); ok2 && r2.After > r2.Before {
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
	if shift, v, ok := sensorTerm(j.pole, j.poleSE); ok {
		c.RiseMs, c.riseCut = clampLatency(msOf(c.RiseAt.Sub(tm.Deassert)) - period/2e6 - shift*period/1e6)
		c.RiseU95Ms = NumMs(withGridVar(r.U95, v) * period / 1e6)
	}
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
		if z := float64(c.FloorW-NumW(cr.LimitW)) / (float64(c.FloorU95W) / stat.Z975); z < floorFailZ {
			c.judge(Inconclusive, "DevSlp floor %.2f ± %.2f mW is above the %.2f mW limit in this cycle, by %.1f standard errors, fewer than %d: the floor over the cycles decides", float64(c.FloorW)*1e3, float64(c.FloorU95W)*1e3, cr.LimitW*1e3, z, floorFailZ)
			break
		}
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

// floorFailZ: a cycle's floor above the limit FAILs the cycle only when it
// is this many standard errors above it; nearer, the cycle is
// inconclusive and the floor pooled over the cycles is judged against the
// limit (Summarise). Each cycle's 95 % interval misses on the high side
// 2.5 % of the time, so a drive 0.26 mW under the 5 mW limit failed on one
// of its six cycles (6.01 ± 0.99 mW; pooled 4.63 ± 0.94 — independent
// generator seed 9 drive 11, a true 4.74 mW).
const floorFailZ = 5

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
	c.exitClockU95 = float64(jo.ClockU95Ms)
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
		c.judge(Inconclusive, "the drive answered %.1f ± %.1f ms after deassertion, within the host's unrecorded scheduling delays (under 1 ms at its issue and at its completion) of DETO %.1f ms, too close to judge", float64(c.ExitMs), float64(c.ExitU95Ms), cr.DETOMs)
	case checkAtMost(c.ExitMs.Value()-jo.RunStallMs-hostShareMs(c.ExitMs.Value(), 0), c.ExitU95Ms.Value(), cr.DETOMs) != Fail:
		// The host stalled that long elsewhere in the run: the canary is
		// one thread and does not see every thread's stall, so what it
		// recorded for this read (nothing, or less) bounds nothing (campaign
		// seed 1 drive 91, run alone: 6.5 ms against DETO 5 ms, a true
		// 3.3 ms, while a neighbour's read recorded a stall; seed 23 drive
		// 48: 15.7 ms against DETO 5 ms, a true 3.7 ms, with 1.6 ms recorded
		// for it and 16.9 ms for another of its reads). Not proof of a drive
		// fault.
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
// 63 ms lost). Without a record the lateness was below 1 ms at each
// point the read waited to be scheduled — its issue after the host took
// its time, and its completion's wake-up — so two such delays are allowed:
// with one, a read a loaded host completed 1.2 ms late with nothing
// recorded failed a drive whose true exit was 3.96 ms against DETO 4 ms
// (campaign seed 30 drive 190, 5.13 ms read).
func hostShareMs(exitMs, stallMs units.Milliseconds) units.Milliseconds {
	if stallMs <= 0 {
		return units.Milliseconds(math.Min(unrecordedDelays, float64(exitMs)))
	}
	return exitMs * stallMs / (1 + stallMs)
}

// unrecordedDelays bounds, in ms, what the host may add to a read with no
// stall recorded: two scheduling points under the canary's 1 ms
// (hostShareMs).
const unrecordedDelays = 2

// checkReturn judges whether the power came back to the pre-cycle level
// after the read: some 20 ms mean within 20 % (at least 1 mW, and three
// standard deviations of a 20 ms mean), plus the pre-cycle level's own
// interval, of it before the cycle ended. FAIL only when it stayed near
// the floor (the drive did not come back); a return above or below the
// pre-cycle level but away from the floor is not judged (INCONCLUSIVE).
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
		m := stat.Mean(w[a : a+per])
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
	case best > base+tol:
		// Awake and above its resting level until the cycle ended — in
		// Partial before its timers took it lower, at a GC burst — is no
		// sign of a drive that did not come back from DevSlp: a working
		// drive whose GC ran every 0.84 s stayed in Partial (14 mW over a
		// 2.4 mW Slumber) after 3 of 192 reads and was failed (campaign
		// seed 33 drive 95). Not judged.
		c.judge(Inconclusive, "came back no nearer than %.1f mW, above the pre-cycle level (%.1f mW), before the cycle ended: still awake (Partial, background work); the return is not judged", best*1e3, base*1e3)
	default:
		c.judge(Fail, "did not return to the pre-cycle level (%.1f mW) before the cycle ended; came nearest at %.1f mW", base*1e3, best*1e3)
	}
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

// floorBand is the top of the floor's band in firstDeparture: the median
// of floor plus 6 robust σ (stat.MAD). The median is taken by selection
// (stat.MedianSelectingCopy, O(n), in a scratch copy) rather than from a sorted copy
// (stat.Median), a sort of the whole hold per cycle: the same value bit
// for bit, but for the sign of a zero median, which adding 6·MAD (+0 or
// more) erases. NaN or ±Inf among the samples keep stat.Median.
func floorBand(floor []float64) float64 {
	mad := 6 * stat.MAD(floor)
	for _, x := range floor {
		if x-x != 0 { // NaN or ±Inf
			return stat.Median(floor) + mad
		}
	}
	return stat.MedianSelectingCopy(floor) + mad
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
	thr := floorBand(w[:lo])
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
