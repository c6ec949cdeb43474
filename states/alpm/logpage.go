package alpm

import (
	"bytes"
	"fmt"
	"strconv"
	"strings"
)

// LogPageFile is the optional file, beside a device's id, holding the
// Identify Device Data log (30h) page 08h (SATA settings) as a hex dump. The
// kernel reads this page (ata_dev_config_devslp) but does not expose it, so
// on a real host it is absent unless the user saves
// `smartctl -l gplog,0x30,8 /dev/sdX` output there; fixtures and the
// simulated host provide it. Format: docs/states.md.
const LogPageFile = "idlewatt_log_30h_08h"

// PortDevSlpFile is the optional file, beside ahci_port_cmd, holding
// PxDEVSLP in hex (same form as ahci_port_cmd). Mainline Linux does not
// expose the register.
const PortDevSlpFile = "idlewatt_port_devslp"

// DevSlp timing defaults the kernel uses when the log gives none
// (ahci_set_aggressive_devslp in drivers/ata/libahci.c: "Use the nominal
// value 10 ms if the read MDAT is zero, the nominal value of DETO is 20 ms").
const (
	DefaultMDATms = 10
	DefaultDETOms = 20
)

// Offsets in the 512-byte page: the kernel copies 8 bytes from
// ATA_LOG_DEVSLP_OFFSET (0x30) and reads MDAT at +0 (mask 0x1f), DETO at
// +1 and the valid flag at +7 bit 7 (include/linux/ata.h).
const (
	logPageSize = 512
	logMDAT     = 0x30
	logDETO     = 0x31
	logValid    = 0x37
	logPageNo   = 2 // page header: bytes 0–1 revision, byte 2 page number
)

// LogPage is what idlewatt knows of log 30h page 08h for one drive.
type LogPage struct {
	// Available is false when no dump was provided: the timings below are
	// then the kernel defaults, assumed.
	Available bool `json:"available"`
	// Valid is byte 0x37 bit 7: the drive's DevSlp timing fields are valid.
	Valid    bool   `json:"valid"`
	MDATms   int    `json:"mdat_ms"`
	MDATFrom string `json:"mdat_from"` // "drive" or "default (…)"
	DETOms   int    `json:"deto_ms"`
	DETOFrom string `json:"deto_from"`
}

// UnknownLogPage is the answer without a dump.
func UnknownLogPage() LogPage {
	const why = "default (log page unknown, defaults assumed)"
	return LogPage{MDATms: DefaultMDATms, MDATFrom: why, DETOms: DefaultDETOms, DETOFrom: why}
}

// DecodeLogPage applies the kernel's rules to a 512-byte page 08h.
func DecodeLogPage(p []byte) (LogPage, error) {
	if len(p) != logPageSize {
		return UnknownLogPage(), fmt.Errorf("%d bytes, want %d", len(p), logPageSize)
	}
	if p[logPageNo] != 0x08 {
		return UnknownLogPage(), fmt.Errorf("header says page %02xh, want 08h", p[logPageNo])
	}
	lp := LogPage{Available: true, Valid: p[logValid]&0x80 != 0}
	if !lp.Valid {
		lp.MDATms, lp.MDATFrom = DefaultMDATms, "default (valid bit clear)"
		lp.DETOms, lp.DETOFrom = DefaultDETOms, "default (valid bit clear)"
		return lp, nil
	}
	lp.MDATms, lp.MDATFrom = int(p[logMDAT]&0x1f), "drive"
	if lp.MDATms == 0 {
		lp.MDATms, lp.MDATFrom = DefaultMDATms, "default (drive reports 0)"
	}
	lp.DETOms, lp.DETOFrom = int(p[logDETO]), "drive"
	if lp.DETOms == 0 {
		lp.DETOms, lp.DETOFrom = DefaultDETOms, "default (drive reports 0)"
	}
	return lp, nil
}

// ParseHexDump reads a hex dump of one log page. Data lines hold
// two-digit hex bytes separated by spaces, optionally led by an offset
// ("0000030:") which must match the bytes read so far, and optionally
// followed by an ASCII column starting with '|'. Lines before the first
// data line that are not data (a smartctl banner) are skipped; blank lines
// and lines starting with '#' are skipped anywhere.
func ParseHexDump(b []byte) ([]byte, error) {
	var out []byte
	started := false
	for n, line := range bytes.Split(b, []byte("\n")) {
		s := strings.TrimSpace(string(line))
		if s == "" || s[0] == '#' {
			continue
		}
		if i := strings.IndexByte(s, '|'); i >= 0 {
			s = s[:i]
		}
		offset, hasOffset := -1, false
		if i := strings.IndexByte(s, ':'); i > 0 {
			if v, err := strconv.ParseUint(s[:i], 16, 32); err == nil {
				offset, hasOffset = int(v), true
				s = s[i+1:]
			}
		}
		fields := strings.Fields(s)
		bs, bad := make([]byte, 0, len(fields)), ""
		for _, f := range fields {
			v, err := strconv.ParseUint(f, 16, 8)
			if err != nil || len(f) != 2 {
				bad = f
				break
			}
			bs = append(bs, byte(v))
		}
		if bad != "" || len(bs) == 0 {
			if !started && !hasOffset {
				continue // banner
			}
			if bad == "" {
				bad = s
			}
			return nil, fmt.Errorf("line %d: %q is not a hex byte", n+1, clip(bad, 20))
		}
		if hasOffset && offset != len(out) {
			return nil, fmt.Errorf("line %d: offset %#x, but %#x bytes read so far (a line missing?)", n+1, offset, len(out))
		}
		started = true
		out = append(out, bs...)
		if len(out) > logPageSize {
			return nil, fmt.Errorf("line %d: more than %d bytes", n+1, logPageSize)
		}
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("no hex bytes found")
	}
	return out, nil
}

// FormatHexDump writes p in the form ParseHexDump reads (16 bytes a line).
func FormatHexDump(p []byte) []byte {
	var sb strings.Builder
	for i := 0; i < len(p); i += 16 {
		fmt.Fprintf(&sb, "%07x:", i)
		for _, c := range p[i:min(i+16, len(p))] {
			fmt.Fprintf(&sb, " %02x", c)
		}
		sb.WriteByte('\n')
	}
	return []byte(sb.String())
}
