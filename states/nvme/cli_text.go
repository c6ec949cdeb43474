package nvme

import (
	"bufio"
	"fmt"
	"io"
	"regexp"
	"strconv"
	"strings"

	"github.com/idlewatt/idlewatt/states/alpm"
)

// nvme-cli's text id-ctrl (stdout_id_ctrl / nvme_show_id_ctrl in
// nvme-print[-stdout].c, 0.x–2.x): "key : value" lines, then per power
// state
//
//	ps    0 : mp:6.50W operational enlat:5 exlat:5 rrt:0 rrl:0
//	          rwt:0 rwl:0 idle_power:- active_power:-
//	          active_power_workload:-            (2.4+)
//	          emergency power fail recovery time: -   (2.11+)
//
// "ps %4d" before 2.4, "ps   %4d" after; -H adds "[b:a] : …" lines that
// are skipped. A power prints as %u.%02uW (0.01 W units) or %u.%04uW
// (0.0001 W units, MXPS set), so the raw field and its scale are exact.
// Pasted fragments are read too: only the ps lines, or lines run together
// on one line; what the fragment lacks is listed in Identify.Unknown.

var (
	reCLIKey = regexp.MustCompile(`^([a-z][a-z0-9_]*)\s*:\s?(.*)$`)
	rePSLine = regexp.MustCompile(`^ps\s+(\d+)\s*:\s*(.*)$`)
	rePSKV   = regexp.MustCompile(`([a-z_]+):(\S+)`)
)

func sniffCLIText(b []byte) bool {
	h := string(b[:min(len(b), 1<<16)])
	return strings.Contains(h, "NVME Identify Controller") || regexp.MustCompile(`(?m)^\s*(> ?)*ps\s+\d+\s*:\s*mp:`).MatchString(h)
}

type psText struct {
	line   int
	fields map[string]string
	op     string // "operational" / "non-operational"

	unknownWorkload bool
}

// cliWhat names id-ctrl text in errors.
const cliWhat = "id-ctrl text"

// ReadCLIText reads nvme-cli's text id-ctrl output (with or without -H).
func ReadCLIText(r io.Reader) (*Identify, error) {
	h, states, err := scanCLIText(r)
	if err != nil {
		return nil, err
	}
	return h.identify(states)
}

// cliHead is id-ctrl text's "key : value" lines (the first of each key)
// and the line each is on.
type cliHead struct {
	val  map[string]string
	line map[string]int
}

// scanCLIText reads the lines: the "key : value" head and the power
// states' lines (quotes stripped, -H's "[b:a]" lines skipped).
func scanCLIText(r io.Reader) (cliHead, []*psText, error) {
	const w = cliWhat
	sc := bufio.NewScanner(io.LimitReader(r, maxInput))
	sc.Buffer(make([]byte, 0, 4096), 1<<20)
	head := cliHead{val: map[string]string{}, line: map[string]int{}}
	var states []*psText
	var cur *psText
	n := 0
	for sc.Scan() {
		n++
		raw := strings.TrimRight(sc.Text(), "\r")
		// Mail and forum quotes ("> > ps 0 : …") are stripped.
		t := strings.TrimLeft(raw, " \t")
		for strings.HasPrefix(t, ">") {
			t = strings.TrimLeft(t[1:], " \t")
		}
		if m := rePSLine.FindStringSubmatch(t); m != nil {
			i, _ := strconv.Atoi(m[1])
			if i != len(states) {
				return head, nil, fmt.Errorf("%s line %d: ps %d after %d power states (want ps %d)", w, n, i, len(states), len(states))
			}
			cur = &psText{line: n, fields: map[string]string{}}
			states = append(states, cur)
			if err := cur.add(m[2], w, n); err != nil {
				return head, nil, err
			}
			continue
		}
		indented := len(raw) > 0 && (raw[0] == ' ' || raw[0] == '\t')
		if cur != nil && (indented || strings.Contains(t, "rwt:")) && t != "" && !strings.HasPrefix(t, "[") {
			if err := cur.add(t, w, n); err != nil {
				return head, nil, err
			}
			continue
		}
		if t == "" || strings.HasPrefix(t, "[") {
			continue
		}
		cur = nil
		if m := reCLIKey.FindStringSubmatch(raw); m != nil {
			if _, dup := head.val[m[1]]; !dup {
				head.val[m[1]], head.line[m[1]] = m[2], n
			}
		}
	}
	if err := sc.Err(); err != nil {
		return head, nil, fmt.Errorf("%s line %d: %w", w, n+1, err)
	}
	if len(states) == 0 {
		return head, nil, fmt.Errorf("%s: no power state lines (\"ps    0 : mp:…\"): the output was cut before them?", w)
	}
	return head, states, nil
}

// num reads key's number (at most max); ok is false, and key listed in
// id.Unknown, when the head lacks it.
func (h cliHead) num(id *Identify, key string, max uint64) (uint64, bool, error) {
	v, ok := h.val[key]
	if !ok {
		id.Unknown = append(id.Unknown, key)
		return 0, false, nil
	}
	s := strings.TrimSpace(v)
	if i := strings.IndexAny(s, " \t"); i >= 0 {
		s = s[:i]
	}
	x, err := parseCLINumber(s)
	if err != nil || x > max {
		return 0, false, fmt.Errorf("%s line %d: %s %q is not a number from 0 to %d", cliWhat, h.line[key], key, clip(v, 16), max)
	}
	return x, true, nil
}

// identify builds the Identify from the head and the power states.
func (h cliHead) identify(states []*psText) (*Identify, error) {
	const w = cliWhat
	id := &Identify{}
	vid, _, err := h.num(id, "vid", 0xffff)
	if err != nil {
		return nil, err
	}
	ssvid, _, err := h.num(id, "ssvid", 0xffff)
	if err != nil {
		return nil, err
	}
	id.VID, id.SSVID = alpm.Hex16(vid), alpm.Hex16(ssvid)
	for _, f := range []struct {
		key, field string
		dst        *string
	}{{"sn", "serial", &id.Serial}, {"mn", "model", &id.Model}, {"fr", "firmware", &id.Firmware}} {
		v, ok := h.val[f.key]
		if !ok {
			id.Unknown = append(id.Unknown, f.field)
			continue
		}
		*f.dst = idString([]byte(v)) // leading spaces are the drive's, as in the binary
	}
	npss, haveNPSS, err := h.num(id, "npss", 255)
	if err != nil {
		return nil, err
	}
	switch {
	case !haveNPSS:
		npss = uint64(len(states) - 1)
	case npss >= maxStates:
		return nil, fmt.Errorf("%s line %d: npss %d: more than the %d power states Identify Controller holds", w, h.line["npss"], npss, maxStates)
	case int(npss)+1 != len(states):
		return nil, fmt.Errorf("%s: npss %d (line %d) means %d power states, but the output has %d (ps 0–%d): cut short?", w, npss, h.line["npss"], npss+1, len(states), len(states)-1)
	}
	if len(states) > maxStates {
		return nil, fmt.Errorf("%s line %d: %d power states: more than the %d Identify Controller holds", w, states[maxStates].line, len(states), maxStates)
	}
	id.NPSS = int(npss)
	apsta, _, err := h.num(id, "apsta", 255)
	if err != nil {
		return nil, err
	}
	id.APSTA = apsta&1 == 1
	for i, s := range states {
		p, err := s.decode(i)
		if err != nil {
			return nil, fmt.Errorf("%s line %d: ps %d: %w", w, s.line, i, err)
		}
		id.PowerStates = append(id.PowerStates, p)
		if s.unknownWorkload {
			id.Unknown = append(id.Unknown, fmt.Sprintf("power_states[%d].active_power_workload", i))
		}
	}
	return id, nil
}

// parseCLINumber reads nvme-cli's "%#x" ("0x144d", "0") and "%d".
func parseCLINumber(s string) (uint64, error) {
	if h, ok := strings.CutPrefix(s, "0x"); ok {
		return strconv.ParseUint(h, 16, 64)
	}
	return strconv.ParseUint(s, 10, 64)
}

func (p *psText) add(s, w string, n int) error {
	// "active_power_workload:1MiB 32 RW, 30s idle" and the time lines hold
	// spaces: they are whole lines of their own.
	if v, ok := strings.CutPrefix(s, "active_power_workload:"); ok {
		p.fields["active_power_workload"] = strings.TrimSpace(v)
		return nil
	}
	if strings.Contains(s, " time:") {
		return nil // emergency power fail / forced quiescence times
	}
	for _, f := range strings.Fields(s) {
		switch f {
		case "operational", "non-operational":
			p.op = f
			continue
		}
		m := rePSKV.FindStringSubmatch(f)
		if m == nil {
			return fmt.Errorf("%s line %d: %q is not a \"key:value\" of a power state", w, n, clip(f, 24))
		}
		if _, dup := p.fields[m[1]]; dup {
			return fmt.Errorf("%s line %d: %s given twice for one power state", w, n, m[1])
		}
		p.fields[m[1]] = m[2]
	}
	return nil
}

func (p *psText) decode(i int) (PowerState, error) {
	ps := PowerState{PS: i}
	for _, k := range []string{"mp", "enlat", "exlat", "rrt", "rrl", "rwt", "rwl", "idle_power", "active_power"} {
		if _, ok := p.fields[k]; !ok {
			return ps, fmt.Errorf("missing %s: (the line after \"ps %d\" cut off?)", k, i)
		}
	}
	if p.op == "" {
		return ps, fmt.Errorf("neither operational nor non-operational")
	}
	ps.NonOperational = p.op == "non-operational"
	raw, scale, err := parseWatts(p.fields["mp"])
	if err != nil {
		return ps, fmt.Errorf("mp: %w", err)
	}
	if scale == 0 || scale == 3 {
		return ps, fmt.Errorf("mp %q: max power is always printed", p.fields["mp"])
	}
	ps.MaxPowerRaw, ps.MaxPowerScale = raw, map[int]int{2: 0, 1: 1}[scale]
	for _, f := range []struct {
		key string
		dst *uint32
	}{{"enlat", &ps.EntryLatencyUs}, {"exlat", &ps.ExitLatencyUs}} {
		v, err := latency(p.fields[f.key])
		if err != nil {
			return ps, fmt.Errorf("%s %w", f.key, err)
		}
		*f.dst = v
	}
	for _, f := range []struct {
		key string
		max uint64
		dst func(uint64)
	}{
		{"rrt", 31, func(v uint64) { ps.RRT = int(v) }},
		{"rrl", 31, func(v uint64) { ps.RRL = int(v) }},
		{"rwt", 31, func(v uint64) { ps.RWT = int(v) }},
		{"rwl", 31, func(v uint64) { ps.RWL = int(v) }},
	} {
		v, err := strconv.ParseUint(p.fields[f.key], 10, 64)
		if err != nil || v > f.max {
			return ps, fmt.Errorf("%s %q is not an integer from 0 to %d", f.key, clip(p.fields[f.key], 16), f.max)
		}
		f.dst(v)
	}
	if ps.IdlePowerRaw, ps.IdleScale, err = parseWatts(p.fields["idle_power"]); err != nil {
		return ps, fmt.Errorf("idle_power: %w", err)
	}
	if ps.ActivePowerRaw, ps.ActiveScale, err = parseWatts(p.fields["active_power"]); err != nil {
		return ps, fmt.Errorf("active_power: %w", err)
	}
	switch p.fields["active_power_workload"] {
	case "", "-":
	case "1MiB 32 RW, 30s idle":
		ps.ActiveWorkload = 1
	case "80K 128KiB SW":
		ps.ActiveWorkload = 2
	default: // "reserved": 3–7, which nvme-cli does not say
		p.unknownWorkload = true
	}
	ps.fill()
	return ps, nil
}

// latency reads ENLAT/EXLAT as nvme-cli prints them: "%d" of a u32 in
// every version (text and, in 2.x, JSON), so latencies of 2^31 µs and more
// come out negative ("-1" for FFFFFFFFh); they are taken back modulo 2^32.
func latency(s string) (uint32, error) {
	v, err := strconv.ParseInt(s, 10, 64)
	if err != nil || v < -(1<<31) || v > 0xffffffff {
		return 0, fmt.Errorf("%q is not a 32-bit latency", clip(s, 16))
	}
	return uint32(v), nil
}
