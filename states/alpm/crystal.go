package alpm

import (
	"bufio"
	"fmt"
	"io"
	"regexp"
	"strconv"
	"strings"
)

// CrystalDiskInfo's text report (Edit > Copy, or DiskInfo.txt; its
// DiskInfoDlg copy code): per drive a title "(03) Samsung SSD 870 QVO 4TB",
// "Interface : Serial ATA", …, then
//
//	-- IDENTIFY_DEVICE ---------------------------------------------------------
//	        0    1    2    3    4    5    6    7    8    9
//	000: 0040 3FFF C837 0010 0000 0000 003F 0000 0000 0000
//	…
//	250: 0000 0000 0000 0000 0000 32A5
//
// ten words a line, "%03d" decimal word offsets, "%04X" words (an ASCII
// column may follow two spaces). Older versions stop at word 249 (25
// lines), so word 255 (the checksum) may be missing. With "hide serial
// number" the serial words read FFFFh. For an NVMe drive the block holds
// only the first 512 bytes of Identify Controller: the power states
// (byte 2048 on) are not in it, so such drives are listed as skipped.

var (
	reCDITitle = regexp.MustCompile(`^\s*\((\d+)\)\s+(\S.*?)\s*$`)
	reCDIIface = regexp.MustCompile(`^\s*Interface\s*:\s*(.*?)\s*$`)
	reCDIWords = regexp.MustCompile(`^(\d{3}):((?:\s+[0-9A-Fa-f]{4}){1,10})(?:\s{2}.*)?$`)
)

func sniffCrystal(b []byte) bool {
	h := string(b[:min(len(b), 1<<20)])
	return strings.Contains(h, "-- IDENTIFY_DEVICE --") || regexp.MustCompile(`(?m)^000: [0-9A-F]{4}( [0-9A-F]{4}){9}`).MatchString(h)
}

type cdiDrive struct {
	name, iface string
	words       []uint16
	line        int
	open        bool
}

// ReadCrystalDiskInfo reads every IDENTIFY_DEVICE block of a CrystalDiskInfo
// report (or one block alone).
func ReadCrystalDiskInfo(r io.Reader) ([]Decoded, error) {
	const w = "CrystalDiskInfo"
	sc := bufio.NewScanner(io.LimitReader(r, maxInput))
	sc.Buffer(make([]byte, 0, 4096), 1<<20)
	var drives []*cdiDrive
	title, iface := "", ""
	var cur *cdiDrive
	n := 0
	for sc.Scan() {
		n++
		t := strings.TrimRight(sc.Text(), "\r")
		if m := reCDITitle.FindStringSubmatch(t); m != nil && !strings.Contains(t, ":") {
			title, iface = m[2], ""
			continue
		}
		if m := reCDIIface.FindStringSubmatch(t); m != nil {
			iface = m[1]
			continue
		}
		if strings.HasPrefix(t, "-- IDENTIFY_DEVICE") {
			cur = &cdiDrive{name: title, iface: iface, line: n, open: true}
			drives = append(drives, cur)
			continue
		}
		if strings.HasPrefix(t, "-- ") {
			cur = nil // the next section (SMART_READ_DATA, …)
			continue
		}
		m := reCDIWords.FindStringSubmatch(t)
		if m == nil {
			continue
		}
		if cur == nil {
			if len(drives) > 0 || m[1] != "000" {
				continue // another section's lines
			}
			cur = &cdiDrive{line: n, open: true} // a block pasted without its header
			drives = append(drives, cur)
		}
		off, _ := strconv.Atoi(m[1])
		if off != len(cur.words) {
			return nil, fmt.Errorf("%s line %d: word offset %d, but %d words read so far in this block (a line missing?)", w, n, off, len(cur.words))
		}
		for _, f := range strings.Fields(m[2]) {
			v, _ := strconv.ParseUint(f, 16, 16)
			cur.words = append(cur.words, uint16(v))
		}
		if len(cur.words) > 256 {
			return nil, fmt.Errorf("%s line %d: more than 256 words", w, n)
		}
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("%s line %d: %w", w, n+1, err)
	}
	if len(drives) == 0 {
		return nil, fmt.Errorf("%s: no IDENTIFY_DEVICE block (\"000: 0040 3FFF …\"): enable Function > Advanced Feature > Dump IDENTIFY_DEVICE? ", w)
	}
	var out []Decoded
	for _, d := range drives {
		name := d.name
		if strings.Contains(strings.ToLower(d.iface), "nvm express") || strings.Contains(strings.ToLower(d.iface), "nvme") {
			out = append(out, Decoded{Name: name, Skipped: "an NVMe drive: CrystalDiskInfo dumps only the first 512 bytes of Identify Controller, and the power states start at byte 2048 (use nvme id-ctrl or smartctl -a)"})
			continue
		}
		if len(d.words) != 256 && len(d.words) != 250 {
			return nil, fmt.Errorf("%s line %d: %s: %d words, want 256 (or 250 from older versions): cut short?", w, d.line, orUnnamed(name), len(d.words))
		}
		var words IdentifyWords
		copy(words[:], d.words)
		id := words.Decode()
		if len(d.words) == 250 {
			id.Checksum = "unknown"
			id.Notes = append(id.Notes, "CrystalDiskInfo printed words 0–249 only: no checksum (word 255)")
		}
		hidden := true
		for _, v := range words[idSerial : idSerial+10] {
			hidden = hidden && v == 0xffff
		}
		if hidden {
			id.Serial = ""
			id.Unknown = append(id.Unknown, "serial")
			id.Notes = append(id.Notes, "serial number hidden by CrystalDiskInfo (words 10–19 set to FFFFh)")
			if id.Checksum == "bad" {
				id.Checksum = "unknown"
				id.Notes = append(id.Notes, "checksum not checked: the hidden serial words changed the sum")
			}
		}
		out = append(out, Decoded{Name: name, Identify: &id})
	}
	return out, nil
}

func orUnnamed(s string) string {
	if s == "" {
		return "the IDENTIFY_DEVICE block"
	}
	return s
}
