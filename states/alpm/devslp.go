package alpm

import "fmt"

// Status of one DevSlp precondition.
type Status string

const (
	StatusOK      Status = "ok"
	StatusFail    Status = "fail"
	StatusUnknown Status = "unknown" // the host does not expose the fact
)

// Check is one named precondition.
type Check struct {
	Name   string `json:"name"`
	Status Status `json:"status"`
	Detail string `json:"detail"`
}

// Names of the preconditions, in the order they are checked. They follow
// what the kernel checks before enabling DevSlp (ahci_set_lpm,
// ahci_set_aggressive_devslp in drivers/ata/libahci.c; ata_dev_config_devslp
// in drivers/ata/libata-core.c).
const (
	CheckPolicy        = "policy"
	CheckSDS           = "SDS"
	CheckSADM          = "SADM"
	CheckDriveSupport  = "drive support"
	CheckLogPage       = "log page"
	CheckDSP           = "DSP"
	CheckSlumberFirst  = "Slumber first"
	verdictEligible    = "eligible"
	verdictNotEligible = "not eligible"
	verdictUnknown     = "unknown"
)

// Eligibility is whether the kernel would turn DevSlp on for a device.
type Eligibility struct {
	// Verdict is "eligible" (every check ok), "not eligible" (any check
	// failed) or "unknown" (none failed, some could not be read).
	Verdict string   `json:"verdict"`
	Failed  []string `json:"failed,omitempty"`
	Unknown []string `json:"unknown,omitempty"`
	Checks  []Check  `json:"checks"`
}

// Eligible reports that every precondition holds.
func (e Eligibility) Eligible() bool { return e.Verdict == verdictEligible }

// DevSlpEligible checks every DevSlp precondition for device d on host h
// under h.Policy, naming each failed one separately. To ask "what if", pass
// a copy of h with another Policy.
func DevSlpEligible(h *Host, d *Device) Eligibility {
	var e Eligibility
	add := func(name string, st Status, format string, a ...any) {
		e.Checks = append(e.Checks, Check{Name: name, Status: st, Detail: fmt.Sprintf(format, a...)})
		switch st {
		case StatusFail:
			e.Failed = append(e.Failed, name)
		case StatusUnknown:
			e.Unknown = append(e.Unknown, name)
		}
	}

	switch {
	case h.LPMSupported != nil && !*h.LPMSupported:
		add(CheckPolicy, StatusFail, "link_power_management_supported is 0: the kernel refuses any LPM policy on this port")
	case h.Policy == "":
		add(CheckPolicy, StatusUnknown, "no readable link_power_management_policy")
	case h.Policy.AllowsDevSlp():
		add(CheckPolicy, StatusOK, "target %s allows DevSlp", h.Policy)
	default:
		add(CheckPolicy, StatusFail, "target %s; DevSlp needs min_power or min_power_with_partial", h.Policy)
	}

	if h.Cap2 == nil {
		add(CheckSDS, StatusUnknown, "no ahci_host_cap2 (not AHCI, or unreadable)")
		add(CheckSADM, StatusUnknown, "no ahci_host_cap2 (not AHCI, or unreadable)")
	} else {
		if h.Cap2.SDS {
			add(CheckSDS, StatusOK, "CAP2.SDS set: the HBA supports DevSlp")
		} else {
			add(CheckSDS, StatusFail, "CAP2.SDS clear: the HBA does not support DevSlp")
		}
		if h.Cap2.SADM {
			add(CheckSADM, StatusOK, "CAP2.SADM set: the HBA can assert DEVSLP after an idle timeout")
		} else {
			add(CheckSADM, StatusFail, "CAP2.SADM clear: no aggressive DevSlp management, and Linux has no other way to assert DEVSLP")
		}
	}

	id := d.Identify
	switch {
	case id == nil:
		add(CheckDriveSupport, StatusUnknown, "no readable IDENTIFY data")
	case !id.Known("devslp_supported"):
		add(CheckDriveSupport, StatusUnknown, "the IDENTIFY source does not carry word 78 (give hdparm -I, hdparm --Istdout or the sysfs id file)")
	case !id.FeaturesValid:
		add(CheckDriveSupport, StatusFail, "IDENTIFY word 78 is %s (invalid): the kernel assumes no DevSlp", id.Word78)
	case id.DevSlpSupported:
		add(CheckDriveSupport, StatusOK, "IDENTIFY word 78 bit 8 set")
	default:
		add(CheckDriveSupport, StatusFail, "IDENTIFY word 78 bit 8 clear: the drive does not support DevSlp")
	}

	if d.LogPage.Available {
		add(CheckLogPage, StatusOK, "log 30h page 08h read: MDAT %d ms (%s), DETO %d ms (%s)",
			d.LogPage.MDATms, d.LogPage.MDATFrom, d.LogPage.DETOms, d.LogPage.DETOFrom)
	} else {
		add(CheckLogPage, StatusUnknown, "log 30h page 08h not exposed by the kernel: unknown, defaults assumed (MDAT %d ms, DETO %d ms)",
			DefaultMDATms, DefaultDETOms)
	}

	switch {
	case h.PortDevSlp == nil:
		add(CheckDSP, StatusUnknown, "PxDEVSLP.DSP is not exposed in sysfs: unknown (set by the BIOS; dmesg \"port does not support device sleep\" means clear)")
	case h.PortDevSlp.DSP:
		add(CheckDSP, StatusOK, "PxDEVSLP.DSP set: firmware says the DEVSLP pin is wired")
	default:
		add(CheckDSP, StatusFail, "PxDEVSLP.DSP clear: firmware says the port has no DEVSLP pin")
	}

	if h.Cap2 != nil && h.Cap2.DESO {
		switch {
		case h.Policy == MinPower:
			add(CheckSlumberFirst, StatusOK, "CAP2.DESO: DevSlp only from Slumber; min_power makes the HBA enter Slumber itself")
		case h.Policy == MinPowerWithPartial && id != nil && id.DIPMSupported:
			add(CheckSlumberFirst, StatusOK, "CAP2.DESO: DevSlp only from Slumber; under min_power_with_partial the HBA stops at Partial, so the drive must initiate Slumber (DIPM)")
		case h.Policy == MinPowerWithPartial:
			add(CheckSlumberFirst, StatusFail, "CAP2.DESO: DevSlp only from Slumber; under min_power_with_partial the HBA stops at Partial and the drive has no DIPM to reach Slumber")
		default:
			add(CheckSlumberFirst, StatusOK, "CAP2.DESO: DevSlp only from Slumber (the link must reach Slumber first)")
		}
	}

	switch {
	case len(e.Failed) > 0:
		e.Verdict = verdictNotEligible
	case len(e.Unknown) > 0:
		e.Verdict = verdictUnknown
	default:
		e.Verdict = verdictEligible
	}
	return e
}
