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
	const w = "get-feature 0x0c text"
	b, err := io.ReadAll(io.LimitReader(r, maxInput))
	if err != nil {
		return nil, err
	}
	a := &APST{}
	var dw0 *uint64
	sel := ""
	sc := bufio.NewScanner(bytes.NewReader(b))
	n := 0
	var dump bytes.Buffer
	human := false
	var entries []APSTEntry
	cur := -1
	var haveT, haveS bool
	var apsteLine int
	for sc.Scan() {
		n++
		t := strings.TrimSpace(strings.TrimRight(sc.Text(), "\r"))
		if m := reFeatHead.FindStringSubmatch(t); m != nil {
			if dw0 != nil {
				return nil, fmt.Errorf("%s line %d: a second get-feature line (one feature per file)", w, n)
			}
			v, err := strconv.ParseUint(strings.TrimPrefix(strings.ToLower(m[3]), "0x"), 16, 32)
			if err != nil {
				return nil, fmt.Errorf("%s line %d: value %q is not hex", w, n, clip(m[3], 16))
			}
			dw0, sel = &v, strings.TrimSpace(m[2])
			continue
		}
		if m := reAPSTE.FindStringSubmatch(t); m != nil {
			human, apsteLine = true, n
			switch m[1] {
			case "Enabled":
				a.Enabled = new(true)
			case "Disabled":
				a.Enabled = new(false)
			default:
				return nil, fmt.Errorf("%s line %d: APSTE %q, want Enabled or Disabled", w, n, clip(m[1], 16))
			}
			continue
		}
		if m := reEntry.FindStringSubmatch(t); m != nil {
			i, _ := strconv.Atoi(m[1])
			if cur >= 0 && (!haveT || !haveS) {
				return nil, fmt.Errorf("%s line %d: entry %d lacks its ITPT or ITPS line", w, n, cur)
			}
			if i != len(entries) {
				return nil, fmt.Errorf("%s line %d: Entry[%d] where Entry[%d] belongs (entries missing or out of order)", w, n, i, len(entries))
			}
			entries = append(entries, APSTEntry{})
			cur, haveT, haveS = i, false, false
			continue
		}
		if m := reITPT.FindStringSubmatch(t); m != nil {
			if cur < 0 || haveT {
				return nil, fmt.Errorf("%s line %d: an ITPT line outside an Entry[ ] block", w, n)
			}
			v, err := strconv.ParseUint(m[1], 10, 32)
			if err != nil || v > MaxITPTms {
				return nil, fmt.Errorf("%s line %d: entry %d: ITPT %s ms is more than the 24-bit field holds", w, n, cur, clip(m[1], 12))
			}
			entries[cur].ITPTms, haveT = uint32(v), true
			continue
		}
		if m := reITPS.FindStringSubmatch(t); m != nil {
			if cur < 0 || haveS {
				return nil, fmt.Errorf("%s line %d: an ITPS line outside an Entry[ ] block", w, n)
			}
			v, err := strconv.Atoi(m[1])
			if err != nil || v > 31 {
				return nil, fmt.Errorf("%s line %d: entry %d: ITPS %s is not a power state 0–31", w, n, cur, clip(m[1], 12))
			}
			entries[cur].ITPS, haveS = v, true
			continue
		}
		if human {
			continue // "Auto PST Entries", the dotted rules
		}
		dump.WriteString(sc.Text())
		dump.WriteByte('\n')
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("%s line %d: %w", w, n+1, err)
	}
	if dw0 != nil {
		switch sel {
		case "Current":
			en := *dw0&1 == 1
			if a.Enabled != nil && *a.Enabled != en {
				return nil, fmt.Errorf("%s: the Current value %#x says APSTE %v, line %d says %v: not one output", w, *dw0, en, apsteLine, *a.Enabled)
			}
			a.Enabled = &en
		case "Supported capabilities":
			return nil, fmt.Errorf("%s: \"Supported capabilities\" (get-feature -s 3) holds no APST table: run it without -s", w)
		default:
			a.Enabled = nil // the Default or Saved value is not the state in force
			a.Selection = sel
		}
	}
	if human {
		if cur >= 0 && (!haveT || !haveS) {
			return nil, fmt.Errorf("%s: entry %d lacks its ITPT or ITPS line (cut short?)", w, cur)
		}
		if len(entries) != apstEntries {
			return nil, fmt.Errorf("%s: %d Auto PST entries, want %d (the output was cut or edited?)", w, len(entries), apstEntries)
		}
		a.Entries = entries
		return a, nil
	}
	d, err := hexdump.Parse(&dump)
	if err != nil {
		if dw0 != nil && err == hexdump.ErrNoData {
			return nil, fmt.Errorf("%s: the value line but no table (run get-feature with -H, or without -b)", w)
		}
		return nil, fmt.Errorf("%s: table: %w", w, err)
	}
	if len(d.Bytes) != APSTTableSize {
		return nil, fmt.Errorf("%s: table: %d bytes, want %d (cut short?)", w, len(d.Bytes), APSTTableSize)
	}
	a.Entries, _ = DecodeAPSTTable(d.Bytes)
	return a, nil
}
