package hexdump

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"strconv"
	"strings"
)

// MaxBytes bounds what Parse reads: the largest structure idlewatt decodes
// is 4096 bytes; a repeat marker cannot expand a dump beyond this.
const MaxBytes = 1 << 16

// Layout names the dialect a dump was written in, for messages.
type Layout string

const (
	LayoutXXD     Layout = "xxd"
	LayoutHexdump Layout = "hexdump -C"
	LayoutOD      Layout = "od -A x -t x1"
	LayoutODOctal Layout = "od -t x1"
	LayoutNVMeCLI Layout = "nvme-cli hex dump"
	LayoutOffset  Layout = "hex dump with offsets"
	LayoutPlain   Layout = "hex bytes"
)

// ErrNoData means no line of the input held hex bytes.
var ErrNoData = errors.New("no hex bytes found")

// Dump is what Parse read.
type Dump struct {
	Bytes  []byte
	Layout Layout
	// Lines is the number of input lines read (for messages).
	Lines int
}

type state struct {
	out      []byte
	last     []byte // the previous data line's bytes, for "*"
	repeat   bool   // a "*" line is pending
	started  bool
	octal    int // 0 unknown, 1 octal offsets, -1 hex
	layout   Layout
	sawStar  bool
	endSeen  bool
	lineNo   int
	hadColon bool
}

// Parse reads a dump from r.
func Parse(r io.Reader) (*Dump, error) {
	st := &state{}
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 0, 4096), 1<<20)
	for sc.Scan() {
		st.lineNo++
		if err := st.line(sc.Text()); err != nil {
			return nil, fmt.Errorf("line %d: %w", st.lineNo, err)
		}
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("line %d: %w", st.lineNo+1, err)
	}
	if st.repeat {
		return nil, fmt.Errorf("line %d: a \"*\" (repeated lines) with no offset after it to say how many", st.lineNo)
	}
	if len(st.out) == 0 {
		return nil, ErrNoData
	}
	if st.layout == "" {
		st.layout = LayoutPlain
	}
	return &Dump{Bytes: st.out, Layout: st.layout, Lines: st.lineNo}, nil
}

func isHex(s string) bool {
	if s == "" {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		if !(c >= '0' && c <= '9' || c >= 'a' && c <= 'f' || c >= 'A' && c <= 'F') {
			return false
		}
	}
	return true
}

// nvmeHeader is nvme-cli's column header: "0  1  2 … f".
func nvmeHeader(f []string) bool {
	if len(f) != 16 {
		return false
	}
	for i, s := range f {
		if s != strconv.FormatInt(int64(i), 16) {
			return false
		}
	}
	return true
}

func (st *state) line(raw string) error {
	s := strings.TrimRight(raw, "\r")
	t := strings.TrimSpace(s)
	if t == "" || t[0] == '#' {
		return nil
	}
	if t == "*" {
		if !st.started {
			return errors.New(`"*" (repeated lines) before any data`)
		}
		st.repeat, st.sawStar = true, true
		return nil
	}
	if st.endSeen {
		return fmt.Errorf("%q after the final offset", clip(t, 24))
	}
	offTok, colon, rest, hexArea := splitLine(t)
	fields := strings.Fields(hexArea)
	if nvmeHeader(fields) && offTok == "" {
		st.layout = LayoutNVMeCLI
		return nil
	}
	bs, bad, words := hexBytes(fields)
	if bad != "" || (len(bs) == 0 && offTok == "") {
		if !st.started {
			return nil // a command line or banner before the dump
		}
		if bad == "" {
			bad = t
		}
		return fmt.Errorf("%q is not a hex byte", clip(bad, 24))
	}
	if words && !colon {
		return fmt.Errorf("%q is a %d-digit group without a colon offset: od -x and hexdump without -C print 16-bit words in host byte order; dump with xxd, hexdump -C or od -A x -t x1", clip(firstLong(fields), 12), len(firstLong(fields)))
	}
	if offTok != "" {
		if err := st.at(offTok, colon); err != nil {
			return err
		}
		if len(bs) == 0 {
			st.endSeen = true // hexdump -C / od end with the total
			return nil
		}
		st.setLayout(offTok, colon, words, rest)
	} else {
		if st.repeat {
			return errors.New(`"*" (repeated lines) followed by a line without an offset`)
		}
		if st.started && st.hadColon {
			return errors.New("a line without an offset among lines with offsets")
		}
	}
	st.hadColon = st.hadColon || offTok != ""
	if len(st.out)+len(bs) > MaxBytes {
		return fmt.Errorf("more than %d bytes", MaxBytes)
	}
	st.out = append(st.out, bs...)
	st.last = bs
	st.started = true
	return nil
}

// splitLine splits a dump line t into its offset token (colon: written
// "xxxx:"), what follows the offset, and of that the hex area (the text
// column cut off).
func splitLine(t string) (offTok string, colon bool, rest, hexArea string) {
	// The offset: a first token ending in ':' (xxd, nvme-cli, smartctl), or
	// a bare 6–8 digit token (hexdump -C, od).
	first := t
	if i := strings.IndexAny(t, " \t"); i >= 0 {
		first = t[:i]
	}
	rest = strings.TrimLeft(t[len(first):], " \t")
	switch {
	case strings.HasSuffix(first, ":") && isHex(strings.TrimSuffix(first, ":")):
		offTok, colon = strings.TrimSuffix(first, ":"), true
	case len(first) >= 6 && len(first) <= 8 && isHex(first):
		offTok = first
	default:
		rest = t
	}
	// Cut the text column.
	hexArea = rest
	if colon {
		// xxd's text column follows two spaces; nvme-cli's and smartctl's a
		// delimiter. The hex area itself never holds two spaces in a row
		// after a colon offset.
		if i := strings.Index(hexArea, "  "); i >= 0 {
			hexArea = hexArea[:i]
		}
	}
	if i := strings.IndexAny(hexArea, "|\">"); i >= 0 {
		hexArea = hexArea[:i]
	}
	return offTok, colon, rest, hexArea
}

// hexBytes reads the hex groups of a line (1 to 4 bytes each): the bytes,
// the first field that is not such a group (bad), and whether any group
// held more than one byte (words).
func hexBytes(fields []string) (bs []byte, bad string, words bool) {
	for _, f := range fields {
		if !isHex(f) || len(f)%2 != 0 || len(f) > 8 {
			return bs, f, words
		}
		if len(f) > 2 {
			words = true
		}
		for i := 0; i < len(f); i += 2 {
			v, _ := strconv.ParseUint(f[i:i+2], 16, 8)
			bs = append(bs, byte(v))
		}
	}
	return bs, "", words
}

// at checks a line's offset token against the bytes read so far, filling
// in the lines a "*" stood for first.
func (st *state) at(offTok string, colon bool) error {
	off, err := st.offset(offTok, colon)
	if err != nil {
		return err
	}
	if st.repeat {
		if len(st.last) == 0 || off < len(st.out) || (off-len(st.out))%len(st.last) != 0 {
			return fmt.Errorf("offset %#x after \"*\" is not a whole number of %d-byte lines past %#x", off, len(st.last), len(st.out))
		}
		if off > MaxBytes {
			return fmt.Errorf("offset %#x: more than %d bytes", off, MaxBytes)
		}
		for len(st.out) < off {
			st.out = append(st.out, st.last...)
		}
		st.repeat = false
	}
	if off != len(st.out) {
		return fmt.Errorf("offset %#x, but %#x bytes read so far (a line missing?)", off, len(st.out))
	}
	return nil
}

func firstLong(f []string) string {
	for _, s := range f {
		if len(s) > 2 {
			return s
		}
	}
	return ""
}

func (st *state) offset(tok string, colon bool) (int, error) {
	if len(tok) > 8 {
		return 0, fmt.Errorf("offset %q is too long", clip(tok, 12))
	}
	if !colon && len(tok) == 7 {
		// od's default: octal offsets, 7 digits.
		v, err := strconv.ParseUint(tok, 8, 32)
		if err != nil {
			return 0, fmt.Errorf("offset %q is not octal (od -t x1 prints octal offsets; use od -A x for hex)", tok)
		}
		return int(v), nil
	}
	v, err := strconv.ParseUint(tok, 16, 32)
	if err != nil {
		return 0, fmt.Errorf("offset %q is not hex", clip(tok, 12))
	}
	return int(v), nil
}

func (st *state) setLayout(tok string, colon, words bool, rest string) {
	if st.layout != "" && st.layout != LayoutNVMeCLI {
		return
	}
	switch {
	case st.layout == LayoutNVMeCLI:
	case colon && len(tok) == 8:
		st.layout = LayoutXXD
	case colon && len(tok) == 4 && strings.Contains(rest, "\""):
		st.layout = LayoutNVMeCLI
	case colon:
		st.layout = LayoutOffset
	case len(tok) == 8:
		st.layout = LayoutHexdump
	case len(tok) == 7:
		st.layout = LayoutODOctal
	default:
		st.layout = LayoutOD
	}
}

func clip(s string, n int) string {
	if len(s) > n {
		return s[:n] + "…"
	}
	return s
}

// Looks reports whether b starts like a dump Parse reads: within its first
// lines, one whose first token is an offset followed by hex bytes. Bare
// hex bytes without offsets count only when a whole line is 8–32 two-digit
// bytes, so prose and tables are not taken for dumps.
func Looks(b []byte) bool {
	n := 0
	for _, line := range strings.SplitN(string(b[:min(len(b), 8192)]), "\n", 64) {
		n++
		t := strings.TrimSpace(strings.TrimRight(line, "\r"))
		f := strings.Fields(t)
		if len(f) < 2 {
			continue
		}
		off := strings.TrimSuffix(f[0], ":")
		data := f[1:]
		if !isHex(off) || (len(off) < 4 && !strings.HasSuffix(f[0], ":")) {
			// no offset: a line of bare bytes
			if len(f) >= 8 && len(f) <= 32 && allBytes(f) {
				return true
			}
			continue
		}
		k := 0
		for _, d := range data {
			if !isHex(d) || len(d)%2 != 0 || len(d) > 8 {
				break
			}
			k++
		}
		if k >= 2 {
			return true
		}
	}
	return false
}

func allBytes(f []string) bool {
	for _, s := range f {
		if len(s) != 2 || !isHex(s) {
			return false
		}
	}
	return true
}
