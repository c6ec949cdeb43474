package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/idlewatt/idlewatt/analysis"
	"github.com/idlewatt/idlewatt/analysis/states"
	"github.com/idlewatt/idlewatt/app/config"
	"github.com/idlewatt/idlewatt/app/rig"
	"github.com/idlewatt/idlewatt/capture/record"
	"github.com/idlewatt/idlewatt/internal/textsafe"
	"github.com/idlewatt/idlewatt/report/pqexport"
)

// Bounds of the battery: section (a laptop has well under 1 kWh and 1 kW).
const maxBatteryWh, maxPlatformW = 1e6, 1e6

func init() {
	register(newMeasureCmd)
	register(newDemoCmd)
}

func newMeasureCmd() *cobra.Command {
	c := &cobra.Command{
		Use:   "measure --config FILE [--out DIR]",
		Short: "Record drives while playing the workload, idle and DevSlp phases; write capture, report and charts",
		Long: `The main job. For the drives in the config file: set the link policy, start
recording, idle, play the workload (default: the PCMark-7-like trace), idle
again, run DevSlp cycles, restore the policy, stop; then analyse the capture
and write report.json, report.md, summary.csv, measure.json and charts into
--out. The config keys are in docs/config.md; meter.kind "emulator" runs on
the built-in emulated hub with simulated drives.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			rc, plan, err := measureConfig(cmd)
			if err != nil {
				return err
			}
			return runMeasure(cmd, rc, plan, false)
		},
	}
	addMeasureFlags(c)
	return c
}

func addMeasureFlags(c *cobra.Command) {
	f := c.Flags()
	f.String("out", "", "output directory, new or empty (default idlewatt-<command>-<time>)")
	addOverwriteFlag(f, "the files of a run already in --out")
	f.Bool("keep-scratch", false, "keep the emulator's scratch drive images drive-pN.img in --out (config keep_scratch)")
	f.Bool("json", false, "print measure.json instead of the summary")
	f.Bool("quiet", false, "no progress lines")
	f.Bool("parquet", false, "also export the capture and report as Parquet into OUT/parquet (config parquet)")
	addMetricsFlags(f)
	addViewFlags(f)
	f.Bool("no-html", false, "do not write report.html (the interactive viewer)")
}

// measureConfig decodes the config file (and IDLEWATT_* env) into a rig.Config.
func measureConfig(cmd *cobra.Command) (rig.Config, rig.Plan, error) {
	var rc rig.Config
	plan := rig.Plan{Workload: true, DevSlp: true}
	if err := decodeKey(cmd, "", &rc); err != nil {
		return rc, plan, err
	}
	if err := decodeKey(cmd, "battery", &plan.Battery); err != nil {
		return rc, plan, err
	}
	if b := plan.Battery; !(b.CapacityWh >= 0) || !(b.PlatformIdleW >= 0) || math.IsInf(b.CapacityWh+b.PlatformIdleW, 0) {
		return rc, plan, usageErr("config: battery.capacity_wh %g and battery.platform_idle_w %g must be numbers ≥ 0", b.CapacityWh, b.PlatformIdleW)
	}
	// 1e308 Wh passed the check above and made the battery life +Inf, which
	// measure.json cannot hold: found after the whole run (exit 1).
	if b := plan.Battery; b.CapacityWh > maxBatteryWh || b.PlatformIdleW > maxPlatformW {
		return rc, plan, usageErr("config: battery.capacity_wh %g (at most %g) or battery.platform_idle_w %g (at most %g) is implausible",
			b.CapacityWh, float64(maxBatteryWh), b.PlatformIdleW, float64(maxPlatformW))
	}
	user, err := configProfiles(cmd)
	if err != nil {
		return rc, plan, inputErr(err)
	}
	rc.Profiles = user
	if rc.Meter.Settings, err = readMeterOptions(cmd, rc.Meter.Rate); err != nil {
		return rc, plan, err
	}
	if len(rc.Drives) == 0 {
		return rc, plan, usageErr("%s: no drives configured; see docs/config.md (or run 'idlewatt demo')", cmd.CommandPath())
	}
	rc.Defaults()
	if err := rc.Validate(); err != nil {
		return rc, plan, usageErr("config: %v", err)
	}
	return rc, plan, nil
}

// decodeKey decodes config key (or everything, for "") into out,
// strictly: an unknown or mistyped key is an error naming it.
func decodeKey(cmd *cobra.Command, key string, out any) error {
	return config.Decode(cliOf(cmd).cfg, key, out)
}

func defaultOut(name string) string {
	return fmt.Sprintf("idlewatt-%s-%s", name, time.Now().Format("20060102-150405"))
}

// runMeasure runs rc and plan (measure, demo, devslp verify) and prints the
// result; verify judges it as devslp verify does (devslpExit).
func runMeasure(cmd *cobra.Command, rc rig.Config, plan rig.Plan, verify bool) error {
	out := optString(cmd, "out", "out")
	if out == "" {
		out = defaultOut(cmd.Name())
	}
	setRunOutput(cmd, &rc)
	plan.NoHTML = optBool(cmd, "no-html", "")
	if !optBool(cmd, "quiet", "") {
		plan.Progress = textsafe.NewWriter(cmd.ErrOrStderr()) // also the run's log: names from the config
		plan.Label = strings.TrimPrefix(cmd.CommandPath(), cmd.Root().Name()+" ")
	}
	obs, err := openMetrics(cmd, rc.Out, func(p string) bool {
		return samePath(filepath.Dir(p), out) && rig.RunWrites(filepath.Base(p))
	})
	if err != nil {
		return err
	}
	defer obs.Close()
	view, err := openView(cmd, filepath.Join(out, rig.CaptureFile))
	if err != nil {
		return err
	}
	defer view.close()
	rc.Observer = record.Tee(obs, view.observer())
	fmt.Fprintf(cmd.ErrOrStderr(), "%s: %d drive(s) on %s, output in %s\n", cmd.CommandPath(), len(rc.Drives), textsafe.Terminal(meterLabel(rc)), textsafe.Terminal(out))
	res, err := rig.Run(cmd.Context(), rc, out, plan)
	if res != nil {
		metricsVerdicts(obs, res)
	}
	if res != nil && res.Report != nil {
		if optBool(cmd, "json", "") {
			enc := json.NewEncoder(cmd.OutOrStdout())
			enc.SetIndent("", "  ")
			_ = enc.Encode(res)
		} else {
			printMeasureHeadline(cmd.OutOrStdout(), res, verify)
		}
	}
	if err != nil {
		if cmd.Context().Err() != nil {
			// Ctrl-C or SIGTERM: say so, not "context canceled".
			return failErr("%w; the policy was restored and what was recorded is in %s (idlewatt report %s analyses it)",
				context.Cause(cmd.Context()), out, filepath.Join(out, rig.CaptureFile))
		}
		if res == nil {
			return meterOpenErr(err)
		}
		return failErr("%w (what was recorded is in %s)", err, out)
	}
	if optBool(cmd, "parquet", "parquet") && res.Report != nil {
		host, _ := os.Hostname()
		dir := filepath.Join(out, "parquet")
		if err := pqexport.Write(res.Capture, res.Report, dir, pqexport.Options{Overwrite: rc.Out.Overwrite, Host: host}); err != nil {
			return failErr("measure: Parquet export into %s: %v", dir, err)
		}
	}
	return devslpExit(res, verify)
}

// devslpExit is the exit status of the DevSlp verdicts: 1 when any failed
// or is inconclusive; not_supported is no failure, but `devslp verify`
// with nothing verified fails too.
func devslpExit(res *rig.Result, verify bool) error {
	var bad []string
	passed := 0
	for _, p := range sortedPorts(res.DevSlp) {
		switch v := res.DevSlp[p]; v.Outcome {
		case states.Pass:
			passed++
		case states.NotSupported:
		default:
			bad = append(bad, fmt.Sprintf("port %s %s", p, v))
		}
	}
	if len(bad) > 0 {
		return failErr("DevSlp verification: %s", strings.Join(bad, "; "))
	}
	if verify && passed == 0 {
		return failErr("DevSlp verification: no drive supports DevSlp, nothing was verified")
	}
	return nil
}

func sortedPorts(m map[string]states.Verdict) []string {
	ports := make([]string, 0, len(m))
	for p := range m {
		ports = append(ports, p)
	}
	sort.Strings(ports)
	return ports
}

// setRunOutput sets the run directory's rules: --overwrite, the config file
// as an input, and whether scratch drive images are kept.
func setRunOutput(cmd *cobra.Command, rc *rig.Config) {
	rc.Out = outOptions(cmd, "", configPath(cmd))
	rc.KeepScratch = optBool(cmd, "keep-scratch", "keep_scratch")
}

func meterLabel(rc rig.Config) string {
	if rc.Meter.Kind == "emulator" {
		return "the emulated hub"
	}
	return rc.Meter.Kind + " " + rc.Meter.Port
}

// printHeadline prints the numbers a reviewer wants first. In `devslp
// verify` the drives never run a workload and rest in Slumber between
// cycles, so the first column is their pre-cycle (Slumber) power, not an
// active idle they never showed.
func printMeasureHeadline(w io.Writer, res *rig.Result, verify bool) {
	rep := res.Report
	first := "active idle"
	if verify {
		first = "pre-cycle"
	}
	var head func(d *analysis.DriveReport) string
	if verify {
		// The drives rest in Slumber between cycles: the first column is
		// that pre-cycle power, not an active idle verify never measures.
		head = func(d *analysis.DriveReport) string {
			if v, ok := res.DevSlp[strconv.Itoa(d.Port)]; ok && v.PreCycleW.Ok() {
				var u *float64
				if v.PreCycleU95W.Ok() {
					x := float64(v.PreCycleU95W)
					u = &x
				}
				return analysis.FormatPM(float64(v.PreCycleW), u, 3)
			}
			return analysis.Dash
		}
	}
	fmt.Fprintln(w)
	printDriveTable(w, rep, first, head, !verify)
	for _, d := range rep.Drives {
		for _, ph := range d.Phases {
			if strings.HasPrefix(ph.Name, "workload:") {
				fmt.Fprintf(w, "%s %s: average %s W over %.1f s\n", textsafe.Terminal(d.Name), textsafe.Terminal(ph.Name), analysis.FormatPM(ph.AverageW, ph.AverageU95W, 3), ph.DurationS)
			}
		}
	}
	for _, p := range sortedPorts(res.DevSlp) {
		v := res.DevSlp[p]
		fmt.Fprintf(w, "DevSlp port %s: %s\n", p, textsafe.Terminal(v.String()))
		if v.PreCycleW.Ok() {
			// The resting power before each assertion: Slumber under a DIPM
			// policy, not active idle.
			fmt.Fprintf(w, "DevSlp port %s: pre-cycle (Slumber) power %s mW\n", p, states.PM(v.PreCycleW, states.None, 1e3))
		}
		if verify {
			printCycles(w, p, v)
		}
	}
	printDeclared(w, rep)
	for _, b := range res.Battery {
		if verify {
			break // the battery estimate needs active idle, which verify does not measure
		}
		fmt.Fprintf(w, "battery: %s idles at %s W → %s min of battery life, %.1f min less than a drive that drew nothing", textsafe.Terminal(b.Name),
			analysis.FormatPM(b.IdleW, b.IdleU95W, 3), analysis.FormatPM(b.LifeMin, b.LifeU95Min, 0), b.CostMin)
		if b.DevSlpSavesMin > 0 {
			fmt.Fprintf(w, "; idling in DevSlp would give back %.1f min", b.DevSlpSavesMin)
		}
		fmt.Fprintln(w)
	}
	q := rep.Drives
	if len(q) > 0 {
		s := q[0].Samples
		fmt.Fprintf(w, "data: %d samples per drive, %d dropped, %d CRC errors; clock residual %.3f ms\n",
			s.Count, s.Dropped, s.CRCErrors, rep.Alignment.ResidualRMSMS)
	}
	// The report's notes (missing samples, meter restarts, negative
	// readings, …) are part of the result, as `report` prints them.
	for _, n := range rep.Notes {
		fmt.Fprintf(w, "note: %s\n", textsafe.Terminal(n))
	}
	abs, _ := filepath.Abs(res.Out)
	fmt.Fprintf(w, "\nwritten to %s (report.md, report.json, summary.csv, measure.json, charts, report.html, capture)\n", textsafe.Terminal(abs))
}

// printCycles is devslp verify's table of one port's cycles: each
// quantity with its 95 % half-width, as report.md's DevSlp table gives it.
func printCycles(w io.Writer, port string, v states.Verdict) {
	if len(v.Cycles) == 0 {
		return
	}
	fmt.Fprintf(w, "  %-5s %-13s %16s %16s %14s %14s %14s  %s\n", "cycle", "outcome", "pre-cycle mW", "floor mW", "entry ms", "rise ms", "exit ms", "reason")
	for _, c := range v.Cycles {
		name := strconv.Itoa(c.Cycle)
		if c.EntryOnly {
			name += "e" // an entry cycle: its floor is not pooled
		}
		reason := strings.Join(c.Reasons, "; ")
		fmt.Fprintf(w, "  %-5s %-13s %16s %16s %14s %14s %14s  %s\n", name, c.Outcome,
			states.PM(c.PreCycleW, c.PreCycleU95W, 1e3), states.PM(c.FloorW, c.FloorU95W, 1e3),
			states.PM(c.EntryMs, c.EntryU95Ms, 1), states.PM(c.RiseMs, c.RiseU95Ms, 1), states.PM(c.ExitMs, c.ExitU95Ms, 1),
			textsafe.Terminal(reason))
	}
}

// unit appends the unit to a formatted value, not to a dash.
func unit(v, u string) string {
	if v == analysis.Dash {
		return v
	}
	return v + " " + u
}

// printDriveTable is the drive table every command prints (docs/cli.md,
// "Terminal tables"): one table within 120 columns, units in the header,
// a name longer than its column on a line of its own, the residency (when
// residency is set) and dropped samples on lines of their own below each
// drive. head gives the first column (nil: active idle) under the title
// first.
func printDriveTable(w io.Writer, rep *analysis.Report, first string, head func(d *analysis.DriveReport) string, residency bool) {
	const nameW = 28
	fmt.Fprintf(w, "%-*s %18s %18s %23s %15s %12s\n", nameW, "drive", first+" (W)", "average (W)", "peak [95 %] (W)", "energy (J)", "devslp mW")
	for i := range rep.Drives {
		d := &rep.Drives[i]
		floor := analysis.Dash
		if d.DevSlp.FloorW.Ok() {
			floor = states.PM(d.DevSlp.FloorW, d.DevSlp.FloorU95W, 1e3)
		}
		name := textsafe.Terminal(d.Name)
		if len([]rune(name)) > nameW {
			fmt.Fprintln(w, name)
			name = ""
		}
		h := analysis.FormatPM(d.ActiveIdleW, d.ActiveIdleU95W, 3)
		if head != nil {
			h = head(d)
		}
		fmt.Fprintf(w, "%-*s %18s %18s %23s %15s %12s\n", nameW, name, h, analysis.FormatPM(d.AverageW, d.AverageU95W, 3),
			analysis.FormatCI(d.PeakW, d.PeakCI95W, 4), analysis.FormatPM(d.EnergyJ, d.EnergyU95J, 1), floor)
		if d.Samples.Dropped > 0 {
			fmt.Fprintf(w, "  dropped: %d samples\n", d.Samples.Dropped)
		}
		if !residency {
			continue
		}
		rs := d.Residency
		if math.IsNaN(rs.Idle) {
			fmt.Fprintf(w, "  residency: %s (levels not learned: the notes say why)\n", analysis.Dash)
			continue
		}
		fmt.Fprintf(w, "  residency: active %.1f %%, background %.1f %%, idle %.1f %%, partial %.1f %%, slumber %.1f %%, devslp %.1f %%\n",
			100*rs.Active, 100*rs.Background, 100*rs.Idle, 100*rs.Partial, 100*rs.Slumber, 100*rs.DevSlp)
	}
}
