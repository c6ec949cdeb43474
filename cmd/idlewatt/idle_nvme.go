package main

import (
	"context"
	"fmt"
	"path/filepath"
	"strings"
	"time"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/idlewatt/idlewatt/hostclock"
	"github.com/idlewatt/idlewatt/internal/rig"
	"github.com/idlewatt/idlewatt/states/alpm"
	"github.com/idlewatt/idlewatt/states/nvme"
)

// NVMe mode of idle (issue 18 part 3): instead of ALPM policies, each
// combination of NVMe latency tolerance × PCIe ASPM policy is set in turn
// (through an nvme.Guard, restored at the end and on Ctrl-C), settled and
// measured like a policy; the windows go through rig.MeasureIdlePower, so
// the figures, their standard errors and the saving against the first
// combination are computed exactly as for ALPM policies.

func addIdleNVMeFlags(f *pflag.FlagSet) {
	f.String("nvme-latency-us", "", "NVMe mode: latency tolerances to compare (µs, auto or any; comma-separated), written to every NVMe controller's power/pm_qos_latency_tolerance_us")
	f.String("aspm", "", "NVMe mode: pcie_aspm policies to compare (comma-separated); with --nvme-latency-us every combination")
}

// nvmeCombo is one setting of the NVMe mode; "" leaves that knob alone.
type nvmeCombo struct{ latency, aspm string }

func (c nvmeCombo) label() string {
	var parts []string
	if c.latency != "" {
		parts = append(parts, "nvme_latency_us="+c.latency)
	}
	if c.aspm != "" {
		parts = append(parts, "aspm="+c.aspm)
	}
	return strings.Join(parts, ",")
}

// nvmeCombos returns the combinations to measure, or nil when neither flag
// is given (ALPM mode). Every value is checked here, before the rig opens.
func nvmeCombos(cmd *cobra.Command, meterKind string) ([]nvmeCombo, error) {
	split := func(flag string) []string {
		v, _ := cmd.Flags().GetString(flag)
		if strings.TrimSpace(v) == "" {
			return nil
		}
		return strings.Split(v, ",")
	}
	lats, aspms := split("nvme-latency-us"), split("aspm")
	if lats == nil && aspms == nil {
		return nil, nil
	}
	if f := cmd.Flags().Lookup("policies"); f != nil && f.Changed {
		return nil, usageErr("idle: give --policies (SATA ALPM) or --nvme-latency-us/--aspm (NVMe), not both")
	}
	if meterKind == "" || meterKind == "emulator" {
		return nil, usageErr("idle --nvme-latency-us/--aspm: the emulator's simulated drives are SATA and ignore NVMe settings; use a meter on the NVMe drive, or the whole laptop (--meter battery)")
	}
	for i, l := range lats {
		lats[i] = strings.TrimSpace(l)
		if _, err := nvme.ParseTolerance(lats[i]); err != nil {
			return nil, usageErr("--nvme-latency-us: %v", err)
		}
	}
	for i, a := range aspms {
		aspms[i] = strings.TrimSpace(a)
		if _, err := nvme.ParseASPMPolicyName(aspms[i]); err != nil {
			return nil, usageErr("--aspm: %v", err)
		}
	}
	if lats == nil {
		lats = []string{""}
	}
	if aspms == nil {
		aspms = []string{""}
	}
	var out []nvmeCombo
	for _, l := range lats {
		for _, a := range aspms {
			out = append(out, nvmeCombo{latency: l, aspm: a})
		}
	}
	return out, nil
}

// idleNVMe sets, settles and measures each combination. It returns the
// windows measured so far and the first error; every change is restored
// before it returns (the restore results are returned as notes).
func idleNVMe(ctx context.Context, r *rig.Rig, root string, combos []nvmeCombo, settle, measure time.Duration) ([]rig.PolicyWindow, []string, error) {
	fsys := alpm.DirFS(root)
	if filepath.Clean(root) != alpm.DefaultRoot {
		fsys = nvme.SimFS(fsys) // a simulated host (docs/states.md)
	}
	var ctrls []string
	for _, c := range nvme.Discover(fsys, root, nvme.Options{}).Ctrls {
		if c.Tolerance != nil {
			ctrls = append(ctrls, c.Name)
		}
	}
	needCtrl := false
	for _, c := range combos {
		needCtrl = needCtrl || c.latency != ""
	}
	if needCtrl && len(ctrls) == 0 {
		return nil, nil, fmt.Errorf("no NVMe controller under %s has power/pm_qos_latency_tolerance_us (the kernel shows it only when it enabled APST)", root)
	}
	g := nvme.NewControlFS(root, fsys).Guard()
	release := g.RestoreOnExit(ctx)
	var notes []string
	finish := func() {
		for _, ch := range release() {
			if ch.Err != nil {
				notes = append(notes, "NVMe restore FAILED: "+ch.Error)
			} else {
				notes = append(notes, fmt.Sprintf("restored %s to %s", ch.File, ch.ReadBack))
			}
		}
	}
	var out []rig.PolicyWindow
	for _, c := range combos {
		var changes []nvme.Change
		if c.latency != "" {
			for _, name := range ctrls {
				ch, err := g.SetLatencyTolerance(name, c.latency)
				if err != nil {
					finish()
					return out, notes, err
				}
				changes = append(changes, ch)
			}
		}
		if c.aspm != "" {
			ch, err := g.SetASPMPolicy(c.aspm)
			if err != nil {
				finish()
				return out, notes, err
			}
			changes = append(changes, ch)
		}
		for _, ch := range changes {
			if ch.Err != nil {
				finish()
				return out, notes, fmt.Errorf("%s: %s", c.label(), ch.Error)
			}
		}
		if err := r.Idle(ctx, "settle:"+c.label(), settle); err != nil {
			finish()
			return out, notes, err
		}
		w := rig.PolicyWindow{Policy: c.label(), Start: hostclock.Now()}
		if err := r.Idle(ctx, "idle:"+c.label(), measure); err != nil {
			finish()
			return out, notes, err
		}
		w.End = hostclock.Now()
		out = append(out, w)
	}
	finish()
	return out, notes, nil
}
