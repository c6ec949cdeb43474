package nvme

import (
	"fmt"
	"io"
	"strings"

	"github.com/idlewatt/idlewatt/states/alpm"
	"github.com/idlewatt/idlewatt/units"
)

// WriteText prints sys for a person: the ASPM policy and nvme_core
// parameters, then per controller its power states, APST tables, current
// state, links and eligibility. docs/states.md explains every field.
func (sys *System) WriteText(w io.Writer) error {
	var b strings.Builder
	if len(sys.Ctrls) == 0 {
		b.WriteString("NVMe: no controllers (no class/nvme under the sysfs root)\n")
	} else {
		fmt.Fprintf(&b, "NVMe: %d controller(s)\n", len(sys.Ctrls))
	}
	pol := "unknown (no " + aspmPolicy + ")"
	if p := sys.ASPMPolicy; p != nil {
		pol = fmt.Sprintf("%s (available: %s)", p.Current, strings.Join(p.Available, ", "))
	}
	fmt.Fprintf(&b, "  PCIe ASPM policy: %s\n", pol)
	m := sys.Module
	if m == (ModuleParams{}) {
		fmt.Fprintf(&b, "  nvme_core: not loaded (no %s)\n", nvmeCoreDir)
	} else {
		fmt.Fprintf(&b, "  nvme_core: default_ps_max_latency_us %s, force_apst %s, apst primary %s ms / %s µs, secondary %s ms / %s µs\n",
			optU(m.DefaultPSMaxLatencyUs), optB(m.ForceAPST), optU(m.APSTPrimaryTimeoutMs), optU(m.APSTPrimaryLatencyTolUs),
			optU(m.APSTSecondaryTimeoutMs), optU(m.APSTSecondaryLatencyTolUs))
	}
	for i := range sys.Ctrls {
		writeController(&b, &sys.Ctrls[i])
	}
	if len(sys.Problems) > 0 {
		b.WriteString("\nNVMe problems:\n")
		for _, p := range sys.Problems {
			fmt.Fprintf(&b, "  %s\n", p)
		}
	}
	_, err := io.WriteString(w, b.String())
	return err
}

func optU(p *uint64) string {
	if p == nil {
		return "?"
	}
	return fmt.Sprint(*p)
}

func optB(p *bool) string {
	if p == nil {
		return "?"
	}
	if *p {
		return "Y"
	}
	return "N"
}

func watts(w *units.Watts) string {
	if w == nil {
		return "-"
	}
	return fmtW(*w)
}

func fmtW(w units.Watts) string {
	if w < 1 {
		return fmt.Sprintf("%.1f mW", w.Milliwatts())
	}
	return fmt.Sprintf("%.2f W", float64(w))
}

func writeController(b *strings.Builder, c *Controller) {
	fmt.Fprintf(b, "\n%s (%s)\n", c.Name, orDash(c.Address))
	fmt.Fprintf(b, "  model %q serial %q firmware %q, transport %s, state %s\n", c.Model, c.Serial, c.Firmware, orDash(c.Transport), orDash(c.State))
	if p := c.PCI; p != nil {
		fmt.Fprintf(b, "  PCI %s: %s:%s\n", p.Address, strings.TrimPrefix(p.Vendor.String(), "0x"), strings.TrimPrefix(p.Device.String(), "0x"))
	}
	tol := "hidden by the kernel (APST not enabled for this controller)"
	if c.Tolerance != nil {
		tol = c.Tolerance.Raw
		if c.Tolerance.Us != Unlimited && c.Tolerance.Raw != "0" {
			tol += " µs"
		}
	}
	fmt.Fprintf(b, "  latency tolerance: %s\n", tol)
	for _, q := range c.Quirks {
		fmt.Fprintf(b, "  quirk %s: %s\n", q.Quirk, q.Source)
	}
	if id := c.Identify; id != nil {
		fmt.Fprintf(b, "  Identify (from %s): VID %s, NPSS %d, APSTA %s\n", c.IdentifySource, id.VID, id.NPSS, yesNo(id.APSTA))
		b.WriteString("    ps  max power   kind      entry µs   exit µs  idle power  active power  kernel\n")
		for _, p := range id.PowerStates {
			kind := "op"
			if p.NonOperational {
				kind = "non-op"
			}
			kern := ""
			if c.Kernel != nil && p.PS < len(c.Kernel.States) {
				kern = c.Kernel.States[p.PS].Reason
			}
			fmt.Fprintf(b, "    %2d  %9s   %-6s  %9d %9d  %10s  %12s  %s\n", p.PS, fmtW(p.MaxPower), kind,
				p.EntryLatencyUs, p.ExitLatencyUs, watts(p.IdlePower), watts(p.ActivePower), kern)
		}
	} else {
		fmt.Fprintf(b, "  Identify: not read (%s)\n", noIdentifyHint)
	}
	if k := c.Kernel; k != nil {
		if k.Enabled {
			fmt.Fprintf(b, "  kernel APST (%s scheme, tolerance %s): %s\n", k.Scheme, usString(k.MaxLatencyUs), pathText(k.Entries, 0))
		} else {
			fmt.Fprintf(b, "  kernel APST: off (%s)\n", k.Off)
		}
	}
	if a := c.APST; a != nil {
		en := "unknown (raw table)"
		if a.Enabled != nil {
			en = map[bool]string{true: "enabled", false: "disabled"}[*a.Enabled]
		}
		fmt.Fprintf(b, "  feature 0x0C (from %s): APSTE %s; %s\n", c.APSTSource, en, pathText(a.Entries, 0))
		n := len(a.Entries)
		if c.Identify != nil {
			n = min(n, c.Identify.NPSS+1)
		}
		var parts []string
		for i := 0; i < n; i++ {
			if a.Entries[i].ITPTms == 0 {
				parts = append(parts, fmt.Sprintf("PS%d→none", i))
				continue
			}
			parts = append(parts, fmt.Sprintf("PS%d→PS%d/%dms", i, a.Entries[i].ITPS, a.Entries[i].ITPTms))
		}
		fmt.Fprintf(b, "    entries: %s\n", strings.Join(parts, " "))
	} else {
		fmt.Fprintf(b, "  feature 0x0C: not read\n")
	}
	if pm := c.PowerMgmt; pm != nil {
		fmt.Fprintf(b, "  feature 0x02 (from %s): reported power state PS%d, workload hint %d\n", c.PowerSource, pm.PS, pm.WH)
	} else {
		b.WriteString("  feature 0x02: not read\n")
	}
	if c.PCI != nil {
		for _, l := range c.PCI.Links {
			if !l.Present {
				fmt.Fprintf(b, "  link %s↔%s: no link/ directory\n", l.Downstream, l.Upstream)
				continue
			}
			var parts []string
			for _, f := range linkFiles {
				v := "-"
				if s := l.States[f]; s != nil {
					v = map[bool]string{true: "1", false: "0"}[*s]
				}
				parts = append(parts, f+" "+v)
			}
			fmt.Fprintf(b, "  link %s↔%s: %s\n", l.Downstream, l.Upstream, strings.Join(parts, ", "))
		}
	}
	writeEligibility(b, c.Eligibility)
}

func writeEligibility(b *strings.Builder, e alpm.Eligibility) {
	fmt.Fprintf(b, "  APST/ASPM: %s", e.Verdict)
	if len(e.Failed) > 0 {
		fmt.Fprintf(b, "; failed: %s", strings.Join(e.Failed, ", "))
	}
	if len(e.Unknown) > 0 {
		fmt.Fprintf(b, "; unknown: %s", strings.Join(e.Unknown, ", "))
	}
	b.WriteString("\n")
	for _, c := range e.Checks {
		mark := map[alpm.Status]string{alpm.StatusOK: "ok  ", alpm.StatusFail: "FAIL", alpm.StatusUnknown: "?   "}[c.Status]
		fmt.Fprintf(b, "    %s %-17s %s\n", mark, c.Name, c.Detail)
	}
}

func yesNo(v bool) string {
	if v {
		return "yes"
	}
	return "no"
}

func orDash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}
