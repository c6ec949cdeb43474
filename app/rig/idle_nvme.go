package rig

import (
	"context"
	"fmt"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/idlewatt/idlewatt/hostclock"
	"github.com/idlewatt/idlewatt/states/alpm"
	"github.com/idlewatt/idlewatt/states/nvme"
	"github.com/idlewatt/idlewatt/states/nvme/nvmehost"
)

// NVMe mode of idle (issue 18 part 3): instead of ALPM policies, each
// combination of NVMe latency tolerance × PCIe ASPM policy is set in turn
// (through an nvmehost.Guard, restored at the end and on Ctrl-C), settled and
// measured like a policy; the windows go through MeasureIdlePower, so the
// figures, their standard errors and the saving against the first
// combination are computed exactly as for ALPM policies.

// NVMeSetting is one setting of the NVMe mode; "" leaves that knob alone.
type NVMeSetting struct {
	Latency string // power/pm_qos_latency_tolerance_us of every NVMe controller (nvme.ParseTolerance)
	ASPM    string // /sys/module/pcie_aspm/parameters/policy (nvme.ParseASPMPolicyName)
}

// Label names the setting as its phases and idle.json do:
// "nvme_latency_us=5500,aspm=powersupersave".
func (c NVMeSetting) Label() string {
	var parts []string
	if c.Latency != "" {
		parts = append(parts, "nvme_latency_us="+c.Latency)
	}
	if c.ASPM != "" {
		parts = append(parts, "aspm="+c.ASPM)
	}
	return strings.Join(parts, ",")
}

// NVMeSettings is every combination of the latency tolerances and ASPM
// policies, latencies outermost; an empty list leaves that knob alone. The
// values are checked by the caller (nvme.ParseTolerance,
// nvme.ParseASPMPolicyName), where it can name the flag or key.
func NVMeSettings(latencies, aspms []string) []NVMeSetting {
	if latencies == nil && aspms == nil {
		return nil
	}
	if latencies == nil {
		latencies = []string{""}
	}
	if aspms == nil {
		aspms = []string{""}
	}
	var out []NVMeSetting
	for _, l := range latencies {
		for _, a := range aspms {
			out = append(out, NVMeSetting{Latency: l, ASPM: a})
		}
	}
	return out
}

// IdleNVMe sets, settles and measures each setting under the sysfs tree
// root (a tree other than alpm.DefaultRoot is a simulated host,
// docs/states.md). It returns the windows measured so far and the first
// error; every change is restored before it returns, and the restore
// results are returned as notes.
func (r *Rig) IdleNVMe(ctx context.Context, root string, settings []NVMeSetting, settle, measure time.Duration) ([]PolicyWindow, []string, error) {
	if e, ok := r.setup.(*emuSetup); ok && len(e.nvmes) > 0 {
		return r.idleNVMeEmulated(ctx, e, settings, settle, measure)
	}
	fsys := alpm.DirFS(root)
	if filepath.Clean(root) != alpm.DefaultRoot {
		fsys = nvmehost.SimFS(fsys)
	}
	var ctrls []string
	for _, c := range nvmehost.Discover(fsys, root, nvmehost.Options{}).Ctrls {
		if c.Tolerance != nil {
			ctrls = append(ctrls, c.Name)
		}
	}
	needCtrl := false
	for _, c := range settings {
		needCtrl = needCtrl || c.Latency != ""
	}
	if needCtrl && len(ctrls) == 0 {
		return nil, nil, fmt.Errorf("no NVMe controller under %s has power/pm_qos_latency_tolerance_us (the kernel shows it only when it enabled APST)", root)
	}
	g := nvmehost.NewControlFS(root, fsys).Guard()
	release := g.RestoreOnExit(ctx)
	out, err := r.idleNVMeSettings(ctx, g, ctrls, settings, settle, measure)
	r.Phase("end") // the last window closes before the restore
	var notes []string
	for _, ch := range release() {
		if ch.Err != nil {
			notes = append(notes, "NVMe restore FAILED: "+ch.Error)
		} else {
			notes = append(notes, fmt.Sprintf("restored %s to %s", ch.File, ch.ReadBack))
		}
	}
	return out, notes, err
}

// idleNVMeEmulated is IdleNVMe on the emulated rig with simulated NVMe
// drives (drives[].nvme): no sysfs stands between the rig and them, so
// each setting reaches every simulated NVMe drive as the kernel would
// carry it out — the latency tolerance re-plans APST (nvme.PlanAPST, a Set
// Features 0Ch), the ASPM policy sets the link states the simulated
// firmware allows (powersupersave and default: L1 and L1.2; powersave: L1;
// performance: none). The drives are set back to the rig's start (100000
// µs, powersupersave) at the end.
func (r *Rig) idleNVMeEmulated(ctx context.Context, e *emuSetup, settings []NVMeSetting, settle, measure time.Duration) ([]PolicyWindow, []string, error) {
	var out []PolicyWindow
	err := func() error {
		for _, c := range settings {
			// The settle phase opens before the change: the previous
			// window holds only the previous setting.
			r.Phase("settle:" + c.Label())
			if err := e.setNVMe(c); err != nil {
				return fmt.Errorf("%s: %w", c.Label(), err)
			}
			if err := r.wait(ctx, settle); err != nil {
				return err
			}
			w := PolicyWindow{Policy: c.Label(), Start: hostclock.Now()}
			if err := r.Idle(ctx, "idle:"+c.Label(), measure); err != nil {
				return err
			}
			w.End = hostclock.Now()
			out = append(out, w)
		}
		return nil
	}()
	r.Phase("end") // the last window closes before the restore
	notes := []string{"emulated NVMe drives: each setting applied to the simulated drives directly (no sysfs), as the kernel carries it out"}
	if rerr := e.setNVMe(NVMeSetting{Latency: strconv.FormatUint(nvme.DefaultPSMaxLatencyUs, 10), ASPM: "powersupersave"}); rerr == nil {
		notes = append(notes, fmt.Sprintf("restored the simulated NVMe drives to nvme_latency_us=%d,aspm=powersupersave", nvme.DefaultPSMaxLatencyUs))
	}
	return out, notes, err
}

// setNVMe applies one setting to every simulated NVMe drive now.
func (e *emuSetup) setNVMe(c NVMeSetting) error {
	at := e.emu.EmuTime(hostclock.Now())
	for _, n := range e.nvmes {
		if c.Latency != "" {
			tol, err := nvme.ParseTolerance(c.Latency)
			if err != nil {
				return err
			}
			n.SetAPST(at, nvme.PlanAPST(n.Profile().Identify, tol.Us, 0, nvme.ModuleParams{}))
		}
		if c.ASPM != "" {
			pol, err := nvme.ParseASPMPolicyName(c.ASPM)
			if err != nil {
				return err
			}
			switch pol {
			case "powersupersave", "default": // the simulated firmware leaves every link state on
				n.SetASPM(at, true, true)
			case "powersave":
				n.SetASPM(at, true, false)
			default:
				n.SetASPM(at, false, false)
			}
		}
	}
	return nil
}

// idleNVMeSettings is IdleNVMe's loop: set, check, settle, measure.
func (r *Rig) idleNVMeSettings(ctx context.Context, g *nvmehost.Guard, ctrls []string, settings []NVMeSetting, settle, measure time.Duration) ([]PolicyWindow, error) {
	var out []PolicyWindow
	for _, c := range settings {
		// The settle phase opens before the change: the previous window
		// holds only the previous setting.
		r.Phase("settle:" + c.Label())
		var changes []nvmehost.Change
		if c.Latency != "" {
			for _, name := range ctrls {
				ch, err := g.SetLatencyTolerance(name, c.Latency)
				if err != nil {
					return out, err
				}
				changes = append(changes, ch)
			}
		}
		if c.ASPM != "" {
			ch, err := g.SetASPMPolicy(c.ASPM)
			if err != nil {
				return out, err
			}
			changes = append(changes, ch)
		}
		for _, ch := range changes {
			if ch.Err != nil {
				return out, fmt.Errorf("%s: %s", c.Label(), ch.Error)
			}
		}
		if err := r.wait(ctx, settle); err != nil {
			return out, err
		}
		w := PolicyWindow{Policy: c.Label(), Start: hostclock.Now()}
		if err := r.Idle(ctx, "idle:"+c.Label(), measure); err != nil {
			return out, err
		}
		w.End = hostclock.Now()
		out = append(out, w)
	}
	return out, nil
}
