package nvme

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strconv"
	"strings"

	"github.com/idlewatt/idlewatt/states/alpm"
)

// nvme-cli's JSON output (src/nvme-print-json.c, nvme-cli 2.x): keys are
// looked up by name, extra keys (newer versions add fields) are ignored, a
// missing key is an error naming it.

type jobj map[string]json.RawMessage

func decodeObject(b json.RawMessage, where string) (jobj, error) {
	var o jobj
	if err := json.Unmarshal(b, &o); err != nil || o == nil {
		return nil, fmt.Errorf("%s: not a JSON object", where)
	}
	return o, nil
}

func (o jobj) uint(where, key string, max uint64) (uint64, error) {
	raw, ok := o[key]
	if !ok {
		return 0, fmt.Errorf("%s: missing key %q", where, key)
	}
	s := strings.TrimSpace(string(raw))
	v, err := strconv.ParseUint(s, 10, 64)
	if err != nil || v > max {
		return 0, fmt.Errorf("%s.%s: %s is not an integer from 0 to %d", where, key, clip(s, 24), max)
	}
	return v, nil
}

func (o jobj) str(where, key string) (string, error) {
	raw, ok := o[key]
	if !ok {
		return "", fmt.Errorf("%s: missing key %q", where, key)
	}
	var s string
	if err := json.Unmarshal(raw, &s); err != nil {
		return "", fmt.Errorf("%s.%s: not a string", where, key)
	}
	return s, nil
}

func clip(s string, n int) string {
	if len(s) > n {
		return s[:n] + "…"
	}
	return s
}

// DecodeIdentifyJSON decodes `nvme id-ctrl -o json`. Required: vid, mn,
// npss, apsta, psds (npss+1 entries), and per descriptor max_power,
// max_power_scale, non-operational_state, entry_lat, exit_lat; the
// throughput/latency ranks and idle/active power are read when present.
func DecodeIdentifyJSON(b []byte) (*Identify, error) {
	const w = "id-ctrl JSON"
	vs, err := values(b)
	if err != nil {
		return nil, fmt.Errorf("%s: %v", w, err)
	}
	if len(vs) == 0 {
		return nil, fmt.Errorf("%s: empty", w)
	}
	top, err := decodeObject(vs[0], w)
	if err != nil {
		return nil, err
	}
	id := &Identify{}
	vid, err := top.uint(w, "vid", 0xffff)
	if err != nil {
		return nil, err
	}
	id.VID = alpm.Hex16(vid)
	if v, ok := top["ssvid"]; ok && v != nil {
		x, err := top.uint(w, "ssvid", 0xffff)
		if err != nil {
			return nil, err
		}
		id.SSVID = alpm.Hex16(x)
	}
	if id.Model, err = top.str(w, "mn"); err != nil {
		return nil, err
	}
	for _, f := range []struct {
		key string
		dst *string
	}{{"sn", &id.Serial}, {"fr", &id.Firmware}} {
		if _, ok := top[f.key]; ok {
			if *f.dst, err = top.str(w, f.key); err != nil {
				return nil, err
			}
		}
	}
	id.Model, id.Serial, id.Firmware = idString([]byte(id.Model)), idString([]byte(id.Serial)), idString([]byte(id.Firmware))
	npss, err := top.uint(w, "npss", 255)
	if err != nil {
		return nil, err
	}
	if npss >= maxStates {
		return nil, fmt.Errorf("%s.npss: %d: more than the %d power states Identify Controller holds", w, npss, maxStates)
	}
	id.NPSS = int(npss)
	apsta, err := top.uint(w, "apsta", 255)
	if err != nil {
		return nil, err
	}
	id.APSTA = apsta&1 == 1
	raw, ok := top["psds"]
	if !ok {
		return nil, fmt.Errorf("%s: missing key %q (the power states: was the output cut?)", w, "psds")
	}
	var psds []json.RawMessage
	if err := json.Unmarshal(raw, &psds); err != nil {
		return nil, fmt.Errorf("%s.psds: not an array", w)
	}
	if len(psds) != id.NPSS+1 {
		return nil, fmt.Errorf("%s.psds: %d entries, but npss %d means %d", w, len(psds), id.NPSS, id.NPSS+1)
	}
	for i, r := range psds {
		where := fmt.Sprintf("%s.psds[%d]", w, i)
		o, err := decodeObject(r, where)
		if err != nil {
			return nil, err
		}
		p, err := psdFromJSON(o, where)
		if err != nil {
			return nil, err
		}
		p.PS = i
		id.PowerStates = append(id.PowerStates, p)
	}
	return id, nil
}

// psdFromJSON reads one descriptor in any of nvme-cli's three dialects
// (src/nvme-print-json.c and, before 2.6, nvme-print.c):
//   - 2.6 and later: max_power_scale, non-operational_state, idle_scale and
//     active_scale (2-bit scales), active_power_work;
//   - 2.1–2.5: flags (the raw byte: bit 0 MXPS, bit 1 NOPS), idle_scale and
//     active_scale (2-bit), active_power_work;
//   - 1.x and 2.0: flags, idle_scale (the raw byte, scale in bits 7:6) and
//     active_work_scale (the raw byte: workload bits 2:0, scale bits 7:6).
func psdFromJSON(o jobj, where string) (PowerState, error) {
	var p PowerState
	type field struct {
		key      string
		max      uint64
		required bool
		set      func(uint64)
	}
	fields := []field{
		{"max_power", 0xffff, true, func(v uint64) { p.MaxPowerRaw = uint16(v) }},
		{"read_tput", 31, false, func(v uint64) { p.RRT = int(v) }},
		{"read_lat", 31, false, func(v uint64) { p.RRL = int(v) }},
		{"write_tput", 31, false, func(v uint64) { p.RWT = int(v) }},
		{"write_lat", 31, false, func(v uint64) { p.RWL = int(v) }},
		{"idle_power", 0xffff, false, func(v uint64) { p.IdlePowerRaw = uint16(v) }},
		{"active_power", 0xffff, false, func(v uint64) { p.ActivePowerRaw = uint16(v) }},
	}
	for _, k := range []struct {
		key string
		dst *uint32
	}{{"entry_lat", &p.EntryLatencyUs}, {"exit_lat", &p.ExitLatencyUs}} {
		raw, ok := o[k.key]
		if !ok {
			return p, fmt.Errorf("%s: missing key %q", where, k.key)
		}
		v, err := latency(strings.TrimSpace(string(raw)))
		if err != nil {
			return p, fmt.Errorf("%s.%s: %w", where, k.key, err)
		}
		*k.dst = v
	}
	_, hasFlags := o["flags"]
	_, rawScales := o["active_work_scale"]
	switch {
	case !hasFlags:
		fields = append(fields,
			field{"max_power_scale", 1, true, func(v uint64) { p.MaxPowerScale = int(v) }},
			field{"non-operational_state", 1, true, func(v uint64) { p.NonOperational = v == 1 }})
	default:
		fields = append(fields, field{"flags", 0xff, true, func(v uint64) { p.MaxPowerScale, p.NonOperational = int(v&1), v&2 != 0 }})
	}
	if rawScales {
		fields = append(fields,
			field{"idle_scale", 0xff, false, func(v uint64) { p.IdleScale = int(v >> 6) }},
			field{"active_work_scale", 0xff, true, func(v uint64) { p.ActiveWorkload, p.ActiveScale = int(v&7), int(v>>6) }})
	} else {
		fields = append(fields,
			field{"idle_scale", 3, false, func(v uint64) { p.IdleScale = int(v) }},
			field{"active_power_work", 7, false, func(v uint64) { p.ActiveWorkload = int(v) }},
			field{"active_scale", 3, false, func(v uint64) { p.ActiveScale = int(v) }})
	}
	for _, f := range fields {
		if _, ok := o[f.key]; !ok && !f.required {
			continue
		}
		v, err := o.uint(where, f.key, f.max)
		if err != nil {
			if _, ok := o[f.key]; !ok && f.key == "max_power_scale" {
				return p, fmt.Errorf("%s: missing key %q (nvme-cli 2.6+; older versions print \"flags\")", where, f.key)
			}
			return p, err
		}
		f.set(v)
	}
	p.fill()
	return p, nil
}

// nvme-cli's names for the feature fields (json_feature_show_fields_*).
const (
	keyAPSTE   = "Autonomous Power State Transition Enable (APSTE)"
	keyEntries = "Auto PST Entries"
	keyITPT    = "Idle Time Prior to Transition (ITPT)"
	keyITPS    = "Idle Transition Power State (ITPS)"
	keyPS      = "Power State (PS)"
	keyWH      = "Workload Hint (WH)"
)

// values returns every top-level JSON value in b: nvme-cli prints the
// feature header and the decoded fields as two objects in a row.
func values(b []byte) ([]json.RawMessage, error) {
	dec := json.NewDecoder(bytes.NewReader(b))
	var out []json.RawMessage
	for {
		var v json.RawMessage
		err := dec.Decode(&v)
		if errors.Is(err, io.EOF) {
			return out, nil
		}
		if err != nil {
			return nil, fmt.Errorf("JSON at byte %d: %v", dec.InputOffset(), err)
		}
		out = append(out, v)
	}
}

// findKey walks v (objects and arrays, depth-first) for the first object
// holding key.
func findKey(v json.RawMessage, key string, depth int) jobj {
	if depth > 8 {
		return nil
	}
	var o jobj
	if json.Unmarshal(v, &o) == nil && o != nil {
		if _, ok := o[key]; ok {
			return o
		}
		for _, c := range o {
			if r := findKey(c, key, depth+1); r != nil {
				return r
			}
		}
		return nil
	}
	var a []json.RawMessage
	if json.Unmarshal(v, &a) == nil {
		for _, c := range a {
			if r := findKey(c, key, depth+1); r != nil {
				return r
			}
		}
	}
	return nil
}

func findInValues(b []byte, key string) (jobj, error) {
	vs, err := values(b)
	if err != nil {
		return nil, err
	}
	for _, v := range vs {
		if o := findKey(v, key, 0); o != nil {
			return o, nil
		}
	}
	return nil, nil
}

// DecodeAPSTJSON decodes `nvme get-feature -f 0x0c -H -o json`: the
// enable field and the 32 "Auto PST Entries" ({"entry": " 0",
// "Idle Time Prior to Transition (ITPT)": "100 ms",
// "Idle Transition Power State (ITPS)": 3}).
func DecodeAPSTJSON(b []byte) (*APST, error) {
	const w = "get-feature 0x0c JSON"
	o, err := findInValues(b, keyAPSTE)
	if err != nil {
		return nil, fmt.Errorf("%s: %v", w, err)
	}
	if o == nil {
		return nil, fmt.Errorf("%s: missing key %q (print it with nvme get-feature -f 0x0c -H -o json)", w, keyAPSTE)
	}
	en, err := o.str(w, keyAPSTE)
	if err != nil {
		return nil, err
	}
	a := &APST{}
	switch en {
	case "Enabled":
		a.Enabled = new(true)
	case "Disabled":
		a.Enabled = new(false)
	default:
		return nil, fmt.Errorf("%s: %q is %q, want Enabled or Disabled", w, keyAPSTE, clip(en, 20))
	}
	raw, ok := o[keyEntries]
	if !ok {
		return nil, fmt.Errorf("%s: missing key %q (-H prints the table)", w, keyEntries)
	}
	var list []json.RawMessage
	if err := json.Unmarshal(raw, &list); err != nil {
		return nil, fmt.Errorf("%s.%s: not an array", w, keyEntries)
	}
	if len(list) != apstEntries {
		return nil, fmt.Errorf("%s.%s: %d entries, want %d", w, keyEntries, len(list), apstEntries)
	}
	for i, r := range list {
		where := fmt.Sprintf("%s.%s[%d]", w, keyEntries, i)
		e, err := decodeObject(r, where)
		if err != nil {
			return nil, err
		}
		if s, err := entryIndex(e); err == nil && s != i {
			return nil, fmt.Errorf("%s: entry %d at position %d", where, s, i)
		}
		t, err := e.str(where, keyITPT)
		if err != nil {
			return nil, err
		}
		ms, err := strconv.ParseUint(strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(t), "ms")), 10, 32)
		if err != nil || ms > MaxITPTms {
			return nil, fmt.Errorf("%s.%s: %q, want \"N ms\" with N ≤ %d", where, keyITPT, clip(t, 20), MaxITPTms)
		}
		ps, err := e.uint(where, keyITPS, 31)
		if err != nil {
			return nil, err
		}
		a.Entries = append(a.Entries, APSTEntry{ITPS: int(ps), ITPTms: uint32(ms)})
	}
	return a, nil
}

// entryIndex reads the optional "entry" (" 0"; "Entry" in some versions).
func entryIndex(e jobj) (int, error) {
	for _, k := range []string{"entry", "Entry"} {
		if _, ok := e[k]; ok {
			s, err := e.str("", k)
			if err != nil {
				return 0, err
			}
			return strconv.Atoi(strings.TrimSpace(s))
		}
	}
	return 0, errors.New("no entry key")
}

// DecodePowerManagementJSON decodes `nvme get-feature -f 0x02 -H -o json`.
func DecodePowerManagementJSON(b []byte) (PowerManagement, error) {
	const w = "get-feature 0x02 JSON"
	o, err := findInValues(b, keyPS)
	if err != nil {
		return PowerManagement{}, fmt.Errorf("%s: %v", w, err)
	}
	if o == nil {
		return PowerManagement{}, fmt.Errorf("%s: missing key %q (print it with nvme get-feature -f 0x02 -H -o json)", w, keyPS)
	}
	ps, err := o.uint(w, keyPS, 31)
	if err != nil {
		return PowerManagement{}, err
	}
	pm := PowerManagement{PS: int(ps)}
	if _, ok := o[keyWH]; ok {
		wh, err := o.uint(w, keyWH, 7)
		if err != nil {
			return PowerManagement{}, err
		}
		pm.WH = int(wh)
	}
	return pm, nil
}
