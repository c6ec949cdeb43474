package alpm

import (
	"errors"
	"fmt"
	"strings"

	"github.com/idlewatt/idlewatt/internal/suggest"
)

// Policy is a value of /sys/class/scsi_host/hostN/link_power_management_policy.
// The names are the kernel's ata_lpm_policy_names[] (drivers/ata/libata-sata.c).
type Policy string

// The six kernel names, in the kernel's order of increasing power saving.
const (
	// KeepFirmwareSettings is what the kernel shows when it has not set a
	// policy (ATA_LPM_UNKNOWN). It cannot be written: the kernel's store
	// loop starts at ATA_LPM_MAX_POWER, so writing it fails with EINVAL.
	KeepFirmwareSettings Policy = "keep_firmware_settings"
	// MaxPerformance allows no link power state (SControl IPM = 7).
	MaxPerformance Policy = "max_performance"
	// MediumPower allows host-initiated Partial only.
	MediumPower Policy = "medium_power"
	// MedPowerWithDIPM adds device-initiated Partial and Slumber (the kernel
	// default since 6.11; powertop and TLP write it).
	MedPowerWithDIPM Policy = "med_power_with_dipm"
	// MinPowerWithPartial is host Partial, DIPM, and DevSlp.
	MinPowerWithPartial Policy = "min_power_with_partial"
	// MinPower is host Slumber, DIPM, and DevSlp.
	MinPower Policy = "min_power"
)

// Policies lists every kernel name in the kernel's order.
func Policies() []Policy {
	return []Policy{KeepFirmwareSettings, MaxPerformance, MediumPower, MedPowerWithDIPM, MinPowerWithPartial, MinPower}
}

// Writable reports whether the kernel accepts p on a write.
func (p Policy) Writable() bool { return p.Known() && p != KeepFirmwareSettings }

// Known reports whether p is one of the six kernel names.
func (p Policy) Known() bool {
	for _, q := range Policies() {
		if p == q {
			return true
		}
	}
	return false
}

// AllowsDevSlp reports whether the kernel enables DevSlp under p
// (ahci_set_lpm: only the two min_power policies).
func (p Policy) AllowsDevSlp() bool { return p == MinPower || p == MinPowerWithPartial }

// ErrUnknownPolicy is matched (errors.Is) by every *UnknownPolicyError.
var ErrUnknownPolicy = errors.New("unknown policy")

// ErrNotWritable is returned before any I/O for keep_firmware_settings.
var ErrNotWritable = errors.New("keep_firmware_settings is display-only: the kernel rejects it on write (EINVAL)")

// UnknownPolicyError is a name that is not one of the six, with the nearest
// writable name when one is close enough to be a typo.
type UnknownPolicyError struct {
	Name       string
	Suggestion Policy // "" when nothing is close
}

func (e *UnknownPolicyError) Error() string {
	if e.Suggestion != "" {
		return fmt.Sprintf("unknown policy %s; did you mean %s?", e.Name, e.Suggestion)
	}
	names := make([]string, 0, 5)
	for _, p := range Policies()[1:] {
		names = append(names, string(p))
	}
	return fmt.Sprintf("unknown policy %s; one of: %s", e.Name, strings.Join(names, ", "))
}

func (e *UnknownPolicyError) Is(target error) bool { return target == ErrUnknownPolicy }

// ParsePolicy accepts exactly the six kernel names (surrounding white space
// ignored, as the kernel's file ends in a newline). Unlike the kernel, which
// prefix-matches, it rejects anything else: "min_power_x" would silently
// mean min_power to the kernel. keep_firmware_settings parses (it is a valid
// reading); callers that write check Writable.
func ParsePolicy(s string) (Policy, error) {
	p := Policy(strings.TrimSpace(s))
	if p.Known() {
		return p, nil
	}
	return "", &UnknownPolicyError{Name: strings.TrimSpace(s), Suggestion: nearest(string(p))}
}

// ParseWritablePolicy is ParsePolicy that also refuses keep_firmware_settings.
func ParseWritablePolicy(s string) (Policy, error) {
	p, err := ParsePolicy(s)
	if err != nil {
		return "", err
	}
	if !p.Writable() {
		return "", ErrNotWritable
	}
	return p, nil
}

// nearest returns the writable name closest to s by edit distance (case
// folded), or "" when even the closest needs more edits than a typo would.
func nearest(s string) Policy {
	s = strings.ToLower(s)
	// An abbreviation ("max_perf") is far in edit distance but clear.
	var prefixed []Policy
	for _, p := range Policies()[1:] {
		if len(s) >= 3 && strings.HasPrefix(string(p), s) {
			prefixed = append(prefixed, p)
		}
	}
	if len(prefixed) == 1 {
		return prefixed[0]
	}
	names := make([]string, 0, len(Policies()))
	for _, p := range Policies()[1:] {
		names = append(names, string(p))
	}
	return Policy(suggest.Nearest(s, names, func(best string) int { return max(3, len(best)/3) }))
}
