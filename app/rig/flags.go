package rig

// The settings of the commands that run the rig, each declared once with
// its flag, config key, default and help (internal/settings): cmd/idlewatt
// declares them, app/config adds their keys to the schema.

import (
	"strings"
	"time"

	"github.com/idlewatt/idlewatt/internal/outfile"
	"github.com/idlewatt/idlewatt/internal/settings"
	liveview "github.com/idlewatt/idlewatt/report/live"
	"github.com/idlewatt/idlewatt/report/livemetrics"
	"github.com/idlewatt/idlewatt/states/nvme"
)

// RunFlags are the settings of every command that runs the rig (measure,
// demo, devslp verify, idle): the output directory and what is written and
// shown, the live metrics and the live view.
var RunFlags = append(append([]settings.Flag{
	{Name: "out", Key: "out", Kind: settings.String, Help: "output directory, new or empty (default idlewatt-<command>-<time>)"},
	outfile.Flag("the files of a run already in --out", ""),
	{Name: "keep-scratch", Key: "keep_scratch", Kind: settings.Bool, Help: "keep the emulator's scratch drive images drive-pN.img in --out (config keep_scratch)"},
	{Name: "json", Kind: settings.Bool, Help: "print measure.json instead of the summary"},
	{Name: "quiet", Kind: settings.Bool, Help: "no progress lines"},
	{Name: "parquet", Key: "parquet", Kind: settings.Bool, Help: "also export the capture and report as Parquet into OUT/parquet (config parquet)"},
	{Name: "no-html", Kind: settings.Bool, Help: "do not write report.html (the interactive viewer)"},
}, livemetrics.Flags...), liveview.Flags...)

// IdleFlags are `idlewatt idle`'s own (with RunFlags and the drivers').
var IdleFlags = []settings.Flag{
	{Name: "policies", Key: "idle.policies", Kind: settings.String, Default: "max_performance,medium_power,med_power_with_dipm,min_power", Help: "policies to compare, in order"},
	{Name: "settle", Key: "idle.settle", Kind: settings.Duration, Default: 3 * time.Second, Help: "time after each policy change before measuring"},
	{Name: "measure", Key: "idle.measure", Kind: settings.Duration, Default: 10 * time.Second, Help: "measurement window per policy"},
	{Name: "meter", Kind: settings.String, Help: "meter kind (overrides meter.kind)"},
	{Name: "port", Kind: settings.String, Help: "meter port (overrides meter.port)"},
	{Name: "sysfs-root", Kind: settings.String, Help: "sysfs tree whose SATA hosts get the policies (overrides sysfs_root; default /sys)"},
	// NVMe mode (issue 18 part 3): IdleNVMe sets, settles and measures each.
	{Name: "nvme-latency-us", Kind: settings.String, Help: "NVMe mode: latency tolerances to compare (µs, auto or any; comma-separated), written to every NVMe controller's power/pm_qos_latency_tolerance_us"},
	{Name: "aspm", Kind: settings.String, Help: "NVMe mode: pcie_aspm policies to compare (comma-separated); with --nvme-latency-us every combination"},
}

// ReadIdlePlan reads what idle compares (IdleFlags: --policies, or the NVMe
// mode's --nvme-latency-us/--aspm) and its windows, for the set-up c.
// Every value is checked here, before the rig opens.
func ReadIdlePlan(g settings.Getter, c Config) (IdlePlan, error) {
	var plan IdlePlan
	var err error
	plan.NoHTML = g.Bool("no-html")
	if plan.NVMe, err = readNVMeSettings(g, c); err != nil {
		return plan, err
	}
	if plan.NVMe == nil {
		if plan.Policies, err = ParsePolicies(strings.Split(g.String("policies"), ",")); err != nil {
			return plan, settings.Usagef("%s: %v", g.Where("policies"), err)
		}
	}
	if plan.Settle, err = g.Duration("settle"); err != nil {
		return plan, err
	}
	if plan.Measure, err = g.Duration("measure"); err != nil {
		return plan, err
	}
	if plan.Measure <= 0 || plan.Settle < 0 {
		return plan, settings.Usagef("idle: --measure must be positive and --settle not negative")
	}
	return plan, nil
}

// readNVMeSettings returns the NVMe settings to measure, or nil when
// neither flag is given (ALPM mode).
func readNVMeSettings(g settings.Getter, c Config) ([]NVMeSetting, error) {
	split := func(flag string) []string {
		v := g.String(flag)
		if strings.TrimSpace(v) == "" {
			return nil
		}
		return strings.Split(v, ",")
	}
	lats, aspms := split("nvme-latency-us"), split("aspm")
	if lats == nil && aspms == nil {
		return nil, nil
	}
	if g.Changed("policies") {
		return nil, settings.Usagef("idle: give --policies (SATA ALPM) or --nvme-latency-us/--aspm (NVMe), not both")
	}
	emuNVMe := false
	for _, d := range c.Drives {
		emuNVMe = emuNVMe || d.NVMe != ""
	}
	if (c.Meter.Kind == "" || c.Meter.Kind == "emulator") && !emuNVMe {
		return nil, settings.Usagef("idle --nvme-latency-us/--aspm: the emulator has no simulated NVMe drive (give one in the config, drives[].nvme), and its SATA drives ignore NVMe settings; or use a meter on the NVMe drive, or the whole laptop (--meter battery)")
	}
	for i, l := range lats {
		lats[i] = strings.TrimSpace(l)
		if _, err := nvme.ParseTolerance(lats[i]); err != nil {
			return nil, settings.Usagef("--nvme-latency-us: %v", err)
		}
	}
	for i, a := range aspms {
		aspms[i] = strings.TrimSpace(a)
		if _, err := nvme.ParseASPMPolicyName(aspms[i]); err != nil {
			return nil, settings.Usagef("--aspm: %v", err)
		}
	}
	return NVMeSettings(lats, aspms), nil
}
