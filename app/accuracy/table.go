package accuracy

import (
	"cmp"
	"encoding/json"
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"time"

	"github.com/idlewatt/idlewatt/internal/outfile"
	"github.com/idlewatt/idlewatt/internal/stat"
	"github.com/idlewatt/idlewatt/states/drivesim"
)

// Campaign is a campaign's result; its JSON form is accuracy.json
// (keys in docs/analysis.md, "Truth-recovery campaign").
type Campaign struct {
	Schema   string          `json:"schema"`
	Seed     uint64          `json:"seed"`
	Drives   int             `json:"drives"`
	Replay   []int           `json:"replay,omitempty"`
	Phases   Phases          `json:"phases"`
	ElapsedS float64         `json:"elapsed_s"`
	Machine  string          `json:"machine"`
	Metrics  []MetricSummary `json:"metrics"`
	Verdicts VerdictSummary  `json:"verdicts"`
	Coverage CoverageSummary `json:"coverage"`
	Errors   int             `json:"errors"` // drives the chain failed on
	// Cycles is how many DevSlp cycles the drives that were cycled ran
	// (devslp.max_cycles adds cycles until the entry is resolved).
	Cycles CycleSummary `json:"devslp_cycles"`
	// ActiveIdle is how long the hubs' active-idle phases ran
	// (active_idle_max runs them on until every active idle is resolved).
	ActiveIdle PhaseSummary `json:"active_idle_phase"`
	// Note says plainly when the campaign is too small to be held to
	// the goals (shortNote); "" for a full one.
	Note string `json:"note,omitempty"`
	// Families is the table per noise family.
	Families []FamilySummary `json:"families"`
	GoalsMet bool            `json:"goals_met"`
	Missed   []string        `json:"goals_missed,omitempty"`
	// Pooled lists the campaigns a pooled table (--pool) was made from;
	// Seed is then 0.
	Pooled  []PoolSource  `json:"pooled,omitempty"`
	Results []DriveResult `json:"results"`
}

// CycleSummary counts the DevSlp cycles the meter saw per cycled drive.
type CycleSummary struct {
	Drives   int `json:"drives"`   // drives with at least one cycle
	Planned  int `json:"planned"`  // Phases.Cycles
	Extended int `json:"extended"` // drives that ran more
	Median   int `json:"median"`
	Max      int `json:"max"`
	Total    int `json:"total"`
	// EntryCycles of Total were entry cycles (devslp.entry_hold).
	EntryCycles int     `json:"entry_cycles"`
	EntryU95Ms  float64 `json:"entry_u95_ms"` // the resolution the cycles ran for (devslp.entry_u95)
}

func (s CycleSummary) text() string {
	if s.Drives == 0 {
		return "none"
	}
	return fmt.Sprintf("%d drives cycled, %d cycles planned each; %d ran more, until the entry was resolved to %g ms (devslp.max_cycles); median %d, max %d, %d in all, %d of them entry cycles (devslp.entry_hold)",
		s.Drives, s.Planned, s.Extended, s.EntryU95Ms, s.Median, s.Max, s.Total, s.EntryCycles)
}

// PhaseSummary is how long the hubs' active-idle phases ran.
type PhaseSummary struct {
	Hubs     int     `json:"hubs"`      // hubs with the phase
	PlannedS float64 `json:"planned_s"` // Phases.ActiveIdle
	MaxS     float64 `json:"limit_s"`   // Phases.ActiveIdleMax
	Extended int     `json:"extended"`  // hubs whose phase ran longer
	MedianS  float64 `json:"median_s"`
	LongestS float64 `json:"longest_s"`
}

func (s PhaseSummary) text() string {
	if s.Hubs == 0 {
		return "none"
	}
	return fmt.Sprintf("%d hubs, %.1f s planned; %d ran longer, until every drive's active idle was resolved to ±0.5 %% (active_idle_max %.1f s); median %.2f s, longest %.2f s",
		s.Hubs, s.PlannedS, s.Extended, s.MaxS, s.MedianS, s.LongestS)
}

// VerdictSummary is the DevSlp verdict confusion over the campaign.
type VerdictSummary struct {
	N            int                       `json:"n"`
	Right        int                       `json:"right"`
	FalsePass    int                       `json:"false_pass"`
	FalseFail    int                       `json:"false_fail"`
	Inconclusive int                       `json:"inconclusive"`
	Wrong        int                       `json:"wrong"` // another wrong outcome (e.g. NOT SUPPORTED for a broken drive)
	Missing      int                       `json:"missing"`
	Matrix       map[string]map[string]int `json:"matrix"` // truth → measured → count
	Met          bool                      `json:"met"`
}

// CoverageSummary is how often stated 95 % intervals held the truth, over
// every metric.
type CoverageSummary struct {
	Compared  int      `json:"compared"`  // values compared with the truth
	Intervals int      `json:"intervals"` // of those, with a stated interval
	Held      int      `json:"held"`
	Coverage  *float64 `json:"coverage"` // null = n/a (no interval stated)
	Met       bool     `json:"met"`
}

// QuantityCoverageGoal is the share of stated 95 % intervals that must
// hold the truth for every quantity, overall and within every noise family.
const QuantityCoverageGoal = 0.90

// FamilySummary is the table of the drives of one noise family.
type FamilySummary struct {
	Family   string          `json:"family"`
	Drives   int             `json:"drives"`
	Metrics  []MetricSummary `json:"metrics"`
	Coverage CoverageSummary `json:"coverage"`
	Verdicts VerdictSummary  `json:"verdicts"`
	Met      bool            `json:"met"` // every metric within goal, each quantity's intervals ≥ 90 %, no false verdict
	Missed   []string        `json:"goals_missed,omitempty"`
}

// tally is the table of a set of drives: one row per metric, the
// intervals' coverage and the verdicts.
type tally struct {
	metrics  []MetricSummary
	coverage CoverageSummary
	verdicts VerdictSummary
	missed   []string
}

// metricRank orders the fixed metrics first, then residency states alphabetically.
func metricRank(m string) int {
	for i, k := range []string{"active_idle_w", "average_w", "energy_j", "devslp_floor_w", "pre_cycle_w", "entry_ms", "rise_ms", "exit_ms"} {
		if m == k {
			return i
		}
	}
	return 100
}

func tallyOf(rs []DriveResult) tally {
	var t tally
	byMetric := map[string][]Check{}
	var order []string
	t.verdicts.Matrix = map[string]map[string]int{}
	for _, r := range rs {
		for _, ch := range r.Checks {
			if _, ok := byMetric[ch.Metric]; !ok {
				order = append(order, ch.Metric)
			}
			byMetric[ch.Metric] = append(byMetric[ch.Metric], ch)
		}
		if r.Truth == nil || r.Measured == nil {
			continue
		}
		v := &t.verdicts
		v.N++
		mv := r.Measured.Verdict
		if mv == "" {
			mv = "none"
		}
		if v.Matrix[r.Truth.Verdict] == nil {
			v.Matrix[r.Truth.Verdict] = map[string]int{}
		}
		v.Matrix[r.Truth.Verdict][mv]++
		switch r.Verdict {
		case "right":
			v.Right++
		case "false PASS":
			v.FalsePass++
		case "false FAIL":
			v.FalseFail++
		case "inconclusive":
			v.Inconclusive++
		case "missing":
			v.Missing++
		default:
			v.Wrong++
		}
	}
	sort.SliceStable(order, func(a, b int) bool {
		ra, rb := metricRank(order[a]), metricRank(order[b])
		if ra != rb {
			return ra < rb
		}
		return order[a] < order[b]
	})
	allIntervals := true
	for _, m := range order {
		s := summarise(m, byMetric[m])
		s.Goal = goalFor(m)
		t.metrics = append(t.metrics, s)
		t.coverage.Compared += s.N
		t.coverage.Intervals += s.Intervals
		t.coverage.Held += s.Held
		if s.Intervals < s.N {
			allIntervals = false
		}
		switch {
		case s.Met:
		case s.N+s.Missing+s.Spurious == 0:
			t.missed = append(t.missed, fmt.Sprintf("%s %s: not shown (no drive had it)", m, s.Goal))
		default:
			t.missed = append(t.missed, fmt.Sprintf("%s %s: %d of %d drives off goal", m, s.Goal, s.Breaks, s.N+s.Missing+s.Spurious))
		}
		if s.N > 0 && !s.CoverageMet {
			t.missed = append(t.missed, fmt.Sprintf("%s: 95 %% intervals hold the truth in %s, goal ≥ 90 %% with one stated for every value", m, covText(s)))
		}
	}
	if t.coverage.Intervals > 0 {
		x := float64(t.coverage.Held) / float64(t.coverage.Intervals)
		t.coverage.Coverage = &x
	}
	t.coverage.Met = allIntervals && t.coverage.Coverage != nil && *t.coverage.Coverage >= CoverageGoal
	t.verdicts.Met = t.verdicts.FalsePass == 0 && t.verdicts.FalseFail == 0 && t.verdicts.N > 0
	if !t.verdicts.Met {
		t.missed = append(t.missed, fmt.Sprintf("DevSlp verdicts: %d false PASS, %d false FAIL", t.verdicts.FalsePass, t.verdicts.FalseFail))
	}
	return t
}

// shortCov is a metric's coverage in a list: held/stated, and the values without one.
func shortCov(s MetricSummary) string {
	out := fmt.Sprintf("%d/%d", s.Held, s.Intervals)
	if s.Intervals < s.N {
		out += fmt.Sprintf(", %d unstated", s.N-s.Intervals)
	}
	return out
}

// covText is a metric's coverage for a sentence.
func covText(s MetricSummary) string {
	if s.Coverage == nil {
		return fmt.Sprintf("n/a (no interval stated for %d values)", s.N)
	}
	return fmt.Sprintf("%.1f %% (%d of %d; %d values without one)", 100**s.Coverage, s.Held, s.Intervals, s.N-s.Intervals)
}

func summariseCampaign(o Options, rs []DriveResult, el time.Duration) *Campaign {
	c := &Campaign{Schema: Schema, Seed: o.Seed, Drives: len(rs), Replay: o.Replay, Phases: o.Phases,
		ElapsedS: el.Seconds(), Machine: machine(), Results: rs}
	c.Note = shortNote(o.Phases, len(rs))
	var cycles []int
	phaseS := map[string]float64{} // by hub run directory
	byFamily := map[string][]DriveResult{}
	for _, r := range rs {
		byFamily[r.Case.Family] = append(byFamily[r.Case.Family], r)
		if r.Measured != nil && r.Measured.ActiveIdlePhaseS > 0 {
			phaseS[r.Dir] = r.Measured.ActiveIdlePhaseS
		}
		if r.Error != "" {
			c.Errors++
		}
		if r.Truth != nil && r.Truth.Cycles > 0 {
			cycles = append(cycles, r.Truth.Cycles)
		}
		if r.Measured != nil {
			c.Cycles.EntryCycles += r.Measured.EntryCycles
		}
	}
	c.Cycles.Planned = o.Phases.Cycles
	c.Cycles.EntryU95Ms = float64(cmp.Or(o.Phases.EntryU95, time.Millisecond)) / 1e6
	if len(cycles) > 0 {
		sort.Ints(cycles)
		c.Cycles.Drives, c.Cycles.Median, c.Cycles.Max = len(cycles), cycles[len(cycles)/2], cycles[len(cycles)-1]
		for _, n := range cycles {
			c.Cycles.Total += n
			if n > o.Phases.Cycles {
				c.Cycles.Extended++
			}
		}
	}
	c.ActiveIdle.PlannedS, c.ActiveIdle.MaxS = o.Phases.ActiveIdle.Seconds(), o.Phases.ActiveIdleMax.Seconds()
	if len(phaseS) > 0 {
		var ds []float64
		for _, d := range phaseS {
			ds = append(ds, d)
			if d > c.ActiveIdle.PlannedS+0.25 { // a step is 0.5 s
				c.ActiveIdle.Extended++
			}
		}
		c.ActiveIdle.Hubs, c.ActiveIdle.MedianS, c.ActiveIdle.LongestS = len(ds), stat.UpperMedian(ds), slices.Max(ds)
	}
	t := tallyOf(rs)
	c.Metrics, c.Coverage, c.Verdicts, c.Missed = t.metrics, t.coverage, t.verdicts, t.missed
	if !c.Coverage.Met {
		c.Missed = append(c.Missed, fmt.Sprintf("95 %% intervals hold the truth in ≥ 93 %%: %s", coverageText(c.Coverage)))
	}
	for _, fam := range drivesim.Families {
		frs := byFamily[fam]
		if len(frs) == 0 {
			continue
		}
		ft := tallyOf(frs)
		fs := FamilySummary{Family: fam, Drives: len(frs), Metrics: ft.metrics, Coverage: ft.coverage, Verdicts: ft.verdicts, Missed: ft.missed}
		fs.Met = len(fs.Missed) == 0
		c.Families = append(c.Families, fs)
		var low []string
		for _, m := range ft.metrics {
			if m.N > 0 && !m.CoverageMet {
				low = append(low, fmt.Sprintf("%s %s", m.Metric, shortCov(m)))
			}
		}
		if len(low) > 0 {
			c.Missed = append(c.Missed, fmt.Sprintf("family %s: 95 %% intervals hold the truth in under 90 %% (or are not stated) for %s", fam, strings.Join(low, ", ")))
		}
	}
	if c.Errors > 0 {
		c.Missed = append(c.Missed, fmt.Sprintf("the chain failed on %d drive(s)", c.Errors))
	}
	c.GoalsMet = len(c.Missed) == 0
	return c
}

// shortNote says when a campaign is smaller than the one the goals are
// set for (docs/analysis.md, "Truth-recovery campaign"): "" when it is not.
func shortNote(ph Phases, drives int) string {
	d := DefaultPhases()
	ph.MaxCycles, d.MaxCycles = 0, 0
	var why []string
	if ph != d {
		why = append(why, "its phases are shorter than the campaign's (--short)")
	}
	if drives < GoalDrives {
		why = append(why, fmt.Sprintf("it has %d drives, not ≥ %d", drives, GoalDrives))
	}
	if len(why) == 0 {
		return ""
	}
	return fmt.Sprintf("A short run, not expected to meet the goals: %s. The goals are set for ≥ %d drives × %d seeds with the default phases; short runs show the chain works and where it misses, not whether the goals are met.",
		strings.Join(why, " and "), GoalDrives, GoalSeeds)
}

// The campaign the goals are set for: GoalDrives drives, each of GoalSeeds seeds.
const (
	GoalDrives = 200
	GoalSeeds  = 3
)

func coverageText(s CoverageSummary) string {
	if s.Coverage == nil {
		return fmt.Sprintf("n/a (no interval stated for any of %d values)", s.Compared)
	}
	return fmt.Sprintf("%.1f %% (%d of %d intervals; %d values without one)", 100**s.Coverage, s.Held, s.Intervals, s.Compared-s.Intervals)
}

// Unit-aware formatting: watts below 0.1 W in mW, fractions in % / pp.
func fmtVal(x float64, unit string) string {
	switch unit {
	case "W":
		if math.Abs(x) < 0.1 {
			return fmt.Sprintf("%.3f mW", x*1e3)
		}
		return fmt.Sprintf("%.4f W", x)
	case "J":
		return fmt.Sprintf("%.3f J", x)
	case "ms":
		return fmt.Sprintf("%.2f ms", x)
	case "fraction":
		return fmt.Sprintf("%.2f %%", 100*x)
	}
	return fmt.Sprintf("%g", x)
}

func fmtSigned(x float64, unit string) string {
	switch unit {
	case "fraction":
		return fmt.Sprintf("%+.2f pp", 100*x)
	case "W":
		if math.Abs(x) < 0.1 {
			return fmt.Sprintf("%+.3f mW", x*1e3)
		}
		return fmt.Sprintf("%+.4f W", x)
	}
	if x >= 0 {
		return "+" + fmtVal(x, unit)
	}
	return fmtVal(x, unit)
}

func fmtAbs(p *float64, unit string) string {
	if p == nil {
		return "–"
	}
	if unit == "fraction" {
		return fmt.Sprintf("%.2f pp", 100**p)
	}
	return fmtVal(*p, unit)
}

func fmtRel(p *float64) string {
	if p == nil {
		return "–"
	}
	return fmt.Sprintf("%.2f %%", 100**p)
}

func fmtCov(s MetricSummary) string {
	if s.Coverage == nil {
		return "n/a"
	}
	return fmt.Sprintf("%.0f %% (%d/%d)", 100**s.Coverage, s.Held, s.Intervals)
}

func yes(b bool) string {
	if b {
		return "yes"
	}
	return "**no**"
}

// Markdown writes the table, the verdicts and the drives off goal.
func (c *Campaign) Markdown(w io.Writer) {
	if c.Note != "" {
		fmt.Fprintf(w, "**%s**\n\n", c.Note)
	}
	c.poolMarkdown(w)
	fmt.Fprintf(w, "| metric | goal | N | missing | spurious | \\|error\\| median | p95 | max | rel. median | rel. p95 | rel. max | off goal | 95 %% interval holds | met |\n")
	fmt.Fprintf(w, "|---|---|---|---|---|---|---|---|---|---|---|---|---|---|\n")
	for _, s := range c.Metrics {
		off := fmt.Sprint(s.Breaks)
		if s.Unresolved > 0 {
			off = fmt.Sprintf("%d (%d unresolved)", s.Breaks, s.Unresolved)
		}
		fmt.Fprintf(w, "| %s | %s | %d | %d | %d | %s | %s | %s | %s | %s | %s | %s | %s | %s |\n",
			s.Metric, s.Goal, s.N, s.Missing, s.Spurious, fmtAbs(s.AbsMedian, s.Unit), fmtAbs(s.AbsP95, s.Unit), fmtAbs(s.AbsMax, s.Unit),
			fmtRel(s.RelMedian), fmtRel(s.RelP95), fmtRel(s.RelMax), off, fmtCov(s), yes(s.Met))
	}
	fmt.Fprintf(w, "\n\"Unresolved\": off goal, but the report's own 95 %% interval is wider than the goal and holds the truth — the data could not resolve the quantity that finely, and the report said so.\n")
	fmt.Fprintf(w, "\nDevSlp cycles: %s.\n", c.Cycles.text())
	fmt.Fprintf(w, "\nActive-idle phases: %s.\n", c.ActiveIdle.text())
	v := c.Verdicts
	fmt.Fprintf(w, "\nDevSlp verdicts (%d drives): %d right, **%d false PASS, %d false FAIL**, %d inconclusive, %d other wrong, %d without a verdict — goal (0 false PASS, 0 false FAIL) met: %s.\n\n",
		v.N, v.Right, v.FalsePass, v.FalseFail, v.Inconclusive, v.Wrong, v.Missing, yes(v.Met))
	var cols []string
	seen := map[string]bool{}
	for _, row := range v.Matrix {
		for k := range row {
			if !seen[k] {
				seen[k] = true
				cols = append(cols, k)
			}
		}
	}
	sort.Strings(cols)
	fmt.Fprintf(w, "| truth \\ measured | %s |\n|---|%s\n", strings.Join(cols, " | "), strings.Repeat("---|", len(cols)))
	for _, t := range []string{"PASS", "NOT SUPPORTED", "FAIL"} {
		row := v.Matrix[t]
		fmt.Fprintf(w, "| %s |", t)
		for _, k := range cols {
			fmt.Fprintf(w, " %d |", row[k])
		}
		fmt.Fprintln(w)
	}
	fmt.Fprintf(w, "\n95 %% intervals holding the truth: %s — goal ≥ 93 %% met: %s.\n", coverageText(c.Coverage), yes(c.Coverage.Met))
	c.familyMarkdown(w)
	if c.Errors > 0 {
		fmt.Fprintf(w, "\nThe chain failed on %d drive(s).\n", c.Errors)
	}
	if c.GoalsMet {
		fmt.Fprintf(w, "\nAll goals met.\n")
	} else {
		fmt.Fprintf(w, "\nGoals missed:\n")
		for _, m := range c.Missed {
			fmt.Fprintf(w, "- %s\n", m)
		}
	}
	off := c.offGoal()
	if len(off) > 0 {
		fmt.Fprintf(w, "\n### Drives off goal (%d): replay with `idlewatt accuracy --replay SEED:INDEX`\n\n", len(off))
		for _, r := range off {
			fmt.Fprintf(w, "- `%s` %s, %s, policy %s, noise %s: %s\n", r.Case.Replay(), r.Case.Profile.Description, r.Case.Profile.DevSlpMode(), r.Case.Policy, r.Case.Family, r.problem())
		}
	}
}

func (r DriveResult) problem() string {
	if r.Error != "" {
		return r.Error
	}
	return strings.Join(r.Breaks, "; ")
}

func (c *Campaign) offGoal() []DriveResult {
	var out []DriveResult
	for _, r := range c.Results {
		if r.Error != "" || len(r.Breaks) > 0 {
			out = append(out, r)
		}
	}
	return out
}

// Table prints the terminal summary: the table, then each drive off goal
// with its replay argument and profile (as JSON, to be replayed exactly).
func (c *Campaign) Table(w io.Writer) {
	if c.Note != "" {
		fmt.Fprintf(w, "NOTE: %s\n", c.Note)
	}
	fmt.Fprintf(w, "%-20s %-18s %4s %4s %4s %12s %12s %12s %9s %9s %5s %10s %4s\n",
		"metric", "goal", "N", "miss", "spur", "|err| med", "p95", "max", "rel p95", "rel max", "off", "interval", "met")
	for _, s := range c.Metrics {
		met := "yes"
		if !s.Met {
			met = "NO"
		}
		fmt.Fprintf(w, "%-20s %-18s %4d %4d %4d %12s %12s %12s %9s %9s %5d %10s %4s\n",
			s.Metric, s.Goal, s.N, s.Missing, s.Spurious, fmtAbs(s.AbsMedian, s.Unit), fmtAbs(s.AbsP95, s.Unit), fmtAbs(s.AbsMax, s.Unit),
			fmtRel(s.RelP95), fmtRel(s.RelMax), s.Breaks, fmtCov(s), met)
	}
	v := c.Verdicts
	fmt.Fprintf(w, "DevSlp verdicts: %d drives, %d right, %d false PASS, %d false FAIL, %d inconclusive, %d other wrong, %d none\n",
		v.N, v.Right, v.FalsePass, v.FalseFail, v.Inconclusive, v.Wrong, v.Missing)
	fmt.Fprintf(w, "95 %% intervals holding the truth: %s\n", coverageText(c.Coverage))
	c.familyTable(w)
	fmt.Fprintf(w, "DevSlp cycles: %s\n", c.Cycles.text())
	fmt.Fprintf(w, "Active-idle phases: %s\n", c.ActiveIdle.text())
	for _, r := range c.offGoal() {
		prof, _ := json.Marshal(r.Case.Profile)
		fmt.Fprintf(w, "off goal: --replay %s (policy %s, port %d, emulator seed %d, noise %s, meter %s %.3g µA): %s\n  profile %s\n",
			r.Case.Replay(), r.Case.Policy, r.Case.Port, r.Case.EmulatorSeed, r.Case.Family, r.Case.Meter.Format, r.Case.Meter.LSB5VA*1e6, r.problem(), prof)
	}
	if c.GoalsMet {
		fmt.Fprintln(w, "all goals met")
	} else {
		fmt.Fprintf(w, "goals missed: %s\n", strings.Join(c.Missed, "; "))
	}
}

// OutputFiles are the files WriteFiles writes into the output directory.
var OutputFiles = []string{"accuracy.json", "accuracy.md"}

// CheckOut refuses an output directory that is a symlink or not a
// directory, or whose campaign files or runs/ exist unless overwrite
// (internal/outfile's rules), before any drive is run.
func CheckOut(dir string, overwrite bool) error {
	if err := outfile.CheckDir(dir); err != nil {
		return err
	}
	o := outfile.Options{Overwrite: overwrite}
	if err := outfile.CheckAll(dir, OutputFiles, o); err != nil {
		return err
	}
	runs := filepath.Join(dir, "runs")
	if fi, err := os.Lstat(runs); err == nil {
		if fi.Mode()&os.ModeSymlink != 0 || !fi.IsDir() {
			return fmt.Errorf("%s is not a directory; refusing to write runs into it", runs)
		}
		if !overwrite {
			return fmt.Errorf("%s exists (a previous campaign); use a new --out, or --overwrite to replace it", runs)
		}
	}
	return nil
}

// WriteFiles writes accuracy.json and accuracy.md into dir, each through a
// temporary file renamed into place (internal/outfile).
func (c *Campaign) WriteFiles(dir, command string, overwrite bool) error {
	b, err := json.MarshalIndent(c, "", "  ")
	if err != nil {
		return err
	}
	o := outfile.Options{Overwrite: overwrite}
	if err := outfile.WriteFile(filepath.Join(dir, "accuracy.json"), append(b, '\n'), o); err != nil {
		return err
	}
	var md strings.Builder
	if len(c.Pooled) > 0 {
		fmt.Fprintf(&md, "# Truth-recovery campaigns, pooled\n\n`%s` — %d campaigns, %d drives, %.0f s of running in all.\n\n", command, len(c.Pooled), c.Drives, c.ElapsedS)
	} else {
		fmt.Fprintf(&md, "# Truth-recovery campaign\n\n`%s` — seed %d, %d drives, %.0f s on %s.\n\n", command, c.Seed, c.Drives, c.ElapsedS, c.Machine)
	}
	c.Markdown(&md)
	return outfile.WriteFile(filepath.Join(dir, "accuracy.md"), []byte(md.String()), o)
}

// familyCell is one metric of one family: intervals held of stated, and
// the drives off goal.
func familyCell(f FamilySummary, metric string) string {
	for _, m := range f.Metrics {
		if m.Metric != metric {
			continue
		}
		if m.N+m.Missing+m.Spurious == 0 {
			return "–"
		}
		cov := "n/a"
		if m.Coverage != nil {
			cov = fmt.Sprintf("%d/%d", m.Held, m.Intervals)
		}
		if m.Breaks > 0 {
			cov += fmt.Sprintf(" · %d off", m.Breaks)
		}
		return cov
	}
	return "–"
}

// familyMetrics is the metrics of the overall table that some family has.
func (c *Campaign) familyMetrics() []string {
	var out []string
	for _, m := range c.Metrics {
		out = append(out, m.Metric)
	}
	return out
}

func (c *Campaign) familyMarkdown(w io.Writer) {
	if len(c.Families) == 0 {
		return
	}
	fmt.Fprintf(w, "\n### Per noise family\n\nEach cell: 95 %% intervals that held the truth / intervals stated (goal ≥ 90 %% in every family and quantity), then the drives off goal.\n\n| metric |")
	for _, f := range c.Families {
		fmt.Fprintf(w, " %s (%d) |", f.Family, f.Drives)
	}
	fmt.Fprintf(w, "\n|---|%s\n", strings.Repeat("---|", len(c.Families)))
	for _, m := range c.familyMetrics() {
		fmt.Fprintf(w, "| %s |", m)
		for _, f := range c.Families {
			fmt.Fprintf(w, " %s |", familyCell(f, m))
		}
		fmt.Fprintln(w)
	}
	fmt.Fprintf(w, "| all intervals |")
	for _, f := range c.Families {
		fmt.Fprintf(w, " %s |", familyCoverage(f))
	}
	fmt.Fprintf(w, "\n| false PASS / FAIL |")
	for _, f := range c.Families {
		fmt.Fprintf(w, " %d / %d |", f.Verdicts.FalsePass, f.Verdicts.FalseFail)
	}
	fmt.Fprintf(w, "\n| goals met |")
	for _, f := range c.Families {
		fmt.Fprintf(w, " %s |", yes(f.Met))
	}
	fmt.Fprintln(w)
}

func familyCoverage(f FamilySummary) string {
	if f.Coverage.Coverage == nil {
		return "n/a"
	}
	return fmt.Sprintf("%.1f %% (%d/%d)", 100**f.Coverage.Coverage, f.Coverage.Held, f.Coverage.Intervals)
}

func (c *Campaign) familyTable(w io.Writer) {
	if len(c.Families) == 0 {
		return
	}
	fmt.Fprintf(w, "per noise family (intervals held/stated · drives off goal):\n%-20s", "metric")
	for _, f := range c.Families {
		fmt.Fprintf(w, " %14s", fmt.Sprintf("%s(%d)", f.Family, f.Drives))
	}
	fmt.Fprintln(w)
	for _, m := range c.familyMetrics() {
		fmt.Fprintf(w, "%-20s", m)
		for _, f := range c.Families {
			fmt.Fprintf(w, " %14s", familyCell(f, m))
		}
		fmt.Fprintln(w)
	}
	fmt.Fprintf(w, "%-20s", "false PASS/FAIL")
	for _, f := range c.Families {
		fmt.Fprintf(w, " %14s", fmt.Sprintf("%d/%d", f.Verdicts.FalsePass, f.Verdicts.FalseFail))
	}
	fmt.Fprintln(w)
}
