package alpm

import (
	"fmt"
	"strings"
)

// IdentifyWords is the IDENTIFY DEVICE data: 256 little-endian words.
type IdentifyWords [256]uint16

// ParseIdentify parses /sys/class/ata_device/devX.Y/id: the 256 words as
// "%04x", separated by a space and a newline after every eighth
// (show_ata_dev_id in drivers/ata/libata-transport.c). Any white space is
// accepted between words; anything else is an error naming the line and
// word, so a truncated or corrupted file is never half-decoded.
func ParseIdentify(b []byte) (*IdentifyWords, error) {
	var w IdentifyWords
	n, line := 0, 1
	for i := 0; i < len(b); {
		c := b[i]
		if c == '\n' {
			line++
		}
		if c == ' ' || c == '\n' || c == '\t' || c == '\r' {
			i++
			continue
		}
		j := i
		for j < len(b) && b[j] != ' ' && b[j] != '\n' && b[j] != '\t' && b[j] != '\r' {
			j++
		}
		tok := b[i:j]
		if n == len(w) {
			return nil, fmt.Errorf("line %d: more than %d words", line, len(w))
		}
		v, ok := hex16(tok)
		if !ok {
			return nil, fmt.Errorf("line %d, word %d: %q is not a 4-digit hex word", line, n, clip(string(tok), 16))
		}
		w[n] = v
		n++
		i = j
	}
	if n != len(w) {
		return nil, fmt.Errorf("%d words, want %d (truncated?)", n, len(w))
	}
	return &w, nil
}

func hex16(t []byte) (uint16, bool) {
	if len(t) != 4 {
		return 0, false
	}
	var v uint16
	for _, c := range t {
		var d byte
		switch {
		case c >= '0' && c <= '9':
			d = c - '0'
		case c >= 'a' && c <= 'f':
			d = c - 'a' + 10
		case c >= 'A' && c <= 'F':
			d = c - 'A' + 10
		default:
			return 0, false
		}
		v = v<<4 | uint16(d)
	}
	return v, true
}

// Format renders w as the kernel does, for building sysfs trees.
func (w *IdentifyWords) Format() []byte {
	var sb strings.Builder
	for i, v := range w {
		sep := byte(' ')
		if (i+1)%8 == 0 {
			sep = '\n'
		}
		fmt.Fprintf(&sb, "%04x%c", v, sep)
	}
	return []byte(sb.String())
}

// IDENTIFY word numbers (ACS-3 §7.12.7; kernel include/linux/ata.h).
const (
	idSerial     = 10 // words 10–19, 20 characters
	idFirmware   = 23 // words 23–26, 8 characters
	idModel      = 27 // words 27–46, 40 characters
	idSATACaps   = 76 // ATA_ID_SATA_CAPABILITY
	idFeatSupp   = 78 // ATA_ID_FEATURE_SUPP
	idFeatEnable = 79
	idIntegrity  = 255

	w76HIPM        = 9  // host-initiated power management requests (ata_id_has_hipm)
	w76PhyEvents   = 10 // PHY event counters log
	w76HostAPS     = 13 // host automatic Partial to Slumber
	w76DeviceAPS   = 14 // device automatic Partial to Slumber
	w78DIPM        = 3  // device-initiated power management (ata_id_has_dipm)
	w78SSP         = 6  // software settings preservation
	w78DevSlp      = 8  // ATA_ID_FEATURE_SUPP bit 8 (ata_id_has_devslp)
	integritySig   = 0xa5
	integrityShift = 8
)

// Identify is the decoded part of IDENTIFY that link power management needs.
type Identify struct {
	Model    string `json:"model"`
	Serial   string `json:"serial"`
	Firmware string `json:"firmware"`

	Word76 Hex16 `json:"word76"`
	Word78 Hex16 `json:"word78"`
	Word79 Hex16 `json:"word79"`
	// Word76Valid and FeaturesValid are false when the word reads 0x0000 or
	// 0xffff: the kernel then treats HIPM, DIPM and DevSlp as absent
	// (ata_id_has_hipm, ata_id_has_dipm in include/linux/ata.h; hdparm
	// identify.c skips such words the same way).
	Word76Valid   bool `json:"word76_valid"`
	FeaturesValid bool `json:"word78_valid"`
	EnabledValid  bool `json:"word79_valid"`

	HIPM            bool `json:"hipm"`
	PhyEvents       bool `json:"phy_event_counters"`
	HostAutoSlumber bool `json:"host_auto_partial_to_slumber"`
	DevAutoSlumber  bool `json:"device_auto_partial_to_slumber"`
	DIPMSupported   bool `json:"dipm_supported"`
	DIPMEnabled     bool `json:"dipm_enabled"`
	DevSlpSupported bool `json:"devslp_supported"`
	DevSlpEnabled   bool `json:"devslp_enabled"`

	// Checksum is "ok", "bad" or "absent" (word 255: signature 0xa5 in
	// the low byte, and all 512 bytes summing to 0 mod 256, ACS-3 §7.12.7.91),
	// or "unknown" when the source does not carry word 255.
	Checksum string `json:"checksum"`

	// Unknown names the fields (JSON keys above) the source did not carry
	// (smartctl -a prints no IDENTIFY words): they read false and must not
	// be taken for the drive's. Empty for the raw words.
	Unknown []string `json:"unknown,omitempty"`
	// Notes say how the source's tool is known to differ from the words.
	Notes []string `json:"notes,omitempty"`
}

// Known reports whether field (a JSON key of Identify) came from the source.
func (id *Identify) Known(field string) bool {
	for _, u := range id.Unknown {
		if u == field {
			return false
		}
	}
	return true
}

func wordValid(v uint16) bool { return v != 0 && v != 0xffff }

// Decode extracts the link power management fields from w.
func (w *IdentifyWords) Decode() Identify {
	id := Identify{
		Serial:   w.ataString(idSerial, 10),
		Firmware: w.ataString(idFirmware, 4),
		Model:    w.ataString(idModel, 20),
		Word76:   Hex16(w[idSATACaps]), Word78: Hex16(w[idFeatSupp]), Word79: Hex16(w[idFeatEnable]),
	}
	if v := uint32(w[idSATACaps]); wordValid(w[idSATACaps]) {
		id.Word76Valid = true
		id.HIPM, id.PhyEvents = bit(v, w76HIPM), bit(v, w76PhyEvents)
		id.HostAutoSlumber, id.DevAutoSlumber = bit(v, w76HostAPS), bit(v, w76DeviceAPS)
	}
	if v := uint32(w[idFeatSupp]); wordValid(w[idFeatSupp]) {
		id.FeaturesValid = true
		id.DIPMSupported, id.DevSlpSupported = bit(v, w78DIPM), bit(v, w78DevSlp)
	}
	if v := uint32(w[idFeatEnable]); wordValid(w[idFeatEnable]) {
		id.EnabledValid = true
		id.DIPMEnabled, id.DevSlpEnabled = bit(v, w78DIPM), bit(v, w78DevSlp)
	}
	id.Checksum = w.checksum()
	return id
}

func (w *IdentifyWords) checksum() string {
	if w[idIntegrity]&0xff != integritySig {
		return "absent"
	}
	var sum byte
	for _, v := range w {
		sum += byte(v) + byte(v>>8)
	}
	if sum != 0 {
		return "bad"
	}
	return "ok"
}

// SetChecksum fills word 255 so the structure sums to zero, as a drive does.
func (w *IdentifyWords) SetChecksum() {
	w[idIntegrity] = integritySig
	var sum byte
	for _, v := range w[:idIntegrity] {
		sum += byte(v) + byte(v>>8)
	}
	sum += integritySig
	w[idIntegrity] |= uint16(-sum) << integrityShift
}

// ataString decodes an ATA string: each word holds two characters, the
// first in the high byte (hence "byte-swapped" when read as little-endian),
// padded with spaces. Bytes outside printable ASCII become '?', so a
// corrupted word cannot smuggle control characters into a terminal.
func (w *IdentifyWords) ataString(first, words int) string {
	b := make([]byte, 0, 2*words)
	for _, v := range w[first : first+words] {
		b = append(b, byte(v>>8), byte(v))
	}
	for len(b) > 0 && (b[len(b)-1] == 0 || b[len(b)-1] == ' ') {
		b = b[:len(b)-1]
	}
	for i, c := range b {
		if c < 0x20 || c > 0x7e {
			b[i] = '?'
		}
	}
	return strings.TrimSpace(string(b))
}

// putATAString stores s (space padded, truncated) as an ATA string.
func (w *IdentifyWords) putATAString(first, words int, s string) {
	b := []byte(fmt.Sprintf("%-*s", 2*words, s))[:2*words]
	for i := 0; i < words; i++ {
		w[first+i] = uint16(b[2*i])<<8 | uint16(b[2*i+1])
	}
}
