package accuracy

import (
	"fmt"
	"math"
	"sort"
	"strings"

	"github.com/idlewatt/idlewatt/internal/stat"
)

// Goal is how close a metric must come to the truth: within
// max(Abs, Rel × |truth|), in the metric's unit.
type Goal struct {
	Abs  float64 `json:"abs"`
	Rel  float64 `json:"rel"`
	Text string  `json:"text"`
}

func (g Goal) tol(truth float64) float64 { return math.Max(g.Abs, g.Rel*math.Abs(truth)) }

// The goals of issues 12 and 25.
var (
	goalActiveIdle = Goal{Rel: 0.01, Text: "±1 %"}
	goalPower      = Goal{Rel: 0.005, Text: "±0.5 %"}
	goalFloor      = Goal{Abs: 0.0002, Rel: 0.03, Text: "±max(0.2 mW, 3 %)"}
	goalLatency    = Goal{Abs: 1, Rel: 0.03, Text: "±max(1 ms, 3 %)"}
	// The pre-cycle level has no goal of its own in issue 25; it is a
	// resting level like the floor and is held to the floor's.
	goalPreCycle  = Goal{Abs: 0.0002, Rel: 0.03, Text: "±max(0.2 mW, 3 %)"}
	goalResidency = Goal{Abs: 0.01, Text: "±1 pp"}
	// The peak has no accuracy goal in issue 12 (a reading, noise
	// included); it is compared for its interval's coverage.
	goalPeak = Goal{Abs: math.Inf(1), Text: "interval only"}
)

// CoverageGoal is the share of stated 95 % intervals that must hold the truth.
const CoverageGoal = 0.93

// Minimum truth time for a quantity to be expected in the report: below it
// an absent value is not counted as missed.
const (
	minIdleS   = 0.5
	minDevSlpS = 0.1
)

// Statuses of a Check.
const (
	StatusOK       = "ok"
	StatusBreak    = "break"    // error beyond the goal
	StatusMissing  = "missing"  // the truth has the quantity, the report does not
	StatusSpurious = "spurious" // the report has a quantity the truth does not
	StatusNA       = "n/a"      // neither has it (or too little of it to expect one)
)

// Check is one metric of one drive against the truth.
type Check struct {
	Metric   string   `json:"metric"`
	Unit     string   `json:"unit"`
	Truth    *float64 `json:"truth"`
	Measured *float64 `json:"measured"`
	Lo       *float64 `json:"lo,omitempty"`
	Hi       *float64 `json:"hi,omitempty"`
	Err      *float64 `json:"error,omitempty"`     // measured − truth
	RelErr   *float64 `json:"rel_error,omitempty"` // ÷ |truth|
	Tol      float64  `json:"tolerance"`
	Status   string   `json:"status"`
	Held     *bool    `json:"interval_held,omitempty"` // nil: no interval stated
}

// Residency states are folded onto the report's names: a truth state the
// report has no key for counts toward the state it is part of (a wake is
// the drive leaving a low state for active, almost always with the I/O
// that woke it waiting; a spin-up is active too). GC bursts count under
// their link state, or as "background" when the report has that state.
var residencyFold = map[string]string{"wake": "active", "spinup": "active"}

// compare checks every metric of one drive.
func compare(t *Truth, m *Measured) []Check {
	var cs []Check
	add := func(metric, unit string, g Goal, truth *float64, mv Value, expected bool) {
		c := Check{Metric: metric, Unit: unit, Truth: truth, Measured: mv.V, Lo: mv.Lo, Hi: mv.Hi}
		switch {
		case truth == nil && mv.V == nil:
			c.Status = StatusNA
		case truth == nil:
			c.Status = StatusSpurious
		case mv.V == nil && expected:
			c.Status = StatusMissing
		case mv.V == nil:
			c.Status = StatusNA
		default:
			c.Tol = g.tol(*truth)
			e := *mv.V - *truth
			c.Err = &e
			if *truth != 0 && unit != "fraction" { // residency goals are in points, not relative
				r := e / math.Abs(*truth)
				c.RelErr = &r
			}
			c.Status = StatusOK
			if math.IsInf(c.Tol, 1) {
				c.Tol = 0 // no accuracy goal (JSON: 0): judged for its interval only
			} else if math.Abs(e) > c.Tol {
				c.Status = StatusBreak
			}
			if mv.Lo != nil && mv.Hi != nil {
				h := *mv.Lo <= *truth && *truth <= *mv.Hi
				c.Held = &h
			}
		}
		cs = append(cs, c)
	}
	f := func(x float64) *float64 { return &x }
	add("active_idle_w", "W", goalActiveIdle, f(t.ActiveIdleW), m.ActiveIdleW, t.IdleS >= minIdleS)
	add("average_w", "W", goalPower, f(t.AverageW), m.AverageW, true)
	add("energy_j", "J", goalPower, f(t.EnergyJ), m.EnergyJ, true)
	if t.PeakW != nil {
		add("peak_w", "W", goalPeak, t.PeakW, m.PeakW, true)
	}
	add("devslp_floor_w", "W", goalFloor, t.DevSlpFloorW, m.DevSlpFloorW, t.Residency["devslp"]*t.WindowS >= minDevSlpS)
	add("entry_ms", "ms", goalLatency, t.EntryMs, m.EntryMs, true)
	add("exit_ms", "ms", goalLatency, pooledExit(t, m), m.ExitMs, true)
	add("rise_ms", "ms", goalLatency, pooledOver(t.CycleRiseMs, m.RiseLeftOut, t.RiseMs), m.RiseMs, true)
	add("pre_cycle_w", "W", goalPreCycle, pooledOver(t.CyclePreW, m.PreLeftOut, t.PreCycleW), m.PreCycleW, true)

	// Summed in key order: a sum in map order differs in its last bit
	// from run to run, and a rescore then disagreed with its run.
	folded := map[string]float64{}
	for _, s := range sortedKeys(keysOf(t.Residency)) {
		x := t.Residency[s]
		if _, ok := m.Residency[s]; !ok {
			if to, ok := residencyFold[s]; ok {
				s = to
			}
		}
		folded[s] += x
	}
	// A report with a "background" state (above idle, no I/O outstanding)
	// counts GC bursts there, not under their link state.
	if _, ok := m.Residency["background"]; ok {
		for _, s := range sortedKeys(keysOf(t.GC)) {
			x := t.GC[s]
			if to, ok := residencyFold[s]; ok {
				if _, has := m.Residency[s]; !has {
					s = to
				}
			}
			folded[s] -= x
			folded["background"] += x
		}
	}
	keys := map[string]bool{}
	for k := range folded {
		keys[k] = true
	}
	for k := range m.Residency {
		keys[k] = true
	}
	for _, k := range sortedKeys(keys) {
		tv := folded[k]
		add("residency."+k, "fraction", goalResidency, &tv, m.Residency[k], tv*t.WindowS >= minDevSlpS)
	}
	return cs
}

// keysOf is m's keys as a set.
func keysOf(m map[string]float64) map[string]bool {
	k := make(map[string]bool, len(m))
	for s := range m {
		k[s] = true
	}
	return k
}

// pooledExit is the truth's exit over the cycles the report pooled: it
// leaves out of exit_ms the cycles whose read the host issued late or
// stalled on (exit_host_late) and those whose exit it gives as null (no
// floor reached in that cycle's own judgement), so the truth does too
// (campaign seed 2 drive 152: an entry cycle whose fall was not clear had
// a host-late read of ≈ 85 ms, which the truth alone averaged in, 8.03
// against the report's 6.4 ms). Without per-cycle
// flags, or when every cycle was left out, it is the mean over all cycles.
func pooledExit(t *Truth, m *Measured) *float64 {
	if len(m.ExitLeftOut) == 0 {
		return t.ExitMs
	}
	var xs []float64
	for i, x := range t.CycleExitMs {
		if x != nil && (i >= len(m.ExitLeftOut) || !m.ExitLeftOut[i]) {
			xs = append(xs, *x)
		}
	}
	if len(xs) == 0 {
		return t.ExitMs
	}
	return mean(xs)
}

// pooledOver is the mean of a quantity's per-cycle truth over the cycles
// the report did not leave out (per-cycle flags from cycle_results); all
// of the truth's (all) without flags or when every cycle was left out.
func pooledOver(cycles []*float64, leftOut []bool, all *float64) *float64 {
	if len(leftOut) == 0 {
		return all
	}
	var xs []float64
	for i, x := range cycles {
		if x != nil && (i >= len(leftOut) || !leftOut[i]) {
			xs = append(xs, *x)
		}
	}
	if len(xs) == 0 {
		return all
	}
	return mean(xs)
}

func sortedKeys(m map[string]bool) []string {
	var ks []string
	for k := range m {
		ks = append(ks, k)
	}
	sort.Strings(ks)
	return ks
}

// verdictOutcome classifies a measured verdict against the truth's.
func verdictOutcome(truth, measured string) string {
	switch {
	case measured == "":
		return "missing"
	case measured == "INCONCLUSIVE":
		return "inconclusive"
	case measured == truth:
		return "right"
	case measured == "PASS":
		return "false PASS"
	case measured == "FAIL":
		return "false FAIL"
	}
	return "wrong"
}

// MetricSummary is one row of the table.
type MetricSummary struct {
	Metric   string `json:"metric"`
	Unit     string `json:"unit"`
	Goal     string `json:"goal"`
	N        int    `json:"n"` // drives compared (both values present)
	Missing  int    `json:"missing"`
	Spurious int    `json:"spurious"`
	Breaks   int    `json:"breaking"` // errors beyond the goal, missing and spurious values
	// Unresolved counts the errors beyond the goal whose stated 95 %
	// interval is wider than the goal and holds the truth: the report said
	// its data could not resolve the quantity to the goal, and was right.
	// They still break the goal.
	Unresolved int      `json:"off_goal_unresolved"`
	AbsMedian  *float64 `json:"abs_error_median"`
	AbsP95     *float64 `json:"abs_error_p95"`
	AbsMax     *float64 `json:"abs_error_max"`
	RelMedian  *float64 `json:"rel_error_median,omitempty"`
	RelP95     *float64 `json:"rel_error_p95,omitempty"`
	RelMax     *float64 `json:"rel_error_max,omitempty"`
	Intervals  int      `json:"intervals"` // compared drives with a stated interval
	Held       int      `json:"held"`
	Coverage   *float64 `json:"coverage"` // held ÷ intervals; null = n/a
	// CoverageMet: every compared value states an interval and ≥ 90 % of
	// them hold the truth (QuantityCoverageGoal).
	CoverageMet bool `json:"coverage_met"`
	Met         bool `json:"met"`
}

func summarise(metric string, cs []Check) MetricSummary {
	s := MetricSummary{Metric: metric}
	var abs, rel []float64
	for _, c := range cs {
		s.Unit = c.Unit
		switch c.Status {
		case StatusMissing:
			s.Missing++
			s.Breaks++
		case StatusSpurious:
			s.Spurious++
			s.Breaks++
		case StatusOK, StatusBreak:
			s.N++
			if c.Status == StatusBreak {
				s.Breaks++
				if c.Held != nil && *c.Held && c.Lo != nil && c.Hi != nil && (*c.Hi-*c.Lo)/2 > c.Tol {
					s.Unresolved++
				}
			}
			abs = append(abs, math.Abs(*c.Err))
			if c.RelErr != nil {
				rel = append(rel, math.Abs(*c.RelErr))
			}
			if c.Held != nil {
				s.Intervals++
				if *c.Held {
					s.Held++
				}
			}
		}
	}
	s.AbsMedian, s.AbsP95, s.AbsMax = quantiles(abs)
	s.RelMedian, s.RelP95, s.RelMax = quantiles(rel)
	if s.Intervals > 0 {
		c := float64(s.Held) / float64(s.Intervals)
		s.Coverage = &c
	}
	s.CoverageMet = s.Intervals == s.N && s.Coverage != nil && *s.Coverage >= QuantityCoverageGoal
	s.Met = s.N > 0 && s.Breaks == 0
	return s
}

// quantiles returns the median, p95 (nearest rank) and max, nil if empty.
func quantiles(xs []float64) (med, p95, mx *float64) {
	if len(xs) == 0 {
		return nil, nil, nil
	}
	sort.Float64s(xs)
	rank := func(q float64) *float64 {
		v := stat.NearestRank(xs, q)
		return &v
	}
	return rank(0.5), rank(0.95), rank(1)
}

// goalFor returns a metric's goal text.
func goalFor(metric string) string {
	switch {
	case metric == "active_idle_w":
		return goalActiveIdle.Text
	case metric == "average_w", metric == "energy_j":
		return goalPower.Text
	case metric == "peak_w":
		return goalPeak.Text
	case metric == "devslp_floor_w":
		return goalFloor.Text
	case metric == "entry_ms", metric == "exit_ms", metric == "rise_ms":
		return goalLatency.Text
	case metric == "pre_cycle_w":
		return goalPreCycle.Text
	case strings.HasPrefix(metric, "residency."):
		return goalResidency.Text
	}
	return ""
}

// breaksOf lists what in a drive's checks and verdict misses a goal.
func breaksOf(cs []Check, verdict string) []string {
	var out []string
	for _, c := range cs {
		switch c.Status {
		case StatusBreak:
			out = append(out, fmt.Sprintf("%s %s (truth %s, goal %s)", c.Metric, fmtSigned(*c.Err, c.Unit), fmtVal(*c.Truth, c.Unit), goalFor(c.Metric)))
		case StatusMissing:
			out = append(out, fmt.Sprintf("%s missing (truth %s)", c.Metric, fmtVal(*c.Truth, c.Unit)))
		case StatusSpurious:
			out = append(out, fmt.Sprintf("%s %s reported, the model has none", c.Metric, fmtVal(*c.Measured, c.Unit)))
		}
	}
	if verdict == "false PASS" || verdict == "false FAIL" {
		out = append(out, "DevSlp verdict: "+verdict)
	}
	return out
}
