package nvme

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"strconv"
	"strings"
)

// The inputs idlewatt reads in place of the admin ioctl, registered here,
// one format per file (docs/states.md, "Formats"). Each reader takes an
// io.Reader; Sniff looks at the first bytes only and decides nothing
// beyond "this is the format to try", so a file that sniffs as one format
// and fails is reported with that format's error, not another's.

// Format names, as messages and `states` print them.
const (
	FormatCLIText    = "nvme-cli id-ctrl text"
	FormatSmartctl   = "smartctl (NVMe)"
	FormatFeatureTxt = "nvme-cli get-feature text"
	FormatDump       = "hex dump"
)

// IdentifyFormat is one way Identify Controller data is written down.
type IdentifyFormat struct {
	Name    string
	Command string // the command that writes it
	Sniff   func(b []byte) bool
	Read    func(r io.Reader) (*Identify, error)
}

// APSTFormat is one way feature 0Ch (APST) is written down.
type APSTFormat struct {
	Name    string
	Command string
	Sniff   func(b []byte) bool
	Read    func(r io.Reader) (*APST, error)
}

// IdentifyFormats are tried in this order.
var IdentifyFormats = []IdentifyFormat{
	{FormatSmartctlJSON, "smartctl -j -a / -x / -c (NVMe)", sniffSmartctlJSON, readAll(DecodeSmartctlJSON)},
	{FormatJSON, "nvme id-ctrl -o json (nvme-cli 1.x and 2.x)", isJSON, readAll(DecodeIdentifyJSON)},
	{FormatBinary, "nvme id-ctrl -b (4096 bytes)", isBinary, readAll(DecodeIdentify)},
	{FormatCLIText, "nvme id-ctrl [-H]", sniffCLIText, ReadCLIText},
	{FormatSmartctl, "smartctl -a / -x / -c (NVMe)", sniffSmartctl, ReadSmartctl},
	{FormatDump, "xxd, hexdump -C, od -A x -t x1 of the 4096 bytes", sniffDump, readIdentifyDump},
}

// APSTFormats are tried in this order.
var APSTFormats = []APSTFormat{
	{FormatJSON, "nvme get-feature -f 0x0c -H -o json", isJSON, readAll(DecodeAPSTJSON)},
	{FormatBinary, "nvme get-feature -f 0x0c -b (256 bytes)", isBinary, readAll(decodeAPSTBinary)},
	{FormatFeatureTxt, "nvme get-feature -f 0x0c [-H]", sniffFeatureText, ReadFeatureText},
	{FormatDump, "xxd, hexdump -C, od -A x -t x1 of the 256 bytes", sniffDump, readAPSTDump},
}

// ErrUnknownFormat is returned (wrapped, with the list of formats) when no
// registered format recognises an input.
var ErrUnknownFormat = errors.New("unknown format")

func readAll[T any](f func([]byte) (T, error)) func(io.Reader) (T, error) {
	return func(r io.Reader) (T, error) {
		b, err := io.ReadAll(io.LimitReader(r, maxInput+1))
		if err != nil {
			var zero T
			return zero, err
		}
		if len(b) > maxInput {
			var zero T
			return zero, fmt.Errorf("more than %d bytes: not an nvme-cli or smartctl output", maxInput)
		}
		return f(b)
	}
}

// maxInput bounds any one input (a full `nvme id-ctrl -H -v` with the
// vendor area is under 100 kB).
const maxInput = 4 << 20

// isBinary: a control byte (not tab, CR, LF) anywhere: raw structures are
// full of NULs, text outputs have none.
func isBinary(b []byte) bool {
	for _, c := range b {
		if c < 0x20 && c != '\n' && c != '\r' && c != '\t' {
			return true
		}
	}
	return false
}

func decodeAPSTBinary(b []byte) (*APST, error) {
	e, err := DecodeAPSTTable(b)
	if err != nil {
		return nil, err
	}
	return &APST{Entries: e}, nil
}

// FormatNames lists the formats for messages.
func FormatNames[F IdentifyFormat | APSTFormat](fs []F) string {
	var s []string
	for _, f := range fs {
		switch f := any(f).(type) {
		case IdentifyFormat:
			s = append(s, f.Name+" ("+f.Command+")")
		case APSTFormat:
			s = append(s, f.Name+" ("+f.Command+")")
		}
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

// SniffAPST returns the APST format b would be read as, or "".
func SniffAPST(b []byte) string {
	for _, f := range APSTFormats {
		if f.Sniff(b) {
			return f.Name
		}
	}
	return ""
}

// ReadIdentify reads Identify Controller data in any registered format.
func ReadIdentify(r io.Reader) (*Identify, string, error) {
	b, err := io.ReadAll(io.LimitReader(r, maxInput+1))
	if err != nil {
		return nil, "", err
	}
	return ParseIdentify(b)
}

// ParseIdentify reads Identify Controller data in any registered format.
func ParseIdentify(b []byte) (*Identify, string, error) {
	for _, f := range IdentifyFormats {
		if f.Sniff(b) {
			id, err := f.Read(bytes.NewReader(b))
			return id, f.Name, err
		}
	}
	return nil, "", fmt.Errorf("identify controller: %w: it reads %s", ErrUnknownFormat, FormatNames(IdentifyFormats))
}

// ParseAPST reads feature 0Ch in any registered format. A table without its
// completion (binary, dump) leaves Enabled nil.
func ParseAPST(b []byte) (*APST, string, error) {
	for _, f := range APSTFormats {
		if f.Sniff(b) {
			a, err := f.Read(bytes.NewReader(b))
			return a, f.Name, err
		}
	}
	return nil, "", fmt.Errorf("feature 0x0c: %w: it reads %s", ErrUnknownFormat, FormatNames(APSTFormats))
}

// parseWatts reads a power as nvme-cli and smartctl print it:
// "%u.%02uW" (units of 0.01 W: scale 2) or "%u.%04uW" (0.0001 W: scale 1);
// "-" is not reported (scale 0), "reserved" / "?" the reserved scale 3.
func parseWatts(s string) (raw uint16, scale int, err error) {
	switch s {
	case "-":
		return 0, 0, nil
	case "reserved", "?":
		return 0, 3, nil
	}
	w, ok := strings.CutSuffix(s, "W")
	ip, fp, dot := strings.Cut(w, ".")
	if !ok || !dot || (len(fp) != 2 && len(fp) != 4) {
		return 0, 0, fmt.Errorf("%q is not a power like 6.50W or 0.0050W", clip(s, 16))
	}
	i, err1 := strconv.ParseUint(ip, 10, 32)
	f, err2 := strconv.ParseUint(fp, 10, 32)
	if err1 != nil || err2 != nil {
		return 0, 0, fmt.Errorf("%q is not a power like 6.50W or 0.0050W", clip(s, 16))
	}
	scale, unit := 2, uint64(100)
	if len(fp) == 4 {
		scale, unit = 1, 10000
	}
	v := i*unit + f
	if v > 0xffff {
		return 0, 0, fmt.Errorf("%q is more than a 16-bit power field holds at that scale", clip(s, 16))
	}
	return uint16(v), scale, nil
}
