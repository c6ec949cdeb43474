package alpm

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"regexp"
	"strconv"
	"strings"
)

// smartctl --identify (ataidentify.cpp ata_print_identify_data) prints the
// IDENTIFY DEVICE words as a table, one word a line, each followed by its
// set bits unless the option says "n" (--identify=wn):
//
//	=== ATA IDENTIFY DATA ===
//	Word     Bit     Value   Description
//	  78      -     0x056c   Serial ATA features supported
//	  78      8          1   Device Sleep feature supported
//	  10-19   -     .        Serial number (String)
//	  10-13   .     0x5335:5354:4e46:3057  "S5STNF0W"
//	  60-61   .     0xffff:0fff  (268435455)
//	 236-254  -     0x00...  Reserved
//
// A word that reads 0x0000 or 0xffff is not printed (unless "w" asks for
// every word); its bits are, when set. So a missing word is 0x0000, or
// 0xffff where its bits say so, and the words are the drive's exactly
// (word 255's checksum then holds). Word lines and bit lines that disagree
// are refused, naming the line.

// FormatSmartctlIdentify and FormatSmartctlJSON are the two further
// smartctl forms read.
const (
	FormatSmartctlIdentify = "smartctl --identify (ATA)"
	FormatSmartctlJSON     = "smartctl -j (ATA)"
)

var (
	reSIDHeader = regexp.MustCompile(`(?m)^Word\s+(Bit\s+)?Value\s+Description\s*$`)
	// word: "  78      -     0x056c   Desc" (bit level) or "  78      0x056c   Desc".
	reSIDWord = regexp.MustCompile(`^\s*(\d+)\s+(?:-\s+)?0x([0-9a-fA-F]{4})(?:\s|$)`)
	// a word range's header ("10-19   -     .        Serial number") or
	// an unset range ("236-254  -     0x00...  Reserved").
	reSIDRangeHead = regexp.MustCompile(`^\s*(\d+)-(\d+)\s+(?:-\s+)?(?:\.|0x([0-9a-fA-F]{2})\.\.\.)(?:\s|$)`)
	// a row of a range: "  10-13   .     0x5335:5354:4e46:3057  ..." or the
	// null rest "0x0000:0000:0000:00...".
	reSIDRangeRow = regexp.MustCompile(`^\s*(\d+)-(\d+)\s+(?:\.\s+)?0x([0-9a-fA-F]{4}(?::[0-9a-fA-F]{4})*)(:00\.\.\.)?(?:\s|$)`)
	// a bit or bit field: "  78      8          1   Desc", "  47     15:8     0x80   Desc".
	reSIDBit = regexp.MustCompile(`^\s*(\d+)\s+(\d+)(?::(\d+))?\s+(0x[0-9a-fA-F]+|[01])(?:\s|$)`)
)

func sniffSmartctlIdentify(b []byte) bool {
	h := b[:min(len(b), 1<<16)]
	return strings.Contains(string(h), "=== ATA IDENTIFY DATA ===") || reSIDHeader.Match(h)
}

// ReadSmartctlIdentify rebuilds the 256 IDENTIFY words from smartctl
// --identify output and decodes them.
func ReadSmartctlIdentify(r io.Reader) ([]Decoded, error) {
	words, err := smartctlIdentifyWords(r)
	if err != nil {
		return nil, err
	}
	return fromWords(words), nil
}

// sidWhat names smartctl --identify output in errors.
const sidWhat = "smartctl --identify"

func smartctlIdentifyWords(r io.Reader) (*IdentifyWords, error) {
	const w = sidWhat
	sc := bufio.NewScanner(io.LimitReader(r, maxInput))
	sc.Buffer(make([]byte, 0, 4096), 1<<20)
	var t sidTable
	n, inTable := 0, false
	for sc.Scan() {
		n++
		line := strings.TrimRight(sc.Text(), "\r")
		if !inTable {
			inTable = reSIDHeader.MatchString(line)
			continue
		}
		if strings.TrimSpace(line) == "" {
			continue
		}
		if strings.HasPrefix(line, "===") || strings.HasPrefix(line, "Error: ") {
			break // the next section, or smartctl's own table error
		}
		if err := t.line(n, line); err != nil {
			return nil, err
		}
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("%s line %d: %w", w, n+1, err)
	}
	if !inTable {
		return nil, fmt.Errorf("%s: no \"Word ... Value   Description\" header: give smartctl --identify output", w)
	}
	if t.rows == 0 {
		return nil, fmt.Errorf("%s: the table holds no word", w)
	}
	return t.resolve()
}

// sidTable is smartctl --identify's table as read so far: the words its
// word lines and range rows gave, and its bit lines.
type sidTable struct {
	words IdentifyWords
	seen  [256]bool // a word line or range row gave the word
	bits  []sidBit
	rows  int
}

// sidBit is a bit line: word's bits hi:lo read v (line n).
type sidBit struct {
	line, word, hi, lo int
	v                  uint64
}

// set takes word i = v from line, refusing a word an earlier line gave
// another value.
func (t *sidTable) set(line, i int, v uint16) error {
	if i > 255 {
		return fmt.Errorf("%s line %d: word %d (IDENTIFY has words 0–255)", sidWhat, line, i)
	}
	if t.seen[i] && t.words[i] != v {
		return fmt.Errorf("%s line %d: word %d reads 0x%04x, an earlier line 0x%04x", sidWhat, line, i, v, t.words[i])
	}
	t.words[i], t.seen[i] = v, true
	t.rows++
	return nil
}

// line reads table line n: a word range's row, a range's header, a word
// or a bit line.
func (t *sidTable) line(n int, line string) error {
	const w = sidWhat
	if m := reSIDRangeRow.FindStringSubmatch(line); m != nil {
		return t.rangeRow(n, m)
	}
	if m := reSIDRangeHead.FindStringSubmatch(line); m != nil {
		if m[3] != "" { // every word of the range reads 0x0000 (or 0xffff)
			a, _ := strconv.Atoi(m[1])
			z, _ := strconv.Atoi(m[2])
			if a > z || z > 255 {
				return fmt.Errorf("%s line %d: words %d-%d (IDENTIFY has words 0–255)", w, n, a, z)
			}
			v := uint16(0)
			if strings.EqualFold(m[3], "ff") {
				v = 0xffff
			}
			for i := a; i <= z; i++ {
				if err := t.set(n, i, v); err != nil {
					return err
				}
			}
		}
		return nil
	}
	if m := reSIDWord.FindStringSubmatch(line); m != nil {
		i, _ := strconv.Atoi(m[1])
		v, _ := strconv.ParseUint(m[2], 16, 16)
		return t.set(n, i, uint16(v))
	}
	if m := reSIDBit.FindStringSubmatch(line); m != nil {
		i, _ := strconv.Atoi(m[1])
		hi, _ := strconv.Atoi(m[2])
		lo := hi
		if m[3] != "" {
			lo, _ = strconv.Atoi(m[3])
		}
		s, base := m[4], 10
		if strings.HasPrefix(s, "0x") {
			s, base = s[2:], 16
		}
		v, err := strconv.ParseUint(s, base, 16)
		if i > 255 || hi > 15 || lo > hi || err != nil || v >= 1<<(hi-lo+1) {
			return fmt.Errorf("%s line %d: bit field %d %d:%d = %s does not fit a 16-bit word", w, n, i, hi, lo, m[4])
		}
		t.bits = append(t.bits, sidBit{n, i, hi, lo, v})
		return nil
	}
	return fmt.Errorf("%s line %d: %q is neither a word, a word range nor a bit line", w, n, clip(line, 60))
}

// rangeRow reads a row of a word range (m: reSIDRangeRow's match).
func (t *sidTable) rangeRow(n int, m []string) error {
	a, _ := strconv.Atoi(m[1])
	z, _ := strconv.Atoi(m[2])
	if a > z || z > 255 {
		return fmt.Errorf("%s line %d: words %d-%d (IDENTIFY has words 0–255)", sidWhat, n, a, z)
	}
	if m[4] != "" { // "0x0000:0000:0000:00...": the rest are null
		for i := a; i <= z; i++ {
			if err := t.set(n, i, 0); err != nil {
				return err
			}
		}
		return nil
	}
	vals := strings.Split(m[3], ":")
	if len(vals) != z-a+1 {
		return fmt.Errorf("%s line %d: words %d-%d with %d values", sidWhat, n, a, z, len(vals))
	}
	for k, s := range vals {
		v, _ := strconv.ParseUint(s, 16, 16)
		if err := t.set(n, a+k, uint16(v)); err != nil {
			return err
		}
	}
	return nil
}

// resolve checks the bit lines against the words: bits of printed words
// must agree with them; bits of words not printed (0x0000 or 0xffff)
// rebuild them.
func (t *sidTable) resolve() (*IdentifyWords, error) {
	var bitsSet [256]uint16
	for _, b := range t.bits {
		mask := uint16(1<<(b.hi-b.lo+1)-1) << b.lo
		if t.seen[b.word] {
			if got := (t.words[b.word] & mask) >> b.lo; uint64(got) != b.v {
				return nil, fmt.Errorf("%s line %d: word %d bits %d:%d read 0x%x, its word line 0x%04x", sidWhat, b.line, b.word, b.hi, b.lo, b.v, t.words[b.word])
			}
			continue
		}
		bitsSet[b.word] |= uint16(b.v<<b.lo) & mask
	}
	for i := range t.words {
		if !t.seen[i] && bitsSet[i] != 0 {
			// smartctl prints no word line only for 0x0000 and 0xffff
			t.words[i] = 0xffff
		}
	}
	return &t.words, nil
}

// smartctl -j of an ATA drive (ataprint.cpp's JSON keys): the identity
// only. smartctl 7.3 writes no IDENTIFY words to JSON, not even with
// --identify, so HIPM, DIPM and DevSlp are unknown, as in its text.
type smartctlATAJSON struct {
	Smartctl *struct {
		Version []int `json:"version"`
	} `json:"smartctl"`
	Device *struct {
		Protocol string `json:"protocol"`
	} `json:"device"`
	Model    *string `json:"model_name"`
	Serial   string  `json:"serial_number"`
	Firmware string  `json:"firmware_version"`
	ATA      *struct {
		String string `json:"string"`
	} `json:"ata_version"`
	NVMePS json.RawMessage `json:"nvme_power_states"`
}

func sniffSmartctlJSON(b []byte) bool {
	var j smartctlATAJSON
	if json.Unmarshal(b, &j) != nil || j.Smartctl == nil || j.NVMePS != nil {
		return false
	}
	return j.Device != nil && strings.EqualFold(j.Device.Protocol, "ATA") || j.ATA != nil
}

// ReadSmartctlJSON reads the identity of a SATA drive from smartctl -j.
func ReadSmartctlJSON(r io.Reader) ([]Decoded, error) {
	const w = "smartctl -j (ATA)"
	dec := json.NewDecoder(io.LimitReader(r, maxInput))
	var j smartctlATAJSON
	if err := dec.Decode(&j); err != nil {
		return nil, fmt.Errorf("%s at byte %d: %v", w, dec.InputOffset(), err)
	}
	if j.Smartctl == nil {
		return nil, fmt.Errorf("%s: no \"smartctl\" key: not smartctl's JSON", w)
	}
	if j.Device != nil && j.Device.Protocol != "" && !strings.EqualFold(j.Device.Protocol, "ATA") {
		return nil, fmt.Errorf("%s: device.protocol is %q, not ATA", w, j.Device.Protocol)
	}
	if j.Model == nil {
		return nil, fmt.Errorf("%s: no \"model_name\" key: give smartctl -j -i, -a or -x output (smartctl printed no identity)", w)
	}
	id := Identify{Model: printable(*j.Model), Serial: printable(j.Serial), Firmware: printable(j.Firmware), Checksum: "unknown"}
	id.Unknown = []string{"word76", "word78", "word79", "hipm", "dipm_supported", "dipm_enabled", "devslp_supported", "devslp_enabled"}
	id.Notes = []string{"smartctl's JSON carries no IDENTIFY words 76–79: HIPM, DIPM and DevSlp are unknown (smartctl --identify, hdparm -I or the sysfs id file carries them)"}
	return []Decoded{{Identify: &id}}, nil
}
