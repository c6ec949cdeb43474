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
	pol := "unknown (no " + ASPMPolicyFile + ")"
	if p := sys.ASPMPolicy; p != nil {
		pol = fmt.Sprintf("%s (available: %s)", p.Current, strings.Join(p.Available, ", "))
	}
	fmt.Fprintf(&b, "  PCIe ASPM policy: %s\n", pol)
	m := sys.Module
	if m == (ModuleParams{}) {
		fmt.Fprintf(&b, "  nvme_core: not loaded (no %s)\n", DirNVMeCore)
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
		kern := func(ps int) string {
			if c.Kernel != nil && ps < len(c.Kernel.States) {
				return c.Kernel.States[ps].Reason
			}
			return ""
		}
		writeIdentify(b, id, c.IdentifySource, "kernel", kern)
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
		npss := -1
		if c.Identify != nil {
			npss = c.Identify.NPSS
		}
		writeAPST(b, a, c.APSTSource, npss)
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
			for _, f := range LinkFiles {
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

// writeIdentify prints the Identify line and the power-state table; the
// last column is kern(ps) under the heading col ("" for none).
func writeIdentify(b *strings.Builder, id *Identify, source, col string, kern func(int) string) {
	vid, apsta := id.VID.String(), yesNo(id.APSTA)
	if !id.Known("vid") {
		vid = "?"
	}
	if !id.Known("apsta") {
		apsta = "unknown (not in this source)"
	}
	npss := fmt.Sprint(id.NPSS)
	if !id.Known("npss") {
		npss += " (from the table)"
	}
	fmt.Fprintf(b, "  Identify (from %s): VID %s, NPSS %s, APSTA %s\n", source, vid, npss, apsta)
	fmt.Fprintf(b, "    ps  max power   kind      entry µs   exit µs  idle power  active power  %s\n", col)
	for _, p := range id.PowerStates {
		kind := "op"
		if p.NonOperational {
			kind = "non-op"
		}
		fmt.Fprintf(b, "    %2d  %9s   %-6s  %9d %9d  %10s  %12s  %s\n", p.PS, fmtW(p.MaxPower), kind,
			p.EntryLatencyUs, p.ExitLatencyUs, watts(p.IdlePower), watts(p.ActivePower), kern(p.PS))
	}
	if len(id.Unknown) > 0 {
		fmt.Fprintf(b, "    not in this source: %s\n", strings.Join(id.Unknown, ", "))
	}
	for _, n := range id.Notes {
		fmt.Fprintf(b, "    note: %s\n", n)
	}
}

// writeAPST prints feature 0Ch; npss < 0 prints all 32 entries.
func writeAPST(b *strings.Builder, a *APST, source string, npss int) {
	en := "unknown (raw table)"
	switch {
	case a.Selection != "":
		en = "unknown (the " + a.Selection + " value, not the current one)"
	case a.Enabled != nil:
		en = map[bool]string{true: "enabled", false: "disabled"}[*a.Enabled]
	}
	fmt.Fprintf(b, "  feature 0x0C (from %s): APSTE %s; %s\n", source, en, pathText(a.Entries, 0))
	n := len(a.Entries)
	if npss >= 0 {
		n = min(n, npss+1)
	}
	var parts []string
	for i := 0; i < n; i++ {
		if a.Entries[i].ITPTms == 0 {
			parts = append(parts, fmt.Sprintf("PS%d→none", i))
			continue
		}
		parts = append(parts, fmt.Sprintf("PS%d→PS%d/%dms", i, a.Entries[i].ITPS, a.Entries[i].ITPTms))
	}
	if npss < 0 {
		// Without the power-state table, the entries past the last one in
		// use say nothing: drop the trailing "none"s.
		k := len(parts)
		for k > 1 && a.Entries[k-1].ITPTms == 0 {
			k--
		}
		if k < len(parts) {
			parts = append(parts[:k], fmt.Sprintf("PS%d–PS%d→none", k, len(a.Entries)-1))
		}
	}
	fmt.Fprintf(b, "    entries: %s\n", strings.Join(parts, " "))
}

// WriteIdentifyText prints an Identify Controller decoded from source as
// `states` does, the last column being what the kernel would program with
// its default parameters (default_ps_max_latency_us 100000 µs, the
// primary/secondary APST parameters at their defaults, no quirk).
func WriteIdentifyText(w io.Writer, id *Identify, source string) error {
	var b strings.Builder
	assumed := ""
	planned := id
	if !id.Known("apsta") {
		c := *id
		c.APSTA, planned, assumed = true, &c, ", assuming APSTA set (the source does not say)"
	}
	plan := PlanAPST(planned, DefaultPSMaxLatencyUs, 0, ModuleParams{})
	kern := func(ps int) string {
		if ps < len(plan.States) {
			return plan.States[ps].Reason
		}
		return ""
	}
	writeIdentify(&b, id, source, "kernel (defaults)", kern)
	if plan.Enabled {
		fmt.Fprintf(&b, "  kernel APST with the defaults (%s scheme, tolerance %s%s): %s\n", plan.Scheme, usString(plan.MaxLatencyUs), assumed, pathText(plan.Entries, 0))
	} else {
		fmt.Fprintf(&b, "  kernel APST with the defaults: off (%s)\n", plan.Off)
	}
	_, err := io.WriteString(w, b.String())
	return err
}

// WriteAPSTText prints feature 0Ch decoded from source as `states` does.
func WriteAPSTText(w io.Writer, a *APST, source string) error {
	var b strings.Builder
	writeAPST(&b, a, source, -1)
	_, err := io.WriteString(w, b.String())
	return err
}
