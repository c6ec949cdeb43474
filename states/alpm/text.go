package alpm

import (
	"fmt"
	"io"
	"strings"
)

// WriteText prints sys for a person: one block per host, then its drives
// and their DevSlp checks. docs/states.md explains every field.
func (sys *System) WriteText(w io.Writer) error {
	var b strings.Builder
	fmt.Fprintf(&b, "sysfs root: %s\n", sys.Root)
	fmt.Fprintf(&b, "policy = the target the kernel recorded, not proof it was applied\n")
	if len(sys.Hosts) == 0 {
		b.WriteString("no SATA hosts found\n")
	}
	for i := range sys.Hosts {
		writeHost(&b, &sys.Hosts[i])
	}
	if len(sys.Problems) > 0 {
		b.WriteString("\nproblems:\n")
		for _, p := range sys.Problems {
			fmt.Fprintf(&b, "  %s\n", p)
		}
	}
	_, err := io.WriteString(w, b.String())
	return err
}

func yesNo(v bool) string {
	if v {
		return "yes"
	}
	return "no"
}

func writeHost(b *strings.Builder, h *Host) {
	port := h.Port
	if port == "" {
		port = "ata port unknown"
	}
	pol := string(h.Policy)
	if pol == "" {
		pol = "(unreadable)"
	}
	sup := "unknown (no link_power_management_supported: kernel before 6.17)"
	if h.LPMSupported != nil {
		sup = yesNo(*h.LPMSupported)
	} else if h.supportedFile {
		sup = "unknown (link_power_management_supported unreadable)"
	}
	fmt.Fprintf(b, "\n%s (%s)\n", h.Name, port)
	fmt.Fprintf(b, "  policy:        %s\n", pol)
	fmt.Fprintf(b, "  LPM supported: %s\n", sup)
	if c := h.Caps; c != nil {
		fmt.Fprintf(b, "  HBA CAP  %s: ports %d, Partial %s, Slumber %s, aggressive LPM (SALP) %s, external SATA (SXS) %s\n",
			c.Raw, c.Ports, yesNo(c.PSC), yesNo(c.SSC), yesNo(c.SALP), yesNo(c.SXS))
	} else {
		b.WriteString("  HBA CAP:  unknown\n")
	}
	if c := h.Cap2; c != nil {
		fmt.Fprintf(b, "  HBA CAP2 %s: DevSlp (SDS) %s, aggressive DevSlp (SADM) %s, DevSlp from Slumber only (DESO) %s, auto Partial→Slumber (APST) %s\n",
			c.Raw, yesNo(c.SDS), yesNo(c.SADM), yesNo(c.DESO), yesNo(c.APST))
	} else {
		b.WriteString("  HBA CAP2: unknown\n")
	}
	if c := h.PortCmd; c != nil {
		ext := ""
		if c.External() {
			ext = "  ← external/hot-plug: Linux 6.17+ and tuned keep LPM off"
		}
		fmt.Fprintf(b, "  port CMD %s: hot-plug (HPCP) %s, external (ESP) %s, ALPE %s, ASP %s, ICC %d (%s)%s\n",
			c.Raw, yesNo(c.HPCP), yesNo(c.ESP), yesNo(c.ALPE), yesNo(c.ASP), c.ICC, c.ICCName(), ext)
	} else {
		b.WriteString("  port CMD: unknown\n")
	}
	if d := h.PortDevSlp; d != nil {
		fmt.Fprintf(b, "  port DEVSLP %s: DSP %s, ADSE %s, DETO %d ms, MDAT %d ms, idle before DevSlp %d ms\n",
			d.Raw, yesNo(d.DSP), yesNo(d.ADSE), d.DETOms, d.MDATms, d.IdleMs)
	} else {
		b.WriteString("  port DEVSLP: not exposed by sysfs (DSP unknown)\n")
	}
	for _, l := range h.Links {
		fmt.Fprintf(b, "  %s: %s\n", l.Name, l.SataSpd)
	}
	if len(h.Devices) == 0 {
		b.WriteString("  no drive\n")
	}
	for i := range h.Devices {
		writeDevice(b, &h.Devices[i])
	}
}

func writeDevice(b *strings.Builder, d *Device) {
	blk := d.Block
	if blk == "" {
		blk = "no block device"
	}
	fmt.Fprintf(b, "  %s (%s, %s)\n", d.Name, d.Class, blk)
	if d.IdentifySource != "" {
		fmt.Fprintf(b, "    IDENTIFY from %s\n", d.IdentifySource)
	}
	if id := d.Identify; id != nil {
		writeIdentify(b, id)
	} else {
		b.WriteString("    IDENTIFY unreadable\n")
	}
	writeLogPage(b, d.LogPage)
	e := d.DevSlp
	fmt.Fprintf(b, "    DevSlp: %s", e.Verdict)
	if len(e.Failed) > 0 {
		fmt.Fprintf(b, "; failed: %s", strings.Join(e.Failed, ", "))
	}
	if len(e.Unknown) > 0 {
		fmt.Fprintf(b, "; unknown: %s", strings.Join(e.Unknown, ", "))
	}
	b.WriteString("\n")
	for _, c := range e.Checks {
		mark := map[Status]string{StatusOK: "ok  ", StatusFail: "FAIL", StatusUnknown: "?   "}[c.Status]
		fmt.Fprintf(b, "      %s %-13s %s\n", mark, c.Name, c.Detail)
	}
}

// WriteResultsText prints policy write results, one line per host.
func WriteResultsText(w io.Writer, res []HostResult) error {
	var b strings.Builder
	for _, r := range res {
		switch {
		case r.Skipped != "":
			fmt.Fprintf(&b, "%s: skipped: %s\n", r.Host, r.Skipped)
		case r.Err != nil:
			fmt.Fprintf(&b, "%s: FAILED: %s\n", r.Host, r.Error)
		default:
			prev := string(r.Previous)
			if prev == "" {
				prev = "unknown"
			}
			fmt.Fprintf(&b, "%s: target set %s (was %s; the kernel applies it later and may still disable LPM)\n", r.Host, r.TargetSet, prev)
		}
	}
	_, err := io.WriteString(w, b.String())
	return err
}

func writeIdentify(b *strings.Builder, id *Identify) {
	fmt.Fprintf(b, "    model %q serial %q firmware %q, IDENTIFY checksum %s\n", id.Model, id.Serial, id.Firmware, id.Checksum)
	if !id.Known("hipm") {
		b.WriteString("    HIPM unknown; DIPM supported unknown, enabled unknown; DevSlp supported unknown, enabled unknown (not in this source)\n")
	} else {
		hipm := yesNo(id.HIPM)
		if !id.Word76Valid {
			hipm = fmt.Sprintf("no (word 76 = %s, invalid)", id.Word76)
		}
		fmt.Fprintf(b, "    HIPM %s; DIPM supported %s, enabled %s; DevSlp supported %s, enabled %s\n",
			hipm, yesNo(id.DIPMSupported), yesNo(id.DIPMEnabled), yesNo(id.DevSlpSupported), yesNo(id.DevSlpEnabled))
	}
	if len(id.Unknown) > 0 {
		fmt.Fprintf(b, "    not in this source: %s\n", strings.Join(id.Unknown, ", "))
	}
	for _, n := range id.Notes {
		fmt.Fprintf(b, "    note: %s\n", n)
	}
}

func writeLogPage(b *strings.Builder, lp LogPage) {
	if lp.Available {
		fmt.Fprintf(b, "    log 30h/08h: valid %s; MDAT %d ms (%s), DETO %d ms (%s)\n", yesNo(lp.Valid), lp.MDATms, lp.MDATFrom, lp.DETOms, lp.DETOFrom)
	} else {
		fmt.Fprintf(b, "    log 30h/08h: unknown, defaults assumed (MDAT %d ms, DETO %d ms)\n", lp.MDATms, lp.DETOms)
	}
}

// WriteDecodedText prints what one source says of one drive as `states`
// prints a drive: identity, HIPM/DIPM/DevSlp, and the DevSlp timings.
func WriteDecodedText(w io.Writer, d Decoded, source string) error {
	var b strings.Builder
	name := d.Name
	if name == "" {
		name = "SATA drive"
	}
	fmt.Fprintf(&b, "  %s (from %s)\n", name, source)
	switch {
	case d.Skipped != "":
		fmt.Fprintf(&b, "    skipped: %s\n", d.Skipped)
	case d.Identify != nil:
		writeIdentify(&b, d.Identify)
	}
	if d.Skipped == "" {
		lp := UnknownLogPage()
		if d.LogPage != nil {
			lp = *d.LogPage
		}
		if d.Identify == nil || d.LogPage != nil || d.Identify.DevSlpSupported {
			writeLogPage(&b, lp)
		}
	}
	_, err := io.WriteString(w, b.String())
	return err
}
