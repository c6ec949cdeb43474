package nvme

import (
	"fmt"
	"strings"

	"github.com/idlewatt/idlewatt/states/alpm"
)

// Names of the APST/ASPM preconditions, in the order they are checked.
const (
	CheckAPSTA      = "APSTA"
	CheckQuirk      = "quirk"
	CheckAPSTOn     = "APST enabled"
	CheckTolerance  = "latency tolerance"
	CheckTable      = "APST table"
	CheckL1         = "ASPM L1"
	CheckL12        = "ASPM L1.2"
	CheckASPMPolicy = "ASPM policy"
)

// Eligible checks whether controller c can reach its deepest power state
// with the PCIe link in L1.2 when idle, naming every failed precondition
// (the shape of alpm.DevSlpEligible). What sysfs does not show is
// "unknown", never guessed.
func Eligible(sys *System, c *Controller) alpm.Eligibility {
	x := &eligibility{sys: sys, c: c, id: c.Identify, plan: c.Kernel, q: quirkBits(c.Quirks)}
	_, _, _, _, _, x.force = sys.Module.effective()
	x.checkAPSTA()
	x.checkQuirk()
	x.checkAPSTOn()
	x.checkTolerance()
	x.checkTable()
	x.checkASPM()
	e := &x.e
	switch {
	case len(e.Failed) > 0:
		e.Verdict = "not eligible"
	case len(e.Unknown) > 0:
		e.Verdict = "unknown"
	default:
		e.Verdict = "eligible"
	}
	return x.e
}

// eligibility is Eligible's working state: what it reads, and the checks
// so far. Its check methods run in the order of the Check* constants.
type eligibility struct {
	sys   *System
	c     *Controller
	id    *Identify   // nil: no Identify Controller data
	plan  *KernelPlan // nil: no Identify Controller data
	q     Quirks
	force bool // nvme_core.force_apst
	e     alpm.Eligibility
}

func (x *eligibility) add(name string, st alpm.Status, format string, a ...any) {
	e := &x.e
	e.Checks = append(e.Checks, alpm.Check{Name: name, Status: st, Detail: fmt.Sprintf(format, a...)})
	switch st {
	case alpm.StatusFail:
		e.Failed = append(e.Failed, name)
	case alpm.StatusUnknown:
		e.Unknown = append(e.Unknown, name)
	}
}

func (x *eligibility) checkAPSTA() {
	id, c, add := x.id, x.c, x.add
	switch {
	case id != nil && !id.Known("apsta") && c.Tolerance != nil:
		add(CheckAPSTA, alpm.StatusOK, "inferred: the kernel shows %s only for a controller it enabled APST on (the Identify source does not carry APSTA)", FileTolerance)
	case id != nil && !id.Known("apsta"):
		add(CheckAPSTA, alpm.StatusUnknown, "the Identify source does not carry APSTA (byte %d): give nvme id-ctrl output", offAPSTA)
	case id != nil && id.APSTA:
		add(CheckAPSTA, alpm.StatusOK, "Identify byte %d bit 0 set: the controller supports APST", offAPSTA)
	case id != nil:
		add(CheckAPSTA, alpm.StatusFail, "Identify byte %d bit 0 clear: the controller has no APST; only the host could set power states", offAPSTA)
	case c.Tolerance != nil:
		add(CheckAPSTA, alpm.StatusOK, "inferred: the kernel shows %s only for a controller it enabled APST on", FileTolerance)
	default:
		add(CheckAPSTA, alpm.StatusUnknown, "no Identify Controller data (%s)", noIdentifyHint)
	}
}

func (x *eligibility) checkQuirk() {
	id, c, plan, q, force, add := x.id, x.c, x.plan, x.q, x.force, x.add
	var qmsg []string
	for _, m := range c.Quirks {
		qmsg = append(qmsg, m.Quirk+" from "+m.Source)
	}
	switch {
	case q&QuirkNoAPST != 0 && !(force && id != nil && id.APSTA):
		add(CheckQuirk, alpm.StatusFail, "%s: the kernel turns APST off; nvme_core.force_apst=1 (at boot) overrides it, at the risk the quirk names", strings.Join(qmsg, "; "))
	case q&QuirkNoDeepestPS != 0 && !force:
		deep := "the deepest state"
		if id != nil && len(id.PowerStates) > 0 {
			deep = fmt.Sprintf("PS%d", len(id.PowerStates)-1)
		}
		add(CheckQuirk, alpm.StatusFail, "%s: the kernel never uses %s; nvme_core.force_apst=1 (at boot) overrides it", strings.Join(qmsg, "; "), deep)
	case len(c.Quirks) > 0:
		add(CheckQuirk, alpm.StatusOK, "%s, overridden by nvme_core.force_apst=Y", strings.Join(qmsg, "; "))
	case id != nil && id.APSTA && c.Tolerance == nil && c.State != "":
		add(CheckQuirk, alpm.StatusFail, "no quirk in idlewatt's copy of the kernel tables matches, but the kernel hid %s although APSTA is set: it did not enable APST (a NO_APST quirk of a newer kernel)", FileTolerance)
	case c.APST != nil && plan != nil && plan.Enabled && !reaches(c.APST.Entries, deepestUsed(plan)):
		add(CheckQuirk, alpm.StatusFail, "no quirk in idlewatt's tables matches, but the table read from the drive never reaches PS%d, which the kernel's rule uses: a NO_DEEPEST_PS quirk of a newer kernel, or another tool wrote the table", deepestUsed(plan))
	default:
		add(CheckQuirk, alpm.StatusOK, "no NO_APST or NO_DEEPEST_PS entry matches (Identify VID/model/firmware, PCI ID, DMI) in idlewatt's copy of the kernel's tables")
	}
}

func (x *eligibility) checkAPSTOn() {
	c, plan, add := x.c, x.plan, x.add
	switch {
	case c.APST != nil && c.APST.Enabled != nil && *c.APST.Enabled:
		add(CheckAPSTOn, alpm.StatusOK, "feature 0x0C APSTE set (%s)", c.APSTSource)
	case c.APST != nil && c.APST.Enabled != nil:
		why := ""
		if plan != nil && plan.Off != "" {
			why = ": " + plan.Off
		}
		add(CheckAPSTOn, alpm.StatusFail, "feature 0x0C APSTE clear (%s)%s%s", c.APSTSource, why, toleranceHint(c))
	case plan != nil && plan.Enabled:
		add(CheckAPSTOn, alpm.StatusOK, "the kernel enables APST under these settings (feature 0x0C not read: %s)", noFeatureHint)
	case plan != nil:
		add(CheckAPSTOn, alpm.StatusFail, "the kernel turns APST off: %s%s", plan.Off, toleranceHint(c))
	case c.Tolerance != nil && c.Tolerance.Us == 0:
		add(CheckAPSTOn, alpm.StatusFail, "%s is 0, which turns APST off%s", FileTolerance, toleranceHint(c))
	case c.Tolerance != nil:
		add(CheckAPSTOn, alpm.StatusOK, "the kernel enabled APST (it shows %s, set to %s)", FileTolerance, c.Tolerance.Raw)
	case c.State != "":
		add(CheckAPSTOn, alpm.StatusFail, "the kernel did not enable APST: it hides %s (APSTA clear, or a NO_APST quirk)", FileTolerance)
	default:
		add(CheckAPSTOn, alpm.StatusUnknown, "no Identify data, no feature 0x0C and no %s", FileTolerance)
	}
}

func (x *eligibility) checkTolerance() {
	id, c, plan, q, force, add := x.id, x.c, x.plan, x.q, x.force, x.add
	tol := c.effectiveTolerance(x.sys.Module)
	tolFrom := FileTolerance
	if c.Tolerance == nil {
		tolFrom = "nvme_core.default_ps_max_latency_us (" + FileTolerance + " hidden)"
	}
	switch {
	case id == nil:
		add(CheckTolerance, alpm.StatusUnknown, "no power-state table to compare %s %s with (%s)", tolFrom, usString(tol), noIdentifyHint)
	case plan == nil || id.DeepestNonOperational() < 0:
		add(CheckTolerance, alpm.StatusFail, "the controller has no non-operational state: APST has nowhere to go")
	case deepestAllowed(id, q, force) < 0:
		add(CheckTolerance, alpm.StatusOK, "no non-operational state is left after the quirk (see quirk)")
	case tol == 0:
		d := deepestAllowed(id, q, force)
		add(CheckTolerance, alpm.StatusFail, "%s is 0, which turns APST off; %d µs or more would include PS%d (its exit latency)", tolFrom, id.PowerStates[d].ExitLatencyUs, d)
	default:
		x.judgeTolerance(tol, tolFrom)
	}
}

// judgeTolerance judges a non-zero latency tolerance on its own: were APST
// on (no NO_APST quirk, APSTA set), would it admit the deepest state the
// quirks allow?
func (x *eligibility) judgeTolerance(tol uint64, tolFrom string) {
	id, add := x.id, x.add
	d := deepestAllowed(id, x.q, x.force)
	hyp := *id
	hyp.APSTA = true
	hp := PlanAPST(&hyp, tol, x.q&^QuirkNoAPST, x.sys.Module)
	v, p := hp.States[d], id.PowerStates[d]
	_, _, _, _, sTol, _ := x.sys.Module.effective()
	switch {
	case v.Used:
		how := pathText(hp.Entries, 0)
		if !x.plan.Enabled {
			how = "it would be used if APST were on: " + how
		}
		add(CheckTolerance, alpm.StatusOK, "%s %s admits PS%d (exit latency %d µs); %s", tolFrom, usString(tol), d, p.ExitLatencyUs, how)
	case v.ExcludedByTolerance:
		add(CheckTolerance, alpm.StatusFail, "%s %s excludes PS%d (exit latency %d µs > tolerance): %d µs or more would include it%s",
			tolFrom, usString(tol), d, p.ExitLatencyUs, p.ExitLatencyUs, secondaryNote(p, sTol))
	case v.ExcludedBySecondary:
		add(CheckTolerance, alpm.StatusFail, "PS%d entry+exit latency %d µs > nvme_core.apst_secondary_latency_tol_us %d µs: the kernel leaves it out whatever the device tolerance; apst_secondary_latency_tol_us=%d would include it",
			d, p.TotalLatencyUs(), sTol, p.TotalLatencyUs())
	default:
		add(CheckTolerance, alpm.StatusFail, "PS%d is not used: %s", d, v.Reason)
	}
}

// checkTable judges the APST table read back from the drive.
func (x *eligibility) checkTable() {
	c, plan, add := x.c, x.plan, x.add
	switch {
	case c.APST == nil:
		add(CheckTable, alpm.StatusUnknown, "feature 0x0C not read (%s)", noFeatureHint)
	case plan == nil:
		add(CheckTable, alpm.StatusUnknown, "read (%s), but no Identify data to judge it", c.APSTSource)
	case !plan.Enabled:
		add(CheckTable, alpm.StatusOK, "APST off, so the table does not matter (%s)", c.APSTSource)
	case reaches(c.APST.Entries, deepestUsed(plan)):
		same := "matches the kernel's rule"
		if !sameTable(c.APST.Entries, plan.Entries) {
			same = "differs from the kernel's rule (another tool or kernel version wrote it)"
		}
		add(CheckTable, alpm.StatusOK, "%s; %s (%s)", pathText(c.APST.Entries, 0), same, c.APSTSource)
	default:
		add(CheckTable, alpm.StatusFail, "%s: never PS%d, which the kernel's rule would use (%s)", pathText(c.APST.Entries, 0), deepestUsed(plan), c.APSTSource)
	}
}

// checkASPM checks L1 and L1.2 on every link up to the root port, then
// the kernel's ASPM policy.
func (x *eligibility) checkASPM() {
	c, add := x.c, x.add
	var links []Link
	if c.PCI != nil {
		links = c.PCI.Links
	}
	linkCheck(add, CheckL1, "l1_aspm", "L1", links, c)
	linkCheck(add, CheckL12, "l1_2_aspm", "L1.2", links, c)

	allL12 := len(links) > 0
	for _, l := range links {
		if v := l.Enabled("l1_2_aspm"); v == nil || !*v {
			allL12 = false
		}
	}
	switch pol := x.sys.ASPMPolicy; {
	case pol == nil:
		add(CheckASPMPolicy, alpm.StatusUnknown, "no readable %s", ASPMPolicyFile)
	case pol.Current == "powersupersave":
		add(CheckASPMPolicy, alpm.StatusOK, "powersupersave: the kernel enables L0s, L1 and the L1 substates wherever capable")
	case allL12:
		add(CheckASPMPolicy, alpm.StatusOK, "%s, but L1.2 is on on every link (firmware or per-link setting)", pol.Current)
	case pol.Current == "default":
		add(CheckASPMPolicy, alpm.StatusFail, "default keeps the firmware's ASPM settings, which leave L1.2 off here; powersupersave would enable the L1 substates")
	case pol.Current == "powersave":
		add(CheckASPMPolicy, alpm.StatusFail, "powersave enables L0s and L1 but not the L1 substates; powersupersave would")
	case pol.Current == "performance":
		add(CheckASPMPolicy, alpm.StatusFail, "performance disables ASPM on every link; powersupersave would enable L1 and its substates")
	default:
		add(CheckASPMPolicy, alpm.StatusFail, "%s is not powersupersave", pol.Current)
	}
}

const (
	noIdentifyHint = "the ioctl needs root; or give nvme id-ctrl -o json output with --nvme-id-ctrl"
	noFeatureHint  = "Get Features needs root; or give nvme get-feature -f 0x0c -H -o json output with --nvme-apst"
)

func toleranceHint(c *Controller) string {
	if c.Tolerance != nil && c.Tolerance.Us == 0 {
		return fmt.Sprintf("; writing a non-zero value (e.g. %d) to %s turns it on", DefaultPSMaxLatencyUs, FileTolerance)
	}
	return ""
}

func secondaryNote(p PowerState, sTol uint64) string {
	if p.TotalLatencyUs() > sTol {
		return fmt.Sprintf(", and its entry+exit %d µs also exceeds apst_secondary_latency_tol_us %d µs", p.TotalLatencyUs(), sTol)
	}
	return ""
}

// deepestAllowed is the deepest non-operational state the quirks leave.
func deepestAllowed(id *Identify, q Quirks, force bool) int {
	for i := len(id.PowerStates) - 1; i >= 0; i-- {
		if i == len(id.PowerStates)-1 && q&QuirkNoDeepestPS != 0 && !force {
			continue
		}
		if id.PowerStates[i].NonOperational {
			return i
		}
	}
	return -1
}

// deepestUsed is the deepest APST target in the kernel's plan (-1: none).
func deepestUsed(p *KernelPlan) int {
	for i := len(p.States) - 1; i >= 0; i-- {
		if p.States[i].Used {
			return i
		}
	}
	return -1
}

// reaches: the table takes an idle controller from PS0 to ps or deeper.
func reaches(e []APSTEntry, ps int) bool {
	if ps < 0 {
		return true
	}
	for _, s := range Reached(e, 0) {
		if s.ITPS >= ps {
			return true
		}
	}
	return false
}

func sameTable(a, b []APSTEntry) bool {
	for i := range b {
		if i >= len(a) || a[i] != b[i] {
			return false
		}
	}
	return true
}

// pathText describes where the table takes an idle controller from ps.
func pathText(e []APSTEntry, ps int) string {
	steps := Reached(e, ps)
	if len(steps) == 0 {
		return fmt.Sprintf("PS%d never leaves by itself", ps)
	}
	var b strings.Builder
	fmt.Fprintf(&b, "PS%d", ps)
	var total uint64
	for _, s := range steps {
		total += uint64(s.ITPTms)
		fmt.Fprintf(&b, " → PS%d after %d ms", s.ITPS, s.ITPTms)
	}
	fmt.Fprintf(&b, " (%d ms idle in all)", total)
	return b.String()
}

func linkCheck(add func(string, alpm.Status, string, ...any), check, file, state string, links []Link, c *Controller) {
	if len(links) == 0 {
		if c.PCI == nil {
			add(check, alpm.StatusUnknown, "no PCI device found for %s (transport %q)", c.Name, c.Transport)
		} else {
			add(check, alpm.StatusUnknown, "%s has no upstream PCIe port in the tree", c.PCI.Address)
		}
		return
	}
	var off, unknown, on []string
	for _, l := range links {
		name := l.Downstream + "↔" + l.Upstream
		switch v := l.Enabled(file); {
		case v == nil:
			unknown = append(unknown, name)
		case *v:
			on = append(on, name)
		default:
			off = append(off, name)
		}
	}
	switch {
	case len(off) > 0:
		add(check, alpm.StatusFail, "%s disabled on %s (link/%s reads 0)", state, strings.Join(off, ", "), file)
	case len(unknown) > 0:
		add(check, alpm.StatusUnknown, "link/%s not shown for %s: the link is not %s-capable, or the kernel does not control ASPM (pcie_aspm=off, or the firmware kept control); the firmware's setting then stands and sysfs cannot show it (lspci -vv: LnkCtl)",
			file, strings.Join(unknown, ", "), state)
	default:
		add(check, alpm.StatusOK, "%s enabled on %s", state, strings.Join(on, ", "))
	}
}
