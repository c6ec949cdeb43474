package ppk2

import (
	"bytes"
	"fmt"
	"math"
	"strconv"
	"strings"
)

// Ranges is the number of current-measurement ranges (shunt resistors).
const Ranges = 5

// Behaviour selects how metadata values the device reports as missing or
// zero are treated; the two published hosts differ.
type Behaviour int

const (
	// NordicApp (the default) lowercases keys, maps -nan to missing and
	// treats every 0 as missing, so "GS0: 0.0000" becomes the default 1.
	NordicApp Behaviour = iota
	// ZeroROnly replaces only R values of 0 with their defaults and keeps
	// every other value as sent (GS0: 0 stays 0).
	ZeroROnly
)

func (b Behaviour) String() string {
	if b == ZeroROnly {
		return "zero-r-only"
	}
	return "nordic"
}

// Calibration holds the per-range calibration the device reports in its
// metadata. Index is the range (0 = most sensitive, 4 = highest current).
type Calibration struct {
	R, GS, GI, O, S, I, UG [Ranges]float64
	VDD                    int // supply set-point in mV
	HW                     int
	Mode                   int // 1 = ampere meter, 2 = source meter
	IA                     int
	Calibrated             bool
}

// DefaultCalibration is what both hosts assume for keys that are absent.
func DefaultCalibration() Calibration {
	c := Calibration{
		R:   [Ranges]float64{1031.64, 101.65, 10.15, 0.94, 0.043},
		VDD: 3000,
	}
	for r := range Ranges {
		c.GS[r], c.GI[r], c.UG[r] = 1, 1, 1
	}
	return c
}

// Metadata is the parsed answer to GetMetadata.
type Metadata struct {
	Calibration
	// Warnings lists values replaced by defaults (line numbers are 1-based
	// within the metadata text).
	Warnings []string
	// Len is the number of bytes of the text through "END" and its line end;
	// sample words start there in a dump.
	Len int
}

// ErrNoEnd is wrapped by ParseMetadata when the text lacks the END marker.
var errNoEnd = fmt.Errorf("metadata has no END line")

// metaEnd returns the length of text through "END" plus an optional line
// end, or -1 if END has not arrived yet.
func metaEnd(text []byte) int {
	i := bytes.Index(text, []byte("END"))
	if i < 0 {
		return -1
	}
	n := i + 3
	if n < len(text) && text[n] == '\r' {
		n++
	}
	if n < len(text) && text[n] == '\n' {
		n++
	}
	return n
}

// ParseMetadata parses metadata text (which may be followed by sample words).
// Values that cannot be parsed are an error naming the line; values the
// behaviour treats as missing take their defaults and are listed in Warnings.
// A NaN or infinite value is missing in both behaviours: the second host
// would otherwise turn every sample into NaN.
func ParseMetadata(text []byte, b Behaviour) (Metadata, error) {
	end := metaEnd(text)
	if end < 0 {
		return Metadata{}, fmt.Errorf("ppk2: %w (read %d bytes)", errNoEnd, len(text))
	}
	m := Metadata{Calibration: DefaultCalibration(), Len: end}
	body := string(text[:bytes.Index(text, []byte("END"))])
	for ln, line := range strings.Split(body, "\n") {
		line = strings.TrimSpace(line)
		if line == "" {
			continue
		}
		k, v, ok := strings.Cut(line, ":")
		if !ok {
			m.Warnings = append(m.Warnings, fmt.Sprintf("line %d: %q is not Key: value; ignored", ln+1, line))
			continue
		}
		if err := m.set(strings.ToLower(strings.TrimSpace(k)), strings.TrimSpace(v), b, ln+1); err != nil {
			return Metadata{}, err
		}
	}
	return m, nil
}

func (m *Metadata) set(key, val string, b Behaviour, line int) error {
	lv := strings.ToLower(val)
	missing := strings.Contains(lv, "nan") || strings.Contains(lv, "inf")
	var x float64
	if !missing {
		var err error
		x, err = strconv.ParseFloat(val, 64)
		if err != nil {
			return fmt.Errorf("ppk2: metadata line %d: %s: %q is not a number", line, key, val)
		}
	}
	warn := func(why string) {
		m.Warnings = append(m.Warnings, fmt.Sprintf("line %d: %s: %q %s; default used", line, key, val, why))
	}
	switch key {
	case "vdd", "hw", "mode", "ia":
		if missing || (x == 0 && b == NordicApp) {
			warn("missing")
			return nil
		}
		if x < math.MinInt32 || x > math.MaxInt32 {
			return fmt.Errorf("ppk2: metadata line %d: %s: %q out of range", line, key, val)
		}
		switch key {
		case "vdd":
			m.VDD = int(x)
		case "hw":
			m.HW = int(x)
		case "mode":
			m.Mode = int(x)
		case "ia":
			m.IA = int(x)
		}
		return nil
	case "calibrated":
		m.Calibrated = !missing && x != 0
		return nil
	}
	// Indexed keys: letters then one range digit.
	if len(key) < 2 || key[len(key)-1] < '0' || key[len(key)-1] > '4' {
		return nil // unknown keys are allowed; newer firmware adds some
	}
	r := int(key[len(key)-1] - '0')
	var arr *[Ranges]float64
	switch key[:len(key)-1] {
	case "r":
		arr = &m.R
	case "gs":
		arr = &m.GS
	case "gi":
		arr = &m.GI
	case "o":
		arr = &m.O
	case "s":
		arr = &m.S
	case "i":
		arr = &m.I
	case "ug":
		arr = &m.UG
	default:
		return nil
	}
	isR := arr == &m.R
	switch {
	case missing:
		warn("is not finite")
	case x == 0 && (b == NordicApp || isR):
		if isR || arr[r] != 0 {
			warn("is zero")
		}
	default:
		arr[r] = x
	}
	return nil
}
