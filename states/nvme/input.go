package nvme

import (
	"bytes"
	"fmt"
	"strconv"
	"strings"
)

// Inputs a user can hand over instead of the ioctl (docs/states.md): each
// parser takes what nvme-cli writes — raw binary (`-b`, or `-o binary`),
// JSON (`-o json`) — or a hex dump, and tells them apart by content.

// Format names how an input was read.
const (
	FormatBinary = "binary"
	FormatJSON   = "nvme-cli JSON"
	FormatHex    = "hex dump"
)

func isJSON(b []byte) bool {
	t := bytes.TrimLeft(b, " \t\r\n")
	return len(t) > 0 && (t[0] == '{' || t[0] == '[')
}

// ParsePowerManagement reads feature 02h: nvme-cli JSON, or Dword 0 as a
// number ("0x00000003", "3").
func ParsePowerManagement(b []byte) (PowerManagement, string, error) {
	if isJSON(b) {
		pm, err := DecodePowerManagementJSON(b)
		return pm, FormatJSON, err
	}
	s := strings.TrimSpace(string(b))
	v, err := strconv.ParseUint(s, 0, 32)
	if err != nil {
		return PowerManagement{}, "dword", fmt.Errorf("feature 0x02: %q is neither nvme-cli JSON nor a Dword 0 value", clip(s, 20))
	}
	return DecodePowerManagement(uint32(v)), "dword", nil
}

// looksBinary: a NUL or other control byte outside whitespace.
func looksBinary(b []byte) bool {
	for _, c := range b[:min(len(b), 512)] {
		if c < 0x20 && c != '\n' && c != '\r' && c != '\t' {
			return true
		}
	}
	return false
}

// ParseHexDump reads bytes written as hex: lines of two-digit hex bytes
// separated by spaces, optionally led by an offset ("0000010:" or
// "0010:") that must equal the bytes read so far, optionally followed by
// an ASCII column after '|' or '"'. Blank lines and '#' lines are skipped.
// It must yield exactly want bytes.
func ParseHexDump(b []byte, want int) ([]byte, error) {
	out := make([]byte, 0, want)
	for n, line := range bytes.Split(b, []byte("\n")) {
		s := strings.TrimSpace(string(line))
		if s == "" || s[0] == '#' {
			continue
		}
		if i := strings.IndexAny(s, "|\""); i >= 0 {
			s = s[:i]
		}
		if i := strings.IndexByte(s, ':'); i > 0 {
			off, err := strconv.ParseUint(s[:i], 16, 32)
			if err != nil {
				return nil, fmt.Errorf("line %d: offset %q is not hex", n+1, clip(s[:i], 12))
			}
			if int(off) != len(out) {
				return nil, fmt.Errorf("line %d: offset %#x, but %#x bytes read so far (a line missing?)", n+1, off, len(out))
			}
			s = s[i+1:]
		}
		for _, f := range strings.Fields(s) {
			v, err := strconv.ParseUint(f, 16, 8)
			if err != nil || len(f) != 2 {
				return nil, fmt.Errorf("line %d: %q is not a hex byte", n+1, clip(f, 12))
			}
			if len(out) == want {
				return nil, fmt.Errorf("line %d: more than %d bytes", n+1, want)
			}
			out = append(out, byte(v))
		}
	}
	if len(out) != want {
		return nil, fmt.Errorf("%d bytes, want %d", len(out), want)
	}
	return out, nil
}

// FormatHexDump writes p as ParseHexDump reads it, 16 bytes a line.
func FormatHexDump(p []byte) []byte {
	var sb strings.Builder
	for i := 0; i < len(p); i += 16 {
		fmt.Fprintf(&sb, "%04x:", i)
		for _, c := range p[i:min(i+16, len(p))] {
			fmt.Fprintf(&sb, " %02x", c)
		}
		sb.WriteByte('\n')
	}
	return []byte(sb.String())
}
