package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/idlewatt/idlewatt/analysis"
	"github.com/idlewatt/idlewatt/app/rig"
	"github.com/idlewatt/idlewatt/capture/record"
	"github.com/idlewatt/idlewatt/internal/textsafe"
	"github.com/idlewatt/idlewatt/meter/registry"
	"github.com/idlewatt/idlewatt/report/pqexport"
)

func init() {
	register(func() *cobra.Command {
		c := &cobra.Command{
			Use:   "idle --config FILE [--policies P,...]",
			Short: "Idle power per ALPM policy: what each policy buys, with its uncertainty",
			Long: `For each policy in turn: write it to the drives' SATA hosts (every host when
no drive names one), let the drives settle, then record their idle power
for --measure. Prints each drive's idle power per policy — the mean over
quiet time with background bursts (garbage collection) left out and
reported on their own — with its 95 % interval, and the saving against the
first policy; analysis computes every number (docs/analysis.md). The policies in force before the run are restored at the end, also
after Ctrl-C. With --meter battery the "drive" is the whole laptop (use
long --measure windows: fuel gauges update every few seconds to a minute).

NVMe mode: --nvme-latency-us 0,5500,100000 and/or --aspm default,powersupersave
measure every combination instead of ALPM policies: each NVMe controller's
latency tolerance (0 turns APST off) and the pcie_aspm policy are written,
the drives settle, the window is measured; the saving is against the first
combination, and every setting is restored at the end and on Ctrl-C.`,
			Args: cobra.NoArgs,
			RunE: runIdle,
		}
		f := c.Flags()
		f.String("policies", "max_performance,medium_power,med_power_with_dipm,min_power", "policies to compare, in order")
		durationFlag(f, "settle", 3*time.Second, "time after each policy change before measuring")
		durationFlag(f, "measure", 10*time.Second, "measurement window per policy")
		f.String("meter", "", "meter kind (overrides meter.kind)")
		f.String("port", "", "meter port (overrides meter.port)")
		f.String("sysfs-root", "", "sysfs tree whose SATA hosts get the policies (overrides sysfs_root; default /sys)")
		addMeasureFlags(c)
		addMeterFlags(f)
		addIdleNVMeFlags(f) // NVMe mode: idle_nvme.go
		return c
	})
}

// runIdle is flags → rig.RunIdle → print.
func runIdle(cmd *cobra.Command, _ []string) error {
	rc, err := idleConfig(cmd)
	if err != nil {
		return err
	}
	plan, err := idlePlan(cmd, rc)
	if err != nil {
		return err
	}
	out := optString(cmd, "out", "out")
	if out == "" {
		out = defaultOut("idle")
	}
	what := fmt.Sprintf("%d policies", len(plan.Policies))
	if plan.NVMe != nil {
		what = fmt.Sprintf("%d NVMe settings", len(plan.NVMe))
	}
	fmt.Fprintf(cmd.ErrOrStderr(), "idlewatt idle: %s × (%v settle + %v measure) on %s; output in %s\n",
		what, plan.Settle, plan.Measure, textsafe.Terminal(meterLabel(rc)), textsafe.Terminal(out))

	setRunOutput(cmd, &rc)
	if !optBool(cmd, "quiet", "") {
		plan.Progress = textsafe.NewWriter(cmd.ErrOrStderr())
	}
	view, err := openView(cmd, filepath.Join(out, rig.CaptureFile))
	if err != nil {
		return err
	}
	defer view.close()
	if o := view.observer(); o != nil {
		rc.Observer = record.Tee(rc.Observer, o)
	}
	// What the run logs (policies set and restored) names drives and
	// files from the config: shown, never acted on.
	res, err := rig.RunIdle(cmd.Context(), rc, out, plan, textsafe.NewWriter(cmd.ErrOrStderr()))
	if res == nil {
		return meterOpenErr(err)
	}
	if cmd.Context().Err() != nil {
		return failErr("idle: %w; the policy was restored and what was recorded is in %s (idlewatt report %s analyses it)",
			context.Cause(cmd.Context()), out, res.Capture)
	}
	if res.File == "" {
		return failErr("idle: %w", err) // not analysed, or idle.json not written
	}
	if optBool(cmd, "json", "") {
		b, jerr := json.MarshalIndent(res, "", "  ")
		if jerr != nil {
			return failErr("idle: %w", jerr)
		}
		fmt.Fprintln(cmd.OutOrStdout(), string(b))
	} else {
		printIdle(cmd.OutOrStdout(), res, out)
	}
	if err != nil {
		return failErr("idle: %w", err)
	}
	if optBool(cmd, "parquet", "parquet") && res.Report != nil {
		host, _ := os.Hostname()
		dir := filepath.Join(out, "parquet")
		if err := pqexport.Write(res.Capture, res.Report, dir, pqexport.Options{Overwrite: rc.Out.Overwrite, Host: host}); err != nil {
			return failErr("idle: Parquet export into %s: %v", dir, err)
		}
	}
	return nil
}

// idleConfig is the rig's config for idle: the config file with --meter,
// --port, --sysfs-root and the meter flags, no workload, and one drive
// named after a one-port meter when the config names none.
func idleConfig(cmd *cobra.Command) (rig.Config, error) {
	var rc rig.Config
	if err := decodeKey(cmd, "", &rc); err != nil {
		return rc, err
	}
	if k := optString(cmd, "meter", ""); k != "" {
		rc.Meter.Kind = k
	}
	if p := optString(cmd, "port", ""); p != "" {
		rc.Meter.Port = p
	}
	if s := optString(cmd, "sysfs-root", ""); s != "" {
		rc.SysfsRoot = s
	}
	user, err := configProfiles(cmd)
	if err != nil {
		return rc, inputErr(err)
	}
	rc.Profiles = user
	mo, err := readMeterOptions(cmd, rc.Meter.Rate)
	if err != nil {
		return rc, err
	}
	if err := foreignMeterFlags(cmd, rc.Meter.Kind); err != nil {
		return rc, err
	}
	rc.Meter.Settings = mo
	if d, ok := registry.Lookup(rc.Meter.Kind); ok && len(rc.Drives) == 0 && d.OnePort {
		rc.Drives = []rig.DriveConfig{{Name: rc.Meter.Kind, Port: 1}}
	}
	rc.Workload.Trace = "none"
	rc.Policy = ""
	rc.Defaults()
	if err := rc.Validate(); err != nil {
		return rc, usageErr("config: %v", err)
	}
	return rc, nil
}

// idlePlan reads what to compare (--policies, or the NVMe mode's
// --nvme-latency-us/--aspm) and the windows.
func idlePlan(cmd *cobra.Command, rc rig.Config) (rig.IdlePlan, error) {
	var plan rig.IdlePlan
	var err error
	plan.NoHTML = optBool(cmd, "no-html", "")
	if plan.NVMe, err = nvmeSettings(cmd, rc); err != nil {
		return plan, err
	}
	if plan.NVMe == nil {
		if plan.Policies, err = rig.ParsePolicies(strings.Split(optString(cmd, "policies", "idle.policies"), ",")); err != nil {
			return plan, usageErr("%s: %v", where(cmd, "policies", "idle.policies"), err)
		}
	}
	if plan.Settle, err = optDuration(cmd, "settle", "idle.settle"); err != nil {
		return plan, err
	}
	if plan.Measure, err = optDuration(cmd, "measure", "idle.measure"); err != nil {
		return plan, err
	}
	if plan.Measure <= 0 || plan.Settle < 0 {
		return plan, usageErr("idle: --measure must be positive and --settle not negative")
	}
	return plan, nil
}

// printIdle prints idle.json's results as a table, with its notes, in
// the drive table's style (printDriveTable): within 120 columns, units in
// the header, a name longer than its column on a line of its own.
func printIdle(w io.Writer, res *rig.IdleResult, out string) {
	const nameW = 28
	pw := 24 // NVMe settings ("nvme_latency_us=…,aspm=…") are longer than policy names
	for _, ip := range res.Results {
		pw = max(pw, len(textsafe.Terminal(ip.Policy)))
	}
	fmt.Fprintf(w, "\n%-*s %-*s %20s %12s %15s\n", nameW, "drive", pw, "policy", "idle power (mW)", "saving (mW)", "bursts (n, %)")
	last := ""
	for _, ip := range res.Results {
		name := textsafe.Terminal(ip.Name)
		switch {
		case name == last:
			name = "" // the drive's next policy
		case len([]rune(name)) > nameW:
			fmt.Fprintln(w, name)
			last, name = name, ""
		default:
			last = name
		}
		if ip.Samples == 0 {
			fmt.Fprintf(w, "%-*s %-*s %20s  %s\n", nameW, name, pw, textsafe.Terminal(ip.Policy), "no samples", textsafe.Terminal(ip.Note))
			continue
		}
		var u *float64
		if ip.U95W != nil {
			mw := *ip.U95W * 1e3
			u = &mw
		}
		fmt.Fprintf(w, "%-*s %-*s %20s %12s %7d, %5.1f", nameW, name, pw, textsafe.Terminal(ip.Policy), analysis.FormatPM(ip.MeanW*1e3, u, 2),
			analysis.FormatV(ip.SavingW*1e3, 2), ip.Bursts, 100*ip.BurstShare)
		if ip.Note != "" {
			fmt.Fprintf(w, "  (%s)", textsafe.Terminal(ip.Note))
		}
		fmt.Fprintln(w)
	}
	for _, n := range res.Notes {
		fmt.Fprintln(w, "note:", textsafe.Terminal(n))
	}
	fmt.Fprintf(w, "\nwritten to %s (idle.json, report.md, report.json, summary.csv, charts, report.html, capture)\n", textsafe.Terminal(out))
}
