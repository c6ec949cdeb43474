package nvme

import (
	"fmt"
	"math"
)

// The Linux kernel's APST rules, reproduced from drivers/nvme/host/core.c
// (nvme_configure_apst, nvme_apst_get_transition_time,
// nvme_set_latency_tolerance, nvme_init_identify; Linux 5.13 to 6.x), so
// idlewatt can say which table the kernel programs and why a state is left
// out, without reading the table back.

// ModuleParams are /sys/module/nvme_core/parameters; a nil field was not
// readable (a kernel without the parameter, or no such file in the tree).
type ModuleParams struct {
	DefaultPSMaxLatencyUs     *uint64 `json:"default_ps_max_latency_us"`
	ForceAPST                 *bool   `json:"force_apst"`
	APSTPrimaryTimeoutMs      *uint64 `json:"apst_primary_timeout_ms"`
	APSTPrimaryLatencyTolUs   *uint64 `json:"apst_primary_latency_tol_us"`
	APSTSecondaryTimeoutMs    *uint64 `json:"apst_secondary_timeout_ms"`
	APSTSecondaryLatencyTolUs *uint64 `json:"apst_secondary_latency_tol_us"`
}

// Kernel defaults (core.c module_param declarations).
const (
	DefaultPSMaxLatencyUs     = 100000
	DefaultPrimaryTimeoutMs   = 100
	DefaultPrimaryLatTolUs    = 15000
	DefaultSecondaryTimeoutMs = 2000
	DefaultSecondaryLatTolUs  = 100000
)

func or(p *uint64, d uint64) uint64 {
	if p == nil {
		return d
	}
	return *p
}

// effective returns the parameters with kernel defaults for the unread ones.
func (m ModuleParams) effective() (defLat, pTO, pTol, sTO, sTol uint64, force bool) {
	force = m.ForceAPST != nil && *m.ForceAPST
	return or(m.DefaultPSMaxLatencyUs, DefaultPSMaxLatencyUs), or(m.APSTPrimaryTimeoutMs, DefaultPrimaryTimeoutMs),
		or(m.APSTPrimaryLatencyTolUs, DefaultPrimaryLatTolUs), or(m.APSTSecondaryTimeoutMs, DefaultSecondaryTimeoutMs),
		or(m.APSTSecondaryLatencyTolUs, DefaultSecondaryLatTolUs), force
}

// Unlimited is the latency tolerance "auto" or "any" (the kernel's U64_MAX).
const Unlimited = math.MaxUint64

// StateVerdict says what the kernel made of one power state.
type StateVerdict struct {
	PS     int    `json:"ps"`
	Used   bool   `json:"used"` // an APST target (some entry transitions to it)
	ITPTms uint64 `json:"itpt_ms,omitempty"`
	Reason string `json:"reason"`
	// Excluded* say why a non-operational state is not a target, for the
	// eligibility checks.
	ExcludedByTolerance bool `json:"-"`
	ExcludedBySecondary bool `json:"-"`
	ExcludedByQuirk     bool `json:"-"`
}

// KernelPlan is the APST configuration the kernel would program.
type KernelPlan struct {
	// Enabled is the APSTE bit it would write.
	Enabled bool `json:"apste"`
	// Why APST is off, when it is.
	Off string `json:"off_reason,omitempty"`
	// MaxLatencyUs is ps_max_latency_us, the per-device tolerance
	// (Unlimited for "auto"/"any").
	MaxLatencyUs uint64         `json:"ps_max_latency_us"`
	Scheme       string         `json:"scheme"` // "primary/secondary" or "legacy 2%"
	Entries      []APSTEntry    `json:"entries"`
	States       []StateVerdict `json:"states"`
}

// PlanAPST reproduces nvme_configure_apst for id under maxLatUs (the
// device's latency tolerance) with quirks q and module parameters m.
// apstEnabled is the kernel's ctrl->apst_enabled: APSTA, unless a NO_APST
// quirk without force_apst.
func PlanAPST(id *Identify, maxLatUs uint64, q Quirks, m ModuleParams) KernelPlan {
	_, pTO, pTol, sTO, sTol, force := m.effective()
	if force {
		q &^= QuirkNoDeepestPS // nvme_init_identify clears it under force_apst
	}
	plan := KernelPlan{MaxLatencyUs: maxLatUs, Entries: make([]APSTEntry, len(id.PowerStates))}
	// The descriptors decoded are PS0…PSnpss; a hand-built Identify whose
	// NPSS disagrees with its table is taken by the table.
	npss := len(id.PowerStates) - 1
	apstEnabled := id.APSTA && (q&QuirkNoAPST == 0 || force)
	primary := pTO != 0 && pTol != 0
	if primary {
		plan.Scheme = "primary/secondary"
	} else {
		plan.Scheme = "legacy 2%"
	}
	switch {
	case !id.APSTA:
		plan.Off = "APSTA clear: the controller does not support APST"
	case npss > 31:
		plan.Off = "NPSS invalid"
	case npss < 0:
		plan.Off = "no power-state descriptors"
	case !apstEnabled:
		plan.Off = "NO_APST quirk (force_apst not set)"
	case maxLatUs == 0:
		plan.Off = "latency tolerance 0 turns APST off"
	}
	verdict := make([]StateVerdict, len(id.PowerStates))
	for i := range verdict {
		verdict[i].PS = i
	}
	if plan.Off != "" {
		for i := range verdict {
			verdict[i].Reason = "APST off: " + plan.Off
		}
		plan.States = verdict
		return plan
	}
	plan.Enabled = true
	var target *APSTEntry
	lastIndex := math.MaxInt // last_lt_index
	for s := npss; s >= 0; s-- {
		v := &verdict[s]
		if target != nil {
			plan.Entries[s] = *target
		}
		p := id.PowerStates[s]
		if s == npss && q&QuirkNoDeepestPS != 0 {
			v.Reason, v.ExcludedByQuirk = "NO_DEEPEST_PS quirk: the deepest state is never used", true
			continue
		}
		if !p.NonOperational {
			v.Reason = "operational state (not an APST target)"
			continue
		}
		if uint64(p.ExitLatencyUs) > maxLatUs {
			v.Reason = fmt.Sprintf("exit latency %d µs > latency tolerance %s", p.ExitLatencyUs, usString(maxLatUs))
			v.ExcludedByTolerance = true
			continue
		}
		total := p.TotalLatencyUs()
		var itpt uint64
		if primary {
			switch {
			case total <= pTol:
				if lastIndex == 1 {
					v.Reason = fmt.Sprintf("entry+exit %d µs ≤ primary tolerance %d µs, but a deeper state already took the primary slot", total, pTol)
					continue
				}
				lastIndex, itpt = 1, pTO
			case sTO != 0 && total <= sTol:
				if lastIndex <= 2 {
					v.Reason = fmt.Sprintf("entry+exit %d µs ≤ secondary tolerance %d µs, but a deeper state already took a slot", total, sTol)
					continue
				}
				lastIndex, itpt = 2, sTO
			default:
				v.Reason = fmt.Sprintf("entry+exit %d µs > apst_secondary_latency_tol_us %d µs (and > primary %d µs)", total, sTol, pTol)
				v.ExcludedBySecondary = true
				continue
			}
		} else {
			itpt = (total + 19) / 20
			if itpt > MaxITPTms {
				itpt = MaxITPTms
			}
		}
		v.Used, v.ITPTms = true, itpt
		v.Reason = fmt.Sprintf("target after %d ms idle (entry+exit %d µs)", itpt, total)
		target = &APSTEntry{ITPS: s, ITPTms: uint32(itpt)}
	}
	plan.States = verdict
	return plan
}

// Feature is the feature 0Ch the drive reports once the kernel programmed
// p: all 32 entries, the unused ones zero.
func (p KernelPlan) Feature() *APST {
	e := make([]APSTEntry, apstEntries)
	copy(e, p.Entries)
	return &APST{Enabled: new(p.Enabled), Entries: e}
}

func usString(v uint64) string {
	if v == Unlimited {
		return "unlimited"
	}
	return fmt.Sprintf("%d µs", v)
}
