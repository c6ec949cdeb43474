package main

import (
	"encoding/json"
	"fmt"
	"io"
	"path/filepath"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/idlewatt/idlewatt/analysis"
	"github.com/idlewatt/idlewatt/hostclock"
	"github.com/idlewatt/idlewatt/internal/outfile"
	"github.com/idlewatt/idlewatt/internal/rig"
	"github.com/idlewatt/idlewatt/meter/registry"
	"github.com/idlewatt/idlewatt/states/alpm"
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

type idleResult struct {
	Schema   string          `json:"schema"`
	Capture  string          `json:"capture"`
	SettleS  float64         `json:"settle_s"`
	MeasureS float64         `json:"measure_s"`
	Results  []rig.IdlePower `json:"results"`
	Notes    []string        `json:"notes,omitempty"`
}

func runIdle(cmd *cobra.Command, _ []string) error {
	var rc rig.Config
	if err := decodeKey(cmd, "", &rc); err != nil {
		return err
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
		return inputErr(err)
	}
	rc.Profiles = user
	mo, err := readMeterOptions(cmd, rc.Meter.Rate)
	if err != nil {
		return err
	}
	if err := foreignMeterFlags(cmd, rc.Meter.Kind); err != nil {
		return err
	}
	rc.Meter.Settings = mo
	if d, ok := registry.Lookup(rc.Meter.Kind); ok && len(rc.Drives) == 0 && d.OnePort {
		rc.Drives = []rig.DriveConfig{{Name: rc.Meter.Kind, Port: 1}}
	}
	rc.Workload.Trace = "none"
	rc.Policy = ""
	rc.Defaults()
	if err := rc.Validate(); err != nil {
		return usageErr("config: %v", err)
	}
	combos, err := nvmeCombos(cmd, rc.Meter.Kind)
	if err != nil {
		return err
	}
	var policies []string
	if combos == nil {
		if policies, err = rig.ParsePolicies(strings.Split(optString(cmd, "policies", "idle.policies"), ",")); err != nil {
			return usageErr("%s: %v", where(cmd, "policies", "idle.policies"), err)
		}
	}
	settle, err := optDuration(cmd, "settle", "idle.settle")
	if err != nil {
		return err
	}
	measure, err := optDuration(cmd, "measure", "idle.measure")
	if err != nil {
		return err
	}
	if measure <= 0 || settle < 0 {
		return usageErr("idle: --measure must be positive and --settle not negative")
	}
	out := optString(cmd, "out", "out")
	if out == "" {
		out = defaultOut("idle")
	}
	what := fmt.Sprintf("%d policies", len(policies))
	if combos != nil {
		what = fmt.Sprintf("%d NVMe settings", len(combos))
	}
	fmt.Fprintf(cmd.ErrOrStderr(), "idlewatt idle: %s × (%v settle + %v measure) on %s; output in %s\n",
		what, settle, measure, meterLabel(rc), out)

	setRunOutput(cmd, &rc)
	r, err := rig.Open(cmd.Context(), rc, out, cmd.ErrOrStderr())
	if err != nil {
		return meterOpenErr(err)
	}
	start := hostclock.Now()
	stop := make(chan struct{})
	if !optBool(cmd, "quiet", "") {
		goSafe(cmd.ErrOrStderr(), func() { idleProgress(cmd.ErrOrStderr(), r, start, stop) })
	}
	var windows []rig.PolicyWindow
	var runErr error
	var nvmeNotes []string
	if combos != nil {
		root := rc.SysfsRoot
		if root == "" {
			root = alpm.DefaultRoot
		}
		windows, nvmeNotes, runErr = idleNVMe(cmd.Context(), r, root, combos, settle, measure)
	} else {
		windows, runErr = r.IdlePolicies(cmd.Context(), policies, settle, measure)
	}
	close(stop)
	closeErr := r.Close()
	res := idleResult{Schema: "idlewatt.idle/v1", Capture: r.CapturePath(), SettleS: settle.Seconds(), MeasureS: measure.Seconds(), Notes: append(r.Notes(), nvmeNotes...)}
	if len(windows) > 0 {
		rep, err := analysis.Analyze(r.CapturePath(), analysis.DefaultOptions())
		if err != nil {
			return failErr("idle: analysing %s: %v", r.CapturePath(), err)
		}
		res.Results = rig.MeasureIdlePower(rep, windows)
	}
	b, err := json.MarshalIndent(res, "", "  ")
	if err != nil {
		return failErr("idle: %w", err)
	}
	if err := outfile.WriteFile(filepath.Join(out, "idle.json"), append(b, '\n'), rc.Out); err != nil {
		return failErr("idle: %w", err)
	}
	if optBool(cmd, "json", "") {
		fmt.Fprintln(cmd.OutOrStdout(), string(b))
	} else {
		printIdle(cmd.OutOrStdout(), res, out)
	}
	if runErr != nil || closeErr != nil {
		return failErr("idle: %w", firstErr(runErr, closeErr))
	}
	return nil
}

// idleProgress prints the elapsed time, phase and power of every port
// once a second until stop is closed.
func idleProgress(w io.Writer, r *rig.Rig, start hostclock.Time, stop <-chan struct{}) {
	t := time.NewTicker(time.Second)
	defer t.Stop()
	for {
		select {
		case <-stop:
			return
		case <-t.C:
			fmt.Fprintf(w, "idle %4.0fs  %-24s%s\n", hostclock.Since(start).Seconds(), r.CurrentPhase(), r.Progress().PowerString())
		}
	}
}

// printIdle prints idle.json's results as a table, with its notes.
func printIdle(w io.Writer, res idleResult, out string) {
	pw := 24 // NVMe settings ("nvme_latency_us=…,aspm=…") are longer than policy names
	for _, ip := range res.Results {
		pw = max(pw, len(ip.Policy))
	}
	fmt.Fprintf(w, "\n%-30s %-*s %24s %14s %16s\n", "drive", pw, "policy", "idle power (95 %)", "saving", "bursts")
	for _, ip := range res.Results {
		if ip.Samples == 0 {
			fmt.Fprintf(w, "%-30s %-*s %24s  %s\n", trunc(ip.Name, 30), pw, ip.Policy, "no samples", ip.Note)
			continue
		}
		var u *float64
		if ip.U95W != nil {
			mw := *ip.U95W * 1e3
			u = &mw
		}
		fmt.Fprintf(w, "%-30s %-*s %21s mW %11s mW %5d, %5.1f %%", trunc(ip.Name, 30), pw, ip.Policy, analysis.FormatPM(ip.MeanW*1e3, u, 2),
			analysis.FormatV(ip.SavingW*1e3, 2), ip.Bursts, 100*ip.BurstShare)
		if ip.Note != "" {
			fmt.Fprintf(w, "  (%s)", ip.Note)
		}
		fmt.Fprintln(w)
	}
	for _, n := range res.Notes {
		fmt.Fprintln(w, "note:", n)
	}
	fmt.Fprintf(w, "\nwritten to %s (idle.json, capture)\n", out)
}

func firstErr(errs ...error) error {
	for _, e := range errs {
		if e != nil {
			return e
		}
	}
	return nil
}
