package nvme

import (
	"bufio"
	"bytes"
	"fmt"
	"io"
	"regexp"
	"strconv"
	"strings"

	"github.com/idlewatt/idlewatt/states/hexdump"
)

// nvme-cli's text get-feature -f 0x0c (nvme.c get_feature / stdout_feature_show):
//
//	get-feature:0x0c (Autonomous Power State Transition), Current value:0x00000001
//
// then, without -H, the 256-byte table as nvme-cli's hex dump (d() in
// nvme-print.c); with -H
//
//	Autonomous Power State Transition Enable (APSTE): Enabled
//	Auto PST Entries	.................
//	Entry[ 0]
//	.................
//	Idle Time Prior to Transition (ITPT): 100 ms
//	Idle Transition Power State   (ITPS): 3
//
// for the 32 entries. The value is Dword 0 of the completion, printed
// "%#0*x": "0x00000001", but "00000000" when zero (C's '#' adds no 0x to
// 0); nvme-cli 1.x printed six digits. Bit 0 is APSTE: the line carries the
// enable bit even without -H. Only the "Current" selection (the default)
// is the state in force; Default and Saved are read and said so, and
// "Supported capabilities" (sel 3) carries no table.

var (
	reFeatHead = regexp.MustCompile(`get-feature:\s*(0x0?c|0x000c|0xc)\b[^,]*,\s*([A-Za-z ]+?) value:\s*(0x[0-9a-fA-F]+|[0-9a-fA-F]+)`)
	reAPSTE    = regexp.MustCompile(`Autonomous Power State Transition Enable \(APSTE\):\s*(\S+)`)
	reEntry    = regexp.MustCompile(`^Entry\[\s*(\d+)\]`)
	reITPT     = regexp.MustCompile(`^Idle Time Prior to Transition \(ITPT\):\s*(\d+)\s*ms$`)
	reITPS     = regexp.MustCompile(`^Idle Transition Power State\s+\(ITPS\):\s*(\d+)$`)
)

func sniffFeatureText(b []byte) bool {
	h := b[:min(len(b), 1<<14)]
	return reFeatHead.Match(h) || reAPSTE.Match(h)
}

// ReadFeatureText reads nvme-cli's text get-feature -f 0x0c output, with or
// without -H.
func ReadFeatureText(r io.Reader) (*APST, error) {
	b, err := io.ReadAll(io.LimitReader(r, maxInput))
	if err != nil {
		return nil, err
	}
	f := featScan{a: &APST{}, cur: -1}
	sc := bufio.NewScanner(bytes.NewReader(b))
	n := 0
	for sc.Scan() {
		n++
		if err := f.line(n, sc.Text()); err != nil {
			return nil, err
		}
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("%s line %d: %w", featWhat, n+1, err)
	}
	if err := f.selection(); err != nil {
		return nil, err
	}
	if f.human {
		if f.cur >= 0 && (!f.haveT || !f.haveS) {
			return nil, fmt.Errorf("%s: entry %d lacks its ITPT or ITPS line (cut short?)", featWhat, f.cur)
		}
		if len(f.entries) != apstEntries {
			return nil, fmt.Errorf("%s: %d Auto PST entries, want %d (the output was cut or edited?)", featWhat, len(f.entries), apstEntries)
		}
		f.a.Entries = f.entries
		return f.a, nil
	}
	if err := f.table(); err != nil {
		return nil, err
	}
	return f.a, nil
}

// featWhat names get-feature text in errors.
const featWhat = "get-feature 0x0c text"

// featScan is what the lines of get-feature text read so far say: the
// value line (Dword 0 and the selection), APSTE and the entries with -H,
// the hex dump's lines without.
type featScan struct {
	a            *APST
	dw0          *uint64
	sel          string
	dump         bytes.Buffer
	human        bool // -H output
	entries      []APSTEntry
	cur          int // the entry being read, -1 before the first
	haveT, haveS bool
	apsteLine    int
}

// line reads line n: the value line, APSTE, an entry's lines, or (without
// -H) a line of the hex dump.
func (f *featScan) line(n int, raw string) error {
	const w = featWhat
	t := strings.TrimSpace(strings.TrimRight(raw, "\r"))
	if m := reFeatHead.FindStringSubmatch(t); m != nil {
		if f.dw0 != nil {
			return fmt.Errorf("%s line %d: a second get-feature line (one feature per file)", w, n)
		}
		v, err := strconv.ParseUint(strings.TrimPrefix(strings.ToLower(m[3]), "0x"), 16, 32)
		if err != nil {
			return fmt.Errorf("%s line %d: value %q is not hex", w, n, clip(m[3], 16))
		}
		f.dw0, f.sel = &v, strings.TrimSpace(m[2])
		return nil
	}
	if m := reAPSTE.FindStringSubmatch(t); m != nil {
		f.human, f.apsteLine = true, n
		switch m[1] {
		case "Enabled":
			f.a.Enabled = new(true)
		case "Disabled":
			f.a.Enabled = new(false)
		default:
			return fmt.Errorf("%s line %d: APSTE %q, want Enabled or Disabled", w, n, clip(m[1], 16))
		}
		return nil
	}
	if ok, err := f.entryLine(n, t); ok || err != nil {
		return err
	}
	if f.human {
		return nil // "Auto PST Entries", the dotted rules
	}
	f.dump.WriteString(raw)
	f.dump.WriteByte('\n')
	return nil
}

// entryLine reads an Entry[ ] line or an entry's ITPT or ITPS line; ok is
// false when t is none of them.
func (f *featScan) entryLine(n int, t string) (ok bool, err error) {
	const w = featWhat
	if m := reEntry.FindStringSubmatch(t); m != nil {
		i, _ := strconv.Atoi(m[1])
		if f.cur >= 0 && (!f.haveT || !f.haveS) {
			return true, fmt.Errorf("%s line %d: entry %d lacks its ITPT or ITPS line", w, n, f.cur)
		}
		if i != len(f.entries) {
			return true, fmt.Errorf("%s line %d: Entry[%d] where Entry[%d] belongs (entries missing or out of order)", w, n, i, len(f.entries))
		}
		f.entries = append(f.entries, APSTEntry{})
		f.cur, f.haveT, f.haveS = i, false, false
		return true, nil
	}
	if m := reITPT.FindStringSubmatch(t); m != nil {
		if f.cur < 0 || f.haveT {
			return true, fmt.Errorf("%s line %d: an ITPT line outside an Entry[ ] block", w, n)
		}
		v, err := strconv.ParseUint(m[1], 10, 32)
		if err != nil || v > MaxITPTms {
			return true, fmt.Errorf("%s line %d: entry %d: ITPT %s ms is more than the 24-bit field holds", w, n, f.cur, clip(m[1], 12))
		}
		f.entries[f.cur].ITPTms, f.haveT = uint32(v), true
		return true, nil
	}
	if m := reITPS.FindStringSubmatch(t); m != nil {
		if f.cur < 0 || f.haveS {
			return true, fmt.Errorf("%s line %d: an ITPS line outside an Entry[ ] block", w, n)
		}
		v, err := strconv.Atoi(m[1])
		if err != nil || v > 31 {
			return true, fmt.Errorf("%s line %d: entry %d: ITPS %s is not a power state 0–31", w, n, f.cur, clip(m[1], 12))
		}
		f.entries[f.cur].ITPS, f.haveS = v, true
		return true, nil
	}
	return false, nil
}

// selection applies the value line: the Current value's APSTE bit (which
// must agree with an APSTE line), or the Default or Saved selection, which
// is not the state in force.
func (f *featScan) selection() error {
	if f.dw0 == nil {
		return nil
	}
	a := f.a
	switch f.sel {
	case "Current":
		en := *f.dw0&1 == 1
		if a.Enabled != nil && *a.Enabled != en {
			return fmt.Errorf("%s: the Current value %#x says APSTE %v, line %d says %v: not one output", featWhat, *f.dw0, en, f.apsteLine, *a.Enabled)
		}
		a.Enabled = &en
	case "Supported capabilities":
		return fmt.Errorf("%s: \"Supported capabilities\" (get-feature -s 3) holds no APST table: run it without -s", featWhat)
	default:
		a.Enabled = nil // the Default or Saved value is not the state in force
		a.Selection = f.sel
	}
	return nil
}

// table decodes the hex dump of the 256-byte table into f.a.Entries.
func (f *featScan) table() error {
	d, err := hexdump.Parse(&f.dump)
	if err != nil {
		if f.dw0 != nil && err == hexdump.ErrNoData {
			return fmt.Errorf("%s: the value line but no table (run get-feature with -H, or without -b)", featWhat)
		}
		return fmt.Errorf("%s: table: %w", featWhat, err)
	}
	if len(d.Bytes) != APSTTableSize {
		return fmt.Errorf("%s: table: %d bytes, want %d (cut short?)", featWhat, len(d.Bytes), APSTTableSize)
	}
	f.a.Entries, _ = DecodeAPSTTable(d.Bytes)
	return nil
}
