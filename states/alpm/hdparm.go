package alpm

import (
	"bufio"
	"fmt"
	"io"
	"regexp"
	"strconv"
	"strings"
)

// hdparm -I (identify.c, hdparm 9.x): the drive's identity, then under
// "Commands/features:" one line per supported feature, "*" in the first
// column when enabled (print_features). Words 76 (SATA capabilities) and
// 78 (SATA features supported) are printed bit by bit, every bit named
// ("unknown 76[7]" included), so both words are rebuilt exactly from the
// names; word 79 (enabled) is known only for the bits 78 sets, which is all
// DIPM and DevSlp need. Word 76 has no enable word: hdparm marks all of its
// bits "*". With DevSlp supported and log 30h page 08h readable and valid,
// hdparm adds
//
//	Device Sleep:
//		DEVSLP Exit Timeout (DETO): 30 ms (drive)
//		Minimum DEVSLP Assertion Time (MDAT): 10 ms (drive)
//
// printing 20 and 10 ms "(default)" for a zero field — but it labels MDAT
// with DETO's source (print_devslp_info: mdat … deto?"drive":"default"),
// so an MDAT of 10 ms labelled "drive" may be the default.

var hdparmSATABits = func() map[string][2]int {
	m := map[string][2]int{}
	w76 := []string{ // bit 15 … 0 (cap_sata0_str)
		"READ_LOG_DMA_EXT equivalent to READ_LOG_EXT", "Device automatic Partial to Slumber transitions",
		"Host automatic Partial to Slumber transitions", "NCQ priority information", "Idle-Unload when NCQ is active",
		"Phy event counters", "Host-initiated interface power management", "Native Command Queueing (NCQ)",
		"unknown 76[7]", "unknown 76[6]", "unknown 76[5]", "unknown 76[4]", "Gen3 signaling speed (6.0Gb/s)",
		"Gen2 signaling speed (3.0Gb/s)", "Gen1 signaling speed (1.5Gb/s)", "unknown 76[0]",
	}
	w78 := []string{ // bit 15 … 0 (feat_sata0_str)
		"unknown 78[15]", "unknown 78[14]", "unknown 78[13]", "unknown 78[12]", "unknown 78[11]", "unknown 78[10]",
		"unknown 78[9]", "Device Sleep (DEVSLP)", "unknown 78[7]", "Software settings preservation",
		"Asynchronous notification (eg. media change)", "In-order data delivery",
		"Device-initiated interface power management", "DMA Setup Auto-Activate optimization",
		"Non-Zero buffer offsets in DMA Setup FIS", "unknown 78[0]",
	}
	for i, s := range w76 {
		m[s] = [2]int{76, 15 - i}
	}
	for i, s := range w78 {
		m[s] = [2]int{78, 15 - i}
	}
	return m
}()

var (
	reHdparmFeature = regexp.MustCompile(`^\s+(\*?)\s+(\S.*?)\s*$`)
	reHdparmID      = regexp.MustCompile(`^\s*(Model Number|Serial Number|Firmware Revision):\s*(.*?)\s*$`)
	reHdparmDETO    = regexp.MustCompile(`DEVSLP Exit Timeout \(DETO\):\s*(\d+) ms \((drive|default)\)`)
	reHdparmMDAT    = regexp.MustCompile(`Minimum DEVSLP Assertion Time \(MDAT\):\s*(\d+) ms \((drive|default)\)`)
)

func sniffHdparm(b []byte) bool {
	h := string(b[:min(len(b), 1<<16)])
	return strings.Contains(h, "Commands/features:") || strings.Contains(h, "ATA device, with") ||
		(strings.Contains(h, "Model Number:") && strings.Contains(h, "Firmware Revision:"))
}

// ReadHdparm reads hdparm -I output for one drive.
func ReadHdparm(r io.Reader) ([]Decoded, error) {
	const w = "hdparm -I"
	sc := bufio.NewScanner(io.LimitReader(r, maxInput))
	sc.Buffer(make([]byte, 0, 4096), 1<<20)
	h := hdparmScan{ids: map[string]string{}, checksum: "unknown"}
	n := 0
	for sc.Scan() {
		n++
		if err := h.line(n, strings.TrimRight(sc.Text(), "\r")); err != nil {
			return nil, err
		}
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("%s line %d: %w", w, n+1, err)
	}
	if len(h.ids) == 0 && !h.sawFeatures {
		return nil, fmt.Errorf("%s: neither the identity (Model Number:) nor Commands/features: cut short?", w)
	}
	id := h.identify()
	d := Decoded{Identify: &id}
	switch {
	case h.deto != nil && h.mdat != nil:
		lp, err := hdparmLogPage(h.deto, h.mdat)
		if err != nil {
			return nil, fmt.Errorf("%s line %d: %w", w, h.detoLine, err)
		}
		d.LogPage = &lp
	case h.deto != nil || h.mdat != nil:
		return nil, fmt.Errorf("%s: the Device Sleep section has DETO or MDAT but not both (cut short?)", w)
	case id.DevSlpSupported:
		id.Notes = append(id.Notes, "hdparm printed no \"Device Sleep:\" section: log 30h page 08h was unreadable or its valid bit clear (or hdparm read the words from stdin)")
	}
	return []Decoded{d}, nil
}

// hdparmScan is what the lines of hdparm -I read so far say.
type hdparmScan struct {
	words                                 IdentifyWords
	en79                                  uint16
	ids                                   map[string]string
	inFeatures, sawFeatures, saw76, saw78 bool
	checksum                              string
	deto, mdat                            []string
	detoLine                              int
	drives                                int
}

// line reads line n, t: the identity, a feature, the Device Sleep
// section, the checksum.
func (h *hdparmScan) line(n int, t string) error {
	if strings.HasPrefix(t, "ATA device, with") || strings.HasPrefix(t, "ATAPI ") {
		h.drives++
		if h.drives > 1 {
			return fmt.Errorf("hdparm -I line %d: a second drive (give one drive's output per file)", n)
		}
	}
	if m := reHdparmID.FindStringSubmatch(t); m != nil && !h.inFeatures {
		h.ids[m[1]] = m[2]
		return nil
	}
	if strings.HasPrefix(t, "Commands/features:") {
		h.inFeatures, h.sawFeatures = true, true
		return nil
	}
	if h.inFeatures {
		if t != "" && t[0] != ' ' && t[0] != '\t' {
			h.inFeatures = false // "Security:" and the rest
		} else if m := reHdparmFeature.FindStringSubmatch(t); m != nil && m[2] != "Enabled\tSupported:" && !strings.HasPrefix(m[2], "Enabled") {
			h.feature(m[1] == "*", m[2])
			return nil
		}
	}
	if m := reHdparmDETO.FindStringSubmatch(t); m != nil {
		h.deto, h.detoLine = m, n
	}
	if m := reHdparmMDAT.FindStringSubmatch(t); m != nil {
		h.mdat = m
	}
	switch {
	case strings.HasPrefix(t, "Checksum: correct"):
		h.checksum = "ok"
	case strings.HasPrefix(t, "Checksum: incorrect"):
		h.checksum = "bad"
	case strings.HasPrefix(t, "Integrity word not set"):
		h.checksum = "absent"
	}
	return nil
}

// feature sets the word 76 or 78 bit a feature name stands for (and word
// 79's when enabled, "*").
func (h *hdparmScan) feature(enabled bool, name string) {
	wb, ok := hdparmSATABits[name]
	if !ok {
		return
	}
	if wb[0] == 76 {
		h.words[76] |= 1 << wb[1]
		h.saw76 = true
		return
	}
	h.words[78] |= 1 << wb[1]
	h.saw78 = true
	if enabled {
		h.en79 |= 1 << wb[1]
	}
}

// identify decodes the rebuilt words with the identity read, saying what
// is unknown and how the words were rebuilt.
func (h *hdparmScan) identify() Identify {
	h.words[79] = h.en79
	id := h.words.Decode()
	ids := h.ids
	id.Model, id.Serial, id.Firmware = printable(ids["Model Number"]), printable(ids["Serial Number"]), printable(ids["Firmware Revision"])
	for k, f := range map[string]string{"Model Number": "model", "Serial Number": "serial", "Firmware Revision": "firmware"} {
		if _, ok := ids[k]; !ok {
			id.Unknown = append(id.Unknown, f)
		}
	}
	id.Checksum = h.checksum
	if !h.sawFeatures {
		id.Unknown = append(id.Unknown, "word76", "word78", "word79", "hipm", "dipm_supported", "dipm_enabled", "devslp_supported", "devslp_enabled")
	} else {
		id.Notes = append(id.Notes, "words 76 and 78 rebuilt from the feature names hdparm -I lists, word 79 only where 78 is set")
		if !h.saw76 {
			id.Notes = append(id.Notes, "no word 76 feature listed: word 76 is 0000h or FFFFh (invalid)")
		}
		if !h.saw78 {
			id.Notes = append(id.Notes, "no word 78 feature listed: word 78 is 0000h or FFFFh (invalid)")
		}
	}
	return id
}

func hdparmLogPage(deto, mdat []string) (LogPage, error) {
	lp := LogPage{Available: true, Valid: true}
	dv, err1 := strconv.Atoi(deto[1])
	mv, err2 := strconv.Atoi(mdat[1])
	if err1 != nil || err2 != nil || dv > 255 || mv > 31 {
		return lp, fmt.Errorf("DETO %s ms / MDAT %s ms: beyond the 8-bit / 5-bit fields", deto[1], mdat[1])
	}
	lp.DETOms, lp.MDATms = dv, mv
	if deto[2] == "drive" {
		lp.DETOFrom = "drive"
	} else {
		lp.DETOFrom = "default (drive reports 0)"
		if dv != DefaultDETOms {
			return lp, fmt.Errorf("DETO %d ms labelled default, but hdparm's default is %d", dv, DefaultDETOms)
		}
	}
	// hdparm labels MDAT with DETO's source.
	switch {
	case mv == DefaultMDATms:
		lp.MDATFrom = "drive or default (hdparm labels MDAT with DETO's source; 10 ms is also the default for 0)"
	case mdat[2] == "drive":
		lp.MDATFrom = "drive"
	default:
		lp.MDATFrom = "drive (hdparm labels MDAT with DETO's source)"
	}
	return lp, nil
}

func printable(s string) string {
	b := []byte(strings.TrimSpace(s))
	for i, c := range b {
		if c < 0x20 || c > 0x7e {
			b[i] = '?'
		}
	}
	return string(b)
}
