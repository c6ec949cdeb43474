package judge

import (
	"fmt"
	"math"
	"sort"
	"strings"
	"time"

	"github.com/idlewatt/idlewatt/hostclock"
	"github.com/idlewatt/idlewatt/internal/stat"
	"github.com/idlewatt/idlewatt/states/nvme/pslevel"
	"github.com/idlewatt/idlewatt/units"
)

// APST verification (issue 18): the NVMe counterpart of the DevSlp
// verdict, with the same outcomes, the same interval checks (checkAtMost),
// the same step fit and batch means. A cycle is: the last I/O completes,
// the drive idles while the host's APST table takes it down, a probe read
// wakes it, and a warm read right after measures what a read costs awake.

// APSTCriteria are an APST verdict's expectations.
type APSTCriteria struct {
	// ExpectPS is the non-operational state the drive should reach.
	ExpectPS int `json:"expect_ps"`
	// Levels are the drive's idle levels, highest first (from its
	// power-state table or learned from the capture).
	Levels []pslevel.Level `json:"levels"`
	// LinkExitMs is what the PCIe link's exit (L1.2 → L0) may add to the
	// state's exit latency, which does not count it.
	LinkExitMs units.Milliseconds `json:"link_exit_ms"`
}

// APSTTiming is what the host did in one cycle, on the aligned host clock
// (ns).
type APSTTiming struct {
	Cycle int
	Idle  hostclock.Time // the completion the drive's idle timers count from
	// EnterAt is when the entry into the expected state should begin: the
	// APST table's idle time (ITPT) of each step on the way there, and the
	// declared entry latency of each step before it, after Idle. 0: the
	// host's table never enters the expected state.
	EnterAt       hostclock.Time
	ProbeIssue    hostclock.Time
	ProbeComplete hostclock.Time
	ProbeErr      bool
	// WarmMs is a read's latency with the drive awake (the read issued
	// right after the probe's completion): the probe's latency less this
	// is the exit.
	WarmMs units.Milliseconds
}

// APSTCycle is one cycle's measured quantities with 95 % half-widths.
type APSTCycle struct {
	Cycle      int      `json:"cycle"`
	Outcome    Outcome  `json:"outcome"`
	Reasons    []string `json:"reasons,omitempty"`
	IdleW      NumW     `json:"idle_w"` // before the entry
	FloorW     NumW     `json:"floor_w"`
	FloorU95W  NumW     `json:"floor_u95_w"`
	ReachedPS  int      `json:"reached_ps"` // -1: no level matched
	EntryMs    NumMs    `json:"entry_ms"`   // from EnterAt to the floor
	EntryU95Ms NumMs    `json:"entry_u95_ms"`
	ExitMs     NumMs    `json:"exit_ms"` // probe latency less the warm read's
	ExitU95Ms  NumMs    `json:"exit_u95_ms"`
	// FloorSamples is how many samples the floor is the mean of.
	FloorSamples int `json:"floor_samples"`
	// period is the sample period (ns) the entry was found on.
	period float64
}

func (c *APSTCycle) judge(o Outcome, format string, a ...any) {
	c.Outcome = worse(c.Outcome, o)
	if o != Pass {
		c.Reasons = append(c.Reasons, string(o)+": "+fmt.Sprintf(format, a...))
	}
}

func levelName(l pslevel.Level) string {
	return fmt.Sprintf("PS%d (%s mW)", l.PS, PM(NumW(l.W), NoneW, 1e3))
}

// JudgeAPSTCycle measures one cycle from the samples covering [Idle,
// ProbeIssue] (in time order) and judges it: the floor must be the
// expected state's level, reached within the state's entry latency after
// EnterAt, and the probe must come back within the exit latency of the
// state reached (plus the link's).
func JudgeAPSTCycle(tm APSTTiming, samples []Sample, cr APSTCriteria, jo JudgeOptions) APSTCycle {
	c := APSTCycle{Cycle: tm.Cycle, Outcome: Pass, IdleW: NoneW, FloorW: NoneW, FloorU95W: NoneW, ReachedPS: -1,
		EntryMs: NoneMs, EntryU95Ms: NoneMs, ExitMs: NoneMs, ExitU95Ms: NoneMs}
	exp := pslevel.Of(cr.Levels, cr.ExpectPS)
	if exp < 0 {
		c.judge(Inconclusive, "no level known for the expected state PS%d", cr.ExpectPS)
		return c
	}
	idx := func(t hostclock.Time) int {
		return sort.Search(len(samples), func(i int) bool { return samples[i].T >= t })
	}
	a, b := idx(tm.Idle.Add(time.Millisecond)), idx(tm.ProbeIssue.Add(-time.Millisecond))
	if b-a < 32 || !tm.ProbeIssue.After(tm.Idle) {
		c.judge(Inconclusive, "too few power samples between the last completion and the probe read")
		return c
	}
	period := samplePeriod(samples)
	c.period = period
	w := make([]float64, b-a)
	for i := range w {
		w[i] = samples[a+i].W
	}
	// The idle level before the entry: the first tenth of the hold (at
	// least 8 samples), before any APST timer (100 ms and more) runs out.
	n0 := max(8, min(len(w)/10, int(20e6/period)))
	c.IdleW = NumW(stat.Mean(w[:n0]))
	step, ok := FitStepFrom(w, float64(c.IdleW), n0, len(w)-8)
	dropped := ok && step.After < float64(c.IdleW)
	floorFrom := 0
	if dropped {
		floorFrom = step.K + max(1, int(1e6/period)) // 1 ms guard after the change
	}
	if floorFrom >= len(w)-8 {
		floorFrom = step.K
	}
	fl := MeanBatches(w[floorFrom:], batchOf(period))
	c.FloorW, c.FloorU95W, c.FloorSamples = NumW(fl.Mean), NumW(1.96*fl.U), fl.N
	if !c.FloorU95W.Ok() {
		c.FloorU95W = 0
	}
	reached := pslevel.Classify(cr.Levels, units.Watts(fl.Mean))
	c.ReachedPS = cr.Levels[reached].PS
	want := cr.Levels[exp]
	ceil := float64(pslevel.Ceiling(cr.Levels, exp))
	switch checkAtMost(fl.Mean, float64(c.FloorU95W), ceil) {
	case Fail:
		c.judge(Fail, "the drive stayed in %s, floor %s mW; expected %s", levelName(cr.Levels[reached]), PM(c.FloorW, c.FloorU95W, 1e3), levelName(want))
	case Inconclusive:
		c.judge(Inconclusive, "floor %s mW straddles the %.2f mW boundary of %s", PM(c.FloorW, c.FloorU95W, 1e3), ceil*1e3, levelName(want))
	}
	if dropped && reached == exp {
		at := samples[a+step.K].T
		if tm.EnterAt != 0 {
			c.EntryMs = NumMs(float64(at.Sub(tm.EnterAt)) / 1e6)
			// The change lies somewhere within the sample it was found
			// in (uniform over one period: 1/√12 of it), beside the
			// fit's own displacement and the host stamp's clock term.
			// Without the grid term three cycles on the 10 kS/s hub
			// stated ±0.006 ms for an entry 0.04 ms off (CI, at load).
			c.EntryU95Ms = NumMs(apstGridU95(step.U95, period, float64(jo.ClockU95Ms)))
			bound := float64(want.EntryLatencyUs) / 1e3
			switch checkAtMost(float64(c.EntryMs), float64(c.EntryU95Ms), bound) {
			case Fail:
				c.judge(Fail, "entered PS%d %s ms after the APST timer expired; its entry latency is %.2f ms", want.PS, PM(c.EntryMs, c.EntryU95Ms, 1), bound)
			case Inconclusive:
				c.judge(Inconclusive, "entered PS%d %s ms after the APST timer expired, too close to its %.2f ms entry latency to judge", want.PS, PM(c.EntryMs, c.EntryU95Ms, 1), bound)
			}
			// An entry well before the timer is no drive of this table.
			if checkAtMost(-float64(c.EntryMs), float64(c.EntryU95Ms), 0) == Fail {
				c.judge(Fail, "entered PS%d %s ms before the APST timer expired", want.PS, PM(-c.EntryMs, c.EntryU95Ms, 1))
			}
		}
	}
	// The exit is judged against the most lenient state the floor's
	// interval may be in: a floor not clearly in one state does not fail a
	// drive for the other's exit latency.
	from := cr.Levels[reached]
	u := float64(c.FloorU95W)
	for i := pslevel.Classify(cr.Levels, units.Watts(fl.Mean+u)); i <= pslevel.Classify(cr.Levels, units.Watts(fl.Mean-u)); i++ {
		if l := cr.Levels[i]; l.NonOperational && (!from.NonOperational || l.ExitLatencyUs > from.ExitLatencyUs) {
			from = l
		}
	}
	return c.apstExit(tm, cr, jo, from)
}

func (c APSTCycle) apstExit(tm APSTTiming, cr APSTCriteria, jo JudgeOptions, from pslevel.Level) APSTCycle {
	switch {
	case tm.ProbeComplete == 0:
		c.judge(Inconclusive, "no probe read (host)")
		return c
	case tm.ProbeErr:
		c.judge(Fail, "the probe read failed")
		return c
	}
	c.ExitMs = NumMs(float64(tm.ProbeComplete.Sub(tm.ProbeIssue))/1e6 - float64(tm.WarmMs))
	c.ExitU95Ms = NumMs(jo.ClockU95Ms)
	if !from.NonOperational {
		return c // an operational state has no exit to judge
	}
	bound := float64(from.ExitLatencyUs)/1e3 + float64(cr.LinkExitMs)
	switch checkAtMost(float64(c.ExitMs), float64(c.ExitU95Ms), bound) {
	case Fail:
		c.judge(Fail, "the probe read waited %s ms to leave PS%d; its exit latency is %.2f ms (+%.2f ms for the link)", PM(c.ExitMs, c.ExitU95Ms, 1), from.PS, float64(from.ExitLatencyUs)/1e3, cr.LinkExitMs)
	case Inconclusive:
		c.judge(Inconclusive, "the probe read waited %s ms to leave PS%d, too close to its %.2f ms exit latency (+%.2f ms link) to judge", PM(c.ExitMs, c.ExitU95Ms, 1), from.PS, float64(from.ExitLatencyUs)/1e3, cr.LinkExitMs)
	}
	return c
}

// APSTVerdict is one drive's APST result over its cycles, pooled as
// Summarise pools DevSlp's.
type APSTVerdict struct {
	Outcome Outcome `json:"outcome"`
	Reason  string  `json:"reason,omitempty"`
	// Support: "yes", or "no: …why" when the drive or the kernel rules
	// APST out (then the outcome is NotSupported).
	Support string `json:"support"`
	// HostPlan says what the host's APST table does with the expected
	// state ("" when it enters it).
	HostPlan   string       `json:"host_plan,omitempty"`
	Criteria   APSTCriteria `json:"criteria"`
	Passed     int          `json:"passed"`
	FloorW     NumW         `json:"floor_w"`
	FloorU95W  NumW         `json:"floor_u95_w"`
	EntryMs    NumMs        `json:"entry_ms"`
	EntryU95Ms NumMs        `json:"entry_u95_ms"`
	ExitMs     NumMs        `json:"exit_ms"`
	ExitU95Ms  NumMs        `json:"exit_u95_ms"`
	Cycles     []APSTCycle  `json:"cycles"`
}

// Pass reports whether the verdict is a pass.
func (v APSTVerdict) Pass() bool { return v.Outcome == Pass }

// SummariseAPST folds the cycles into a verdict. support "no …" makes it
// NotSupported whatever was measured; hostPlan, when set, is why the
// host's table does not take the drive to the expected state, and leads
// the reason of a failure.
func SummariseAPST(cycles []APSTCycle, cr APSTCriteria, support, hostPlan string) APSTVerdict {
	v := APSTVerdict{Outcome: Pass, Support: support, HostPlan: hostPlan, Criteria: cr, Cycles: cycles}
	v.FloorW, v.FloorU95W = poolCycles(cycles, func(c APSTCycle) (NumW, NumW) { return c.FloorW, c.FloorU95W })
	v.EntryMs, v.EntryU95Ms = poolCycles(cycles, func(c APSTCycle) (NumMs, NumMs) { return c.EntryMs, c.EntryU95Ms })
	// The grid term does not average down over cycles: the emulated and
	// real drives' timers run in step with the meter's clock, so every
	// cycle's change may fall at the same phase of its sample.
	if v.EntryU95Ms.Ok() {
		for _, c := range cycles {
			if c.EntryMs.Ok() && c.period > 0 {
				v.EntryU95Ms = NumMs(math.Max(float64(v.EntryU95Ms), apstGridU95(0, c.period, 0)))
			}
		}
	}
	v.ExitMs, v.ExitU95Ms = poolCycles(cycles, func(c APSTCycle) (NumMs, NumMs) { return c.ExitMs, c.ExitU95Ms })
	count, first := map[string]int{}, map[string]string{}
	var order []string
	for _, c := range cycles {
		v.Outcome = worse(v.Outcome, c.Outcome)
		if c.Outcome == Pass {
			v.Passed++
		}
		for _, r := range c.Reasons {
			key := r[:strings.IndexAny(r+"0", "0123456789")]
			if count[key] == 0 {
				first[key], order = r, append(order, key)
			}
			count[key]++
		}
	}
	best := ""
	for _, k := range order {
		if strings.HasPrefix(k, string(v.Outcome)) && (best == "" || count[k] > count[best]) {
			best = k
		}
	}
	if best != "" {
		v.Reason = fmt.Sprintf("%s (%d of %d cycles)", strings.TrimPrefix(first[best], string(v.Outcome)+": "), count[best], len(cycles))
	}
	if len(cycles) == 0 {
		v.Outcome, v.Reason = Inconclusive, "no cycle completed"
	}
	if v.Outcome == Fail && hostPlan != "" {
		v.Reason = hostPlan + "; " + v.Reason
	}
	if strings.HasPrefix(support, "no") {
		v.Outcome, v.Reason = NotSupported, "APST not supported: "+strings.TrimLeft(strings.TrimPrefix(support, "no"), ": ")
	}
	return v
}

// String is the one-line verdict.
func (v APSTVerdict) String() string {
	fig := func() string {
		var parts []string
		if v.FloorW.Ok() {
			parts = append(parts, "floor "+PM(v.FloorW, v.FloorU95W, 1e3)+" mW")
		}
		if v.EntryMs.Ok() {
			parts = append(parts, "entry "+PM(v.EntryMs, v.EntryU95Ms, 1)+" ms after ITPT")
		}
		if v.ExitMs.Ok() {
			parts = append(parts, "exit "+PM(v.ExitMs, v.ExitU95Ms, 1)+" ms")
		}
		return strings.Join(parts, ", ")
	}
	switch v.Outcome {
	case NotSupported:
		return "NOT SUPPORTED: " + strings.TrimPrefix(v.Reason, "APST not supported: ")
	case Pass:
		return fmt.Sprintf("PASS: %d/%d cycles reached PS%d; %s", v.Passed, len(v.Cycles), v.Criteria.ExpectPS, fig())
	}
	s := fmt.Sprintf("%s: %d/%d cycles passed; %s", strings.ToUpper(string(v.Outcome)), v.Passed, len(v.Cycles), v.Reason)
	if f := fig(); f != "" {
		s += "; " + f
	}
	return s
}

// apstGridU95 is the 95 % half-width, in ms, of an entry found at a
// sample (period in ns) by a step fit whose displacement is u95 samples,
// against a host stamp of clockU95Ms.
func apstGridU95(u95, period, clockU95Ms float64) float64 {
	const z = stat.Z975
	grid := period / 1e6 // ms
	return z * math.Sqrt(u95*u95*grid*grid/(z*z)+grid*grid/12+clockU95Ms*clockU95Ms/(z*z))
}
