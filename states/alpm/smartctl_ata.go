package alpm

import (
	"bufio"
	"fmt"
	"io"
	"regexp"
	"strings"
)

// smartctl's ATA information section (ataprint.cpp print_drive_info),
// printed by -i, -a and -x:
//
//	=== START OF INFORMATION SECTION ===
//	Device Model:     Samsung SSD 860 EVO 500GB
//	Serial Number:    S3Z1NB0K123456A
//	Firmware Version: RVT04B6Q
//
// smartctl prints no IDENTIFY word 76, 78 or 79 there (nor in -c or -x's
// logs): HIPM, DIPM and DevSlp are listed as unknown; hdparm -I, hdparm
// --Istdout or /sys/class/ata_device/devN.M/id carry them.

var reSmartATA = regexp.MustCompile(`^(Device Model|Model Number|Serial Number|Firmware Version|SATA Version is):\s+(.*?)\s*$`)

func sniffSmartctlATA(b []byte) bool {
	h := string(b[:min(len(b), 1<<16)])
	return strings.Contains(h, "smartctl") && (strings.Contains(h, "Device Model:") || strings.Contains(h, "=== START OF READ SMART DATA SECTION ===")) ||
		strings.Contains(h, "=== START OF INFORMATION SECTION ===") && strings.Contains(h, "Device Model:")
}

// ReadSmartctlATA reads the identity of a SATA drive from smartctl output.
func ReadSmartctlATA(r io.Reader) ([]Decoded, error) {
	const w = "smartctl ATA"
	sc := bufio.NewScanner(io.LimitReader(r, maxInput))
	sc.Buffer(make([]byte, 0, 4096), 1<<20)
	kv := map[string]string{}
	n := 0
	for sc.Scan() {
		n++
		if m := reSmartATA.FindStringSubmatch(strings.TrimRight(sc.Text(), "\r")); m != nil {
			if _, dup := kv[m[1]]; dup && m[1] != "SATA Version is" {
				return nil, fmt.Errorf("%s line %d: a second %q (one drive per file)", w, n, m[1])
			}
			kv[m[1]] = m[2]
		}
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("%s line %d: %w", w, n+1, err)
	}
	model, ok := kv["Device Model"]
	if !ok {
		model, ok = kv["Model Number"]
	}
	if !ok {
		return nil, fmt.Errorf("%s: no \"Device Model:\" line: give smartctl -i, -a or -x output (smartctl -c prints no identity)", w)
	}
	id := Identify{Model: printable(model), Serial: printable(kv["Serial Number"]), Firmware: printable(kv["Firmware Version"]), Checksum: "unknown"}
	id.Unknown = []string{"word76", "word78", "word79", "hipm", "dipm_supported", "dipm_enabled", "devslp_supported", "devslp_enabled"}
	id.Notes = []string{"smartctl prints no IDENTIFY words 76–79: HIPM, DIPM and DevSlp are unknown (hdparm -I or the sysfs id file carries them)"}
	return []Decoded{{Identify: &id}}, nil
}
