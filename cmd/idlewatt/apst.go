package main

import (
	"context"
	"fmt"
	"io"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/spf13/cobra"

	"github.com/idlewatt/idlewatt/analysis/states"
	"github.com/idlewatt/idlewatt/states/nvme"
	nvmesim "github.com/idlewatt/idlewatt/states/nvme/sim"
	"github.com/idlewatt/idlewatt/units"
)

// `apst verify` and `apst idle` (issue 18): APST verification and idle
// power per latency tolerance × ASPM policy on a simulated NVMe drive
// (states/nvme/sim) measured by a simulated meter on its 3.3 V rail, on a
// virtual clock. The judging is analysis/states' (JudgeAPSTCycle, the
// DevSlp verdict's checks); the host's APST table is the one the kernel
// would program (nvme.PlanAPST). It reads no meter yet: the emulated hub's
// 3.3 V rail carries an NVMe drive (hub emulate --nvme), but the rig that
// would issue the cycles' I/O builds SATA drives only (docs/states.md).

// apstSetup is one simulated drive under one host configuration.
type apstSetup struct {
	prof     nvmesim.Profile
	tol      nvme.Tolerance
	quirks   nvme.Quirks
	aspm     string // pcie_aspm policy: which link states the drive may use
	l1, l12  bool
	plan     nvme.KernelPlan
	entry    float64 // actual/declared latency
	exit     float64
	meter    nvmesim.MeterOptions
	linkIdle units.Watts   // the link's idle draw under the policy
	linkExit time.Duration // the link's exit under the policy
}

func newAPSTSetup(profile, tol, quirks, aspm string) (*apstSetup, error) {
	p, ok := nvmesim.ProfileByName(profile)
	if !ok {
		var names []string
		for _, q := range nvmesim.Profiles() {
			names = append(names, q.Name)
		}
		return nil, usageErr("--sim: no built-in NVMe profile %q (have %s)", profile, strings.Join(names, ", "))
	}
	s := &apstSetup{prof: p, entry: 1, exit: 1, meter: nvmesim.DefaultMeter()}
	var err error
	if s.tol, err = nvme.ParseTolerance(tol); err != nil {
		return nil, usageErr("--latency-us: %v", err)
	}
	for _, q := range strings.Split(quirks, ",") {
		switch strings.ToUpper(strings.TrimSpace(q)) {
		case "":
		case "NO_APST":
			s.quirks |= nvme.QuirkNoAPST
		case "NO_DEEPEST_PS":
			s.quirks |= nvme.QuirkNoDeepestPS
		default:
			return nil, usageErr("--quirk: unknown quirk %q (NO_APST, NO_DEEPEST_PS)", q)
		}
	}
	if s.aspm, err = nvme.ParseASPMPolicyName(aspm); err != nil {
		return nil, usageErr("--aspm: %v", err)
	}
	switch s.aspm {
	case "powersupersave", "default": // the simulated firmware leaves every link state on
		s.l1, s.l12, s.linkIdle, s.linkExit = true, true, 0, p.L12Exit
	case "powersave":
		s.l1, s.linkIdle, s.linkExit = true, p.LinkL1, p.L1Exit
	default:
		s.linkIdle = p.LinkL0
	}
	s.plan = nvme.PlanAPST(p.Identify, s.tol.Us, s.quirks, nvme.ModuleParams{})
	return s, nil
}

// drive is a fresh simulated drive programmed as the kernel would.
func (s *apstSetup) drive() *nvmesim.Drive {
	d := nvmesim.New(s.prof)
	e := make([]nvme.APSTEntry, 32)
	copy(e, s.plan.Entries)
	d.SetAPST(0, s.plan.Enabled, e)
	d.SetASPM(0, s.l1, s.l12)
	d.SetLatencyScale(s.entry, s.exit)
	return d
}

// chain walks the host's table from PS0: when (after the last completion,
// declared entry latencies) the entry into ps begins (ok false if the
// table never enters it), and when the last step of the table ends.
func (s *apstSetup) chain(ps int) (enter time.Duration, ok bool, end time.Duration) {
	if !s.plan.Enabled {
		return 0, false, 0
	}
	seen := map[int]bool{0: true}
	at := time.Duration(0)
	for cur := 0; cur < len(s.plan.Entries); {
		e := s.plan.Entries[cur]
		if e.ITPTms == 0 || e.ITPS >= len(s.prof.Identify.PowerStates) || seen[e.ITPS] {
			break
		}
		start := at + time.Duration(e.ITPTms)*time.Millisecond
		if e.ITPS == ps {
			enter, ok = start, true
		}
		seen[e.ITPS] = true
		at = start + time.Duration(s.prof.Identify.PowerStates[e.ITPS].EntryLatencyUs)*time.Microsecond
		cur = e.ITPS
	}
	return enter, ok, at
}

// levels are the drive's idle levels under the link policy: the table's
// (non-operational states at their declared power, operational at the
// profile's idle power), each plus the link's idle draw.
func (s *apstSetup) levels() []nvme.Level {
	l := nvme.TableLevels(s.prof.Identify, s.prof.OperationalIdle)
	for i := range l {
		l[i].W += s.linkIdle
	}
	return l
}

// expectPS is the deepest non-operational state the kernel's quirks allow.
func (s *apstSetup) expectPS() int {
	best := -1
	for i, p := range s.prof.Identify.PowerStates {
		if p.NonOperational && (i >= len(s.plan.States) || !s.plan.States[i].ExcludedByQuirk) &&
			(best < 0 || p.MaxPower < s.prof.Identify.PowerStates[best].MaxPower) {
			best = i
		}
	}
	return best
}

// support is "yes", or "no: …" when the drive or the kernel's quirk rule
// APST out.
func (s *apstSetup) support() string {
	switch {
	case !s.prof.Identify.APSTA:
		return "no: APSTA clear, the controller does not support APST"
	case s.quirks&nvme.QuirkNoAPST != 0:
		return "no: the kernel's NO_APST quirk for this drive keeps APST off"
	}
	return "yes"
}

type apstVerifyResult struct {
	Schema  string             `json:"schema"`
	Profile string             `json:"profile"`
	Host    apstHost           `json:"host"`
	Verdict states.APSTVerdict `json:"verdict"`
	Meter   apstMeter          `json:"meter"`
	Unnamed []units.Watts      `json:"unnamed_levels_w,omitempty"`
	Plan    nvme.KernelPlan    `json:"kernel_plan"`
}

type apstHost struct {
	Tolerance string `json:"latency_tolerance"`
	Quirks    string `json:"quirks,omitempty"`
	ASPM      string `json:"aspm_policy"`
	Levels    string `json:"levels"`
}

type apstMeter struct {
	PeriodUs float64 `json:"period_us"`
	NoiseW   float64 `json:"noise_w"`
	LSBW     float64 `json:"lsb_w,omitempty"`
	// Hub: the emulated hub's 3.3 V rail through the hub driver (its
	// quantisation is the 20-bit LSB of the calibration), not the
	// simulated meter.
	Hub bool `json:"hub,omitempty"`
}

// runAPSTVerify runs the cycles on the simulated meter, or with onHub on
// the emulated hub, and judges them.
func runAPSTVerify(ctx context.Context, s *apstSetup, cycles int, expect int, learn, onHub bool) (apstVerifyResult, error) {
	res := apstVerifyResult{Schema: "idlewatt.apst-verify/1", Profile: s.prof.Name, Plan: s.plan,
		Host:  apstHost{Tolerance: s.tol.Raw, ASPM: s.aspm, Levels: "table"},
		Meter: apstMeter{PeriodUs: float64(s.meter.Period) / 1e3, NoiseW: float64(s.meter.NoiseW), LSBW: float64(s.meter.LSBW)}}
	if s.quirks != 0 {
		res.Host.Quirks = s.quirks.String()
	}
	if expect < 0 {
		expect = s.expectPS()
	}
	if expect < 0 || expect >= len(s.prof.Identify.PowerStates) || !s.prof.Identify.PowerStates[expect].NonOperational {
		return res, usageErr("--expect-ps %d: %s has no such non-operational state", expect, s.prof.Name)
	}
	enter, entered, end := s.chain(expect)
	hold := end + 200*time.Millisecond
	const service = 100 * time.Microsecond
	var cyc []nvmesim.APSTCycle
	var samples []states.Sample
	if onHub {
		a, err := openAPSTHub(ctx, s)
		if err != nil {
			return res, err
		}
		cyc, err = apstHubCycles(ctx, a, cycles, hold, service)
		samples = a.samples()
		if cerr := a.close(); err == nil {
			err = cerr
		}
		if err != nil {
			return res, fmt.Errorf("apst verify --hub: %w", err)
		}
		res.Meter = apstMeter{PeriodUs: 1e6 / apstHubRate, NoiseW: 20e-6 * 3.3, Hub: true}
	} else {
		sess := nvmesim.NewSession(s.drive(), s.meter, 0)
		cyc = sess.RunAPSTCycles(cycles, hold, service)
		samples = make([]states.Sample, len(sess.Samples))
		for i, x := range sess.Samples {
			samples[i] = states.Sample{T: int64(x.At), W: float64(x.W)}
		}
	}
	cr := states.APSTCriteria{ExpectPS: expect, Levels: s.levels(), LinkExitMs: float64(s.linkExit) / 1e6}
	if learn {
		// Learn from the samples with no read outstanding.
		var idle []units.Watts
		k := 0
		for _, c := range cyc {
			for ; k < len(samples) && samples[k].T < int64(c.ProbeIssue); k++ {
				if samples[k].T > int64(c.Idle) {
					idle = append(idle, units.Watts(samples[k].W))
				}
			}
		}
		lv, unnamed, err := nvme.LearnLevels(cr.Levels, idle)
		if err != nil {
			return res, failErr("apst verify: learning levels: %w", err)
		}
		cr.Levels, res.Unnamed, res.Host.Levels = lv, unnamed, "learned"
	}
	var out []states.APSTCycle
	for _, c := range cyc {
		tm := states.APSTTiming{Cycle: c.Cycle, Idle: int64(c.Idle), ProbeIssue: int64(c.ProbeIssue), ProbeComplete: int64(c.ProbeComplete),
			WarmMs: float64(c.WarmComplete-c.WarmIssue) / 1e6}
		if entered {
			tm.EnterAt = int64(c.Idle + enter)
		}
		a := searchSamples(samples, tm.Idle)
		b := searchSamples(samples, tm.ProbeIssue)
		out = append(out, states.JudgeAPSTCycle(tm, samples[a:b], cr, states.JudgeOptions{}))
	}
	hostPlan := ""
	switch {
	case !s.plan.Enabled:
		hostPlan = "the host leaves APST off (" + s.plan.Off + ")"
	case !entered:
		why := ""
		if expect < len(s.plan.States) {
			why = ": " + s.plan.States[expect].Reason
		}
		hostPlan = fmt.Sprintf("the host's APST table never enters PS%d%s", expect, why)
	}
	res.Verdict = states.SummariseAPST(out, cr, s.support(), hostPlan)
	return res, nil
}

func searchSamples(s []states.Sample, t int64) int {
	lo, hi := 0, len(s)
	for lo < hi {
		m := (lo + hi) / 2
		if s[m].T < t {
			lo = m + 1
		} else {
			hi = m
		}
	}
	return lo
}

func writeAPSTVerify(w io.Writer, r apstVerifyResult) {
	v := r.Verdict
	fmt.Fprintf(w, "simulated %s, latency tolerance %s µs, ASPM %s", r.Profile, r.Host.Tolerance, r.Host.ASPM)
	if r.Host.Quirks != "" {
		fmt.Fprintf(w, ", quirks %s", r.Host.Quirks)
	}
	fmt.Fprintf(w, "; levels (%s):", r.Host.Levels)
	for _, l := range v.Criteria.Levels {
		fmt.Fprintf(w, " PS%d %s mW", l.PS, states.PM(states.Num(l.W), states.None, 1e3))
	}
	fmt.Fprintln(w)
	tw := tabwriter.NewWriter(w, 2, 8, 2, ' ', 0)
	fmt.Fprintln(tw, "cycle\toutcome\treached\tfloor mW\tentry ms\texit ms\treason")
	for _, c := range v.Cycles {
		ps := "—"
		if c.ReachedPS >= 0 {
			ps = fmt.Sprintf("PS%d", c.ReachedPS)
		}
		fmt.Fprintf(tw, "%d\t%s\t%s\t%s\t%s\t%s\t%s\n", c.Cycle, c.Outcome, ps, states.PM(c.FloorW, c.FloorU95W, 1e3),
			states.PM(c.EntryMs, c.EntryU95Ms, 1), states.PM(c.ExitMs, c.ExitU95Ms, 1), strings.Join(c.Reasons, "; "))
	}
	tw.Flush()
	fmt.Fprintln(w, v.String())
}

// apstIdleRow is one combination's idle power: recovered from the
// simulated meter's samples against the model's mean over the window.
type apstIdleRow struct {
	Profile   string  `json:"profile"`
	Tolerance string  `json:"latency_tolerance"`
	ASPM      string  `json:"aspm_policy"`
	Plan      string  `json:"apst_path"`
	MeanW     float64 `json:"mean_w"`
	U95W      float64 `json:"u95_w"`
	TruthW    float64 `json:"truth_w"`
	ErrorW    float64 `json:"error_w"`
	Samples   int     `json:"samples"`
}

// apstIdle settles each combination and measures its idle power: the mean
// of the samples with its batch-means uncertainty (analysis/states), and
// the model's exact mean over the same window.
func apstIdle(s *apstSetup, settle, measure time.Duration) apstIdleRow {
	d := s.drive()
	sess := nvmesim.NewSession(d, s.meter, 0)
	sess.Idle(settle)
	from := sess.Now()
	n0 := len(sess.Samples)
	sess.Idle(measure)
	w := make([]float64, 0, len(sess.Samples)-n0)
	for _, x := range sess.Samples[n0:] {
		w = append(w, float64(x.W))
	}
	m := states.MeanBatches(w, max(1, int(10*time.Millisecond/s.meter.Period)))
	truth := float64(d.MeanIdlePower(from, sess.Now()))
	return apstIdleRow{Profile: s.prof.Name, Tolerance: s.tol.Raw, ASPM: s.aspm, Plan: s.path(), MeanW: m.Mean, U95W: 1.96 * m.U,
		TruthW: truth, ErrorW: m.Mean - truth, Samples: m.N}
}

// path says where the host's APST table takes the drive.
func (s *apstSetup) path() string {
	if !s.plan.Enabled {
		return "APST off"
	}
	var steps []string
	seen := map[int]bool{0: true}
	for cur := 0; cur < len(s.plan.Entries); {
		e := s.plan.Entries[cur]
		if e.ITPTms == 0 || seen[e.ITPS] {
			break
		}
		steps = append(steps, fmt.Sprintf("PS%d after %d ms", e.ITPS, e.ITPTms))
		seen[e.ITPS], cur = true, e.ITPS
	}
	if len(steps) == 0 {
		return "no transition"
	}
	return strings.Join(steps, ", then ")
}

func apstSetupFlags(c *cobra.Command) {
	c.Flags().String("sim", "980pro-1tb", "built-in simulated NVMe drive (980pro-1tb, 660p-1tb)")
	c.Flags().String("quirk", "", "kernel quirks to apply to the drive (NO_APST, NO_DEEPEST_PS; comma-separated)")
	c.Flags().Uint64("seed", 1, "the simulated meter's noise seed")
	c.Flags().Bool("hub", false, "measure on an emulated hub's 3.3 V rail through the hub driver, in real time, instead of the simulated meter")
}

func init() {
	register(func() *cobra.Command {
		c := &cobra.Command{Use: "apst", Short: "NVMe APST verification and idle power on a simulated NVMe drive"}
		v := &cobra.Command{
			Use:   "verify [--sim PROFILE] [--latency-us N] [--aspm POLICY] [--cycles N]",
			Short: "Cycle a simulated NVMe drive through APST and judge entry, floor and exit for each cycle",
			Long: `Each cycle: a read, then idle while the APST table the kernel would program
(for --latency-us, --quirk and the drive's power-state table) takes the
drive down, then a probe read and a warm read. The power must reach the
expected non-operational state's level (--expect-ps, default the deepest
the quirks allow) within that state's entry latency after the table's idle
time (ITPT) ran out, and the probe must wait no longer than the exit
latency of the state reached, plus the PCIe link's exit under --aspm.
Levels come from the power-state table (--levels table) or are learned
from the capture (--levels learned). Verdicts as for DevSlp: pass, fail,
inconclusive, not_supported (APSTA clear, or a NO_APST quirk). Exit 1
unless the verdict is pass.

The drive is simulated (states/nvme/sim), on a virtual clock, with a
simulated 20 kHz meter on its 3.3 V rail (with --hub: on port 1's 3.3 V rail
of an emulated protocol-3 hub, read by the hub driver over its pty at
10 kS/s, in real time); --entry-scale and --exit-scale
make its actual latencies a multiple of the declared ones (default 0.6:
within spec; over 1 breaks the descriptor).`,
			Args: cobra.NoArgs,
			RunE: func(cmd *cobra.Command, args []string) error {
				f := cmd.Flags()
				name, _ := f.GetString("sim")
				tol, _ := f.GetString("latency-us")
				q, _ := f.GetString("quirk")
				aspm, _ := f.GetString("aspm")
				s, err := newAPSTSetup(name, tol, q, aspm)
				if err != nil {
					return err
				}
				s.entry, _ = f.GetFloat64("entry-scale")
				s.exit, _ = f.GetFloat64("exit-scale")
				s.meter.Seed, _ = f.GetUint64("seed")
				if s.entry <= 0 || s.exit <= 0 || s.entry > 100 || s.exit > 100 {
					return usageErr("--entry-scale %g, --exit-scale %g: each must be in (0, 100]", s.entry, s.exit)
				}
				n, _ := f.GetInt("cycles")
				if n < 1 || n > 1000 {
					return usageErr("--cycles %d: give 1 to 1000", n)
				}
				lv, _ := f.GetString("levels")
				if lv != "table" && lv != "learned" {
					return usageErr("--levels %q: table or learned", lv)
				}
				expect, _ := f.GetInt("expect-ps")
				onHub, _ := f.GetBool("hub")
				res, err := runAPSTVerify(cmd.Context(), s, n, expect, lv == "learned", onHub)
				if err != nil {
					return err
				}
				if j, _ := f.GetBool("json"); j {
					if err := writeJSON(cmd.OutOrStdout(), res); err != nil {
						return err
					}
				} else {
					writeAPSTVerify(cmd.OutOrStdout(), res)
				}
				if !res.Verdict.Pass() {
					return failErr("APST verification: %s", res.Verdict.String())
				}
				return nil
			},
		}
		apstSetupFlags(v)
		v.Flags().String("latency-us", "100000", "the NVMe latency tolerance the kernel plans APST for (µs, auto or any)")
		v.Flags().String("aspm", "powersupersave", "pcie_aspm policy: which link states the drive may use")
		v.Flags().Int("cycles", 10, "APST cycles")
		v.Flags().Int("expect-ps", -1, "the non-operational state to expect (default: the deepest the quirks allow)")
		v.Flags().String("levels", "table", "state levels: table (the power-state table) or learned (from the capture)")
		v.Flags().Float64("entry-scale", 0.6, "the simulated drive's actual entry latency ÷ the declared one")
		v.Flags().Float64("exit-scale", 0.6, "the simulated drive's actual exit latency ÷ the declared one")
		v.Flags().Bool("json", false, "write the verdict as JSON")
		c.AddCommand(v)

		id := &cobra.Command{
			Use:   "idle [--sim PROFILE] --latency-us LIST --aspm LIST",
			Short: "Idle power of a simulated NVMe drive per latency tolerance × ASPM policy, recovered against the model",
			Long: `For each combination: a fresh simulated drive with the APST table the kernel
would program for the tolerance, the link states the policy allows; idle
for --settle, then measure for --measure with the simulated meter. Prints
the recovered mean ± 95 % (batch means), the model's exact mean over the
same window, and their difference. --hub measures through an emulated
hub's 3.3 V rail instead, in real time (settle + measure per combination).`,
			Args: cobra.NoArgs,
			RunE: func(cmd *cobra.Command, args []string) error {
				f := cmd.Flags()
				name, _ := f.GetString("sim")
				q, _ := f.GetString("quirk")
				lats, _ := f.GetString("latency-us")
				aspms, _ := f.GetString("aspm")
				settle, _ := f.GetDuration("settle")
				measure, _ := f.GetDuration("measure")
				seed, _ := f.GetUint64("seed")
				if settle < 0 || measure < 100*time.Millisecond || measure > time.Hour {
					return usageErr("--settle %v, --measure %v: settle ≥ 0, measure 100 ms to 1 h", settle, measure)
				}
				var rows []apstIdleRow
				for _, l := range strings.Split(lats, ",") {
					for _, a := range strings.Split(aspms, ",") {
						s, err := newAPSTSetup(name, strings.TrimSpace(l), q, strings.TrimSpace(a))
						if err != nil {
							return err
						}
						s.meter.Seed = seed + uint64(len(rows)) // independent noise per row
						if onHub, _ := f.GetBool("hub"); onHub {
							row, err := apstIdleHub(cmd.Context(), s, settle, measure)
							if err != nil {
								return err
							}
							rows = append(rows, row)
						} else {
							rows = append(rows, apstIdle(s, settle, measure))
						}
					}
				}
				if j, _ := f.GetBool("json"); j {
					return writeJSON(cmd.OutOrStdout(), struct {
						Schema string        `json:"schema"`
						Rows   []apstIdleRow `json:"results"`
					}{"idlewatt.apst-idle/1", rows})
				}
				tw := tabwriter.NewWriter(cmd.OutOrStdout(), 2, 8, 2, ' ', 0)
				fmt.Fprintln(tw, "profile\ttolerance µs\taspm\tAPST path\tidle mW\ttruth mW\terror µW\tu95 µW")
				for _, r := range rows {
					fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%.4f\t%.4f\t%+.1f\t%.1f\n", r.Profile, r.Tolerance, r.ASPM, r.Plan,
						r.MeanW*1e3, r.TruthW*1e3, r.ErrorW*1e6, r.U95W*1e6)
				}
				return tw.Flush()
			},
		}
		apstSetupFlags(id)
		id.Flags().String("latency-us", "0,5500,100000", "latency tolerances (µs, auto or any; comma-separated)")
		id.Flags().String("aspm", "performance,powersave,powersupersave", "pcie_aspm policies (comma-separated)")
		id.Flags().Duration("settle", time.Second, "idle before measuring")
		id.Flags().Duration("measure", 2*time.Second, "measurement window")
		id.Flags().Bool("json", false, "write the results as JSON")
		c.AddCommand(id)
		return c
	})
}
