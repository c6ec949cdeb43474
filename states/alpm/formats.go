package alpm

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"strings"

	"github.com/idlewatt/idlewatt/states/hexdump"
)

// The inputs that carry a SATA drive's IDENTIFY DEVICE data (and, for
// hdparm -I, its DevSlp timings), registered here, one format per file
// (docs/states.md, "Formats"). Readers take an io.Reader.

// Format names.
const (
	FormatWords    = "IDENTIFY words (sysfs id, hdparm --Istdout)"
	FormatBinary   = "binary (512 bytes)"
	FormatDump     = "hex dump"
	FormatHdparm   = "hdparm -I"
	FormatCrystal  = "CrystalDiskInfo"
	FormatSmartctl = "smartctl (ATA)"
	FormatLogDump  = "log 30h page 08h hex dump"
)

// Decoded is what one source says of one drive.
type Decoded struct {
	// Name is the drive's title where the source holds several
	// (CrystalDiskInfo's "(03) Samsung SSD 870 QVO 4TB").
	Name     string    `json:"name,omitempty"`
	Identify *Identify `json:"identify,omitempty"`
	// LogPage is set when the source printed the DevSlp timings (hdparm -I
	// "Device Sleep:" section) or is the log page itself.
	LogPage *LogPage `json:"log_30h_08h,omitempty"`
	// Skipped says why a drive the source lists is not decoded (an NVMe
	// drive in a CrystalDiskInfo report).
	Skipped string `json:"skipped,omitempty"`
}

// IdentifyFormat is one way IDENTIFY data is written down.
type IdentifyFormat struct {
	Name    string
	Command string
	Sniff   func(b []byte) bool
	Read    func(r io.Reader) ([]Decoded, error)
}

// IdentifyFormats are tried in this order.
var IdentifyFormats = []IdentifyFormat{
	{FormatBinary, "hdparm --Iraw FILE, a 512-byte IDENTIFY image", isBinary, readBinary},
	{FormatSmartctlJSON, "smartctl -j -i / -a / -x (ATA)", sniffSmartctlJSON, ReadSmartctlJSON},
	{FormatCrystal, "CrystalDiskInfo Edit > Copy (IDENTIFY_DEVICE, 10 words a line)", sniffCrystal, ReadCrystalDiskInfo},
	{FormatHdparm, "hdparm -I", sniffHdparm, ReadHdparm},
	{FormatSmartctlIdentify, "smartctl --identify (any of its =w, =n, =v, =b forms)", sniffSmartctlIdentify, ReadSmartctlIdentify},
	{FormatSmartctl, "smartctl -a / -x / -i (ATA)", sniffSmartctlATA, ReadSmartctlATA},
	{FormatWords, "cat /sys/class/ata_device/devN.M/id, hdparm --Istdout", sniffWords, readWords},
	{FormatDump, "xxd, hexdump -C, od -A x -t x1 of the 512 bytes (IDENTIFY or log 30h/08h)", hexdump.Looks, readDump512},
}

// ErrUnknownFormat is returned (wrapped, with the list) when no format
// recognises an input.
var ErrUnknownFormat = errors.New("unknown format")

// FormatNames lists the formats for messages.
func FormatNames() string {
	var s []string
	for _, f := range IdentifyFormats {
		s = append(s, f.Name+" ("+f.Command+")")
	}
	return strings.Join(s, "; ")
}

// SniffIdentify returns the format b would be read as, or "".
func SniffIdentify(b []byte) string {
	for _, f := range IdentifyFormats {
		if f.Sniff(b) {
			return f.Name
		}
	}
	return ""
}

const maxInput = 4 << 20

// ParseIdentifyFile reads SATA IDENTIFY data in any registered format.
func ParseIdentifyFile(b []byte) ([]Decoded, string, error) {
	if len(b) > maxInput {
		return nil, "", fmt.Errorf("more than %d bytes: not a tool's output", maxInput)
	}
	for _, f := range IdentifyFormats {
		if f.Sniff(b) {
			d, err := f.Read(bytes.NewReader(b))
			return d, f.Name, err
		}
	}
	return nil, "", fmt.Errorf("SATA IDENTIFY: %w: it reads %s", ErrUnknownFormat, FormatNames())
}

func isBinary(b []byte) bool {
	for _, c := range b {
		if c < 0x20 && c != '\n' && c != '\r' && c != '\t' {
			return true
		}
	}
	return false
}

// WordsFromBytes reads 512 bytes as the 256 little-endian IDENTIFY words.
func WordsFromBytes(b []byte) (*IdentifyWords, error) {
	if len(b) != 512 {
		return nil, fmt.Errorf("%d bytes, want 512", len(b))
	}
	var w IdentifyWords
	for i := range w {
		w[i] = binary.LittleEndian.Uint16(b[2*i:])
	}
	return &w, nil
}

// Bytes is the inverse of WordsFromBytes.
func (w *IdentifyWords) Bytes() []byte {
	b := make([]byte, 512)
	for i, v := range w {
		binary.LittleEndian.PutUint16(b[2*i:], v)
	}
	return b
}

func fromWords(w *IdentifyWords) []Decoded {
	id := w.Decode()
	return []Decoded{{Identify: &id}}
}

func readBinary(r io.Reader) ([]Decoded, error) {
	b, err := io.ReadAll(io.LimitReader(r, maxInput))
	if err != nil {
		return nil, err
	}
	if len(b) == 512 && isLogPage(b) {
		return logPageDecoded(b)
	}
	w, err := WordsFromBytes(b)
	if err != nil {
		return nil, fmt.Errorf("IDENTIFY binary: %w", err)
	}
	return fromWords(w), nil
}

// isLogPage tells log 30h page 08h from IDENTIFY: its header is revision
// 0001h and page number 08h (ACS-3 §9.10.1), where IDENTIFY has word 1
// (obsolete cylinders, 3FFFh on most drives) and never 0801h there.
func isLogPage(b []byte) bool {
	return len(b) == 512 && b[0] == 1 && b[1] == 0 && b[2] == 8 && b[3] == 0
}

func logPageDecoded(b []byte) ([]Decoded, error) {
	lp, err := DecodeLogPage(b)
	if err != nil {
		return nil, fmt.Errorf("log 30h page 08h: %w", err)
	}
	return []Decoded{{LogPage: &lp}}, nil
}

func readDump512(r io.Reader) ([]Decoded, error) {
	d, err := hexdump.Parse(io.LimitReader(r, maxInput))
	if err != nil {
		return nil, fmt.Errorf("hex dump: %w", err)
	}
	if len(d.Bytes) != 512 {
		return nil, fmt.Errorf("%s: %d bytes, want 512 for IDENTIFY DEVICE or log 30h page 08h (truncated?)", d.Layout, len(d.Bytes))
	}
	if isLogPage(d.Bytes) {
		return logPageDecoded(d.Bytes)
	}
	w, _ := WordsFromBytes(d.Bytes)
	return fromWords(w), nil
}

// sniffWords: a line of exactly eight 4-digit hex words (the kernel's and
// hdparm's layout).
func sniffWords(b []byte) bool {
	for _, line := range strings.SplitN(string(b[:min(len(b), 4096)]), "\n", 16) {
		f := strings.Fields(line)
		if len(f) != 8 {
			continue
		}
		ok := true
		for _, t := range f {
			if _, good := hex16([]byte(t)); !good {
				ok = false
			}
		}
		if ok {
			return true
		}
	}
	return false
}

// readWords reads the 256 words; lines before the first line of words
// (hdparm prints "/dev/sda:" first) are skipped, as hdparm --Istdin does.
func readWords(r io.Reader) ([]Decoded, error) {
	b, err := io.ReadAll(io.LimitReader(r, maxInput))
	if err != nil {
		return nil, err
	}
	lines := strings.Split(string(b), "\n")
	skip := 0
	for skip < len(lines) {
		f := strings.Fields(lines[skip])
		if len(f) > 0 {
			if _, ok := hex16([]byte(f[0])); ok {
				break
			}
		}
		skip++
	}
	for i := range lines[:skip] {
		lines[i] = "" // kept as blank lines, so messages name the file's lines
	}
	w, err := ParseIdentify([]byte(strings.Join(lines, "\n")))
	if err != nil {
		return nil, fmt.Errorf("IDENTIFY words: %w", err)
	}
	return fromWords(w), nil
}
