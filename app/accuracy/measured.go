package accuracy

import (
	"encoding/json"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"strings"
)

// Value is one measured quantity with its stated 95 % interval, if the
// output states one. A nil V is "the output gives no value" (absent or null).
type Value struct {
	V  *float64 `json:"value"`
	Lo *float64 `json:"lo,omitempty"`
	Hi *float64 `json:"hi,omitempty"`
}

// Measured is what the outputs of one run say about one drive.
type Measured struct {
	ActiveIdleW  Value `json:"active_idle_w"`
	AverageW     Value `json:"average_w"`
	EnergyJ      Value `json:"energy_j"`
	PeakW        Value `json:"peak_w"` // with peak_ci95_w
	DevSlpFloorW Value `json:"devslp_floor_w"`
	EntryMs      Value `json:"entry_ms"`
	ExitMs       Value `json:"exit_ms"`
	RiseMs       Value `json:"rise_ms"`     // devslp.rise_ms ± rise_u95_ms
	PreCycleW    Value `json:"pre_cycle_w"` // devslp.pre_cycle_w (± pre_cycle_u95_w when stated)
	// RiseLeftOut and PreLeftOut flag, per cycle, a rise or pre-cycle
	// level the report gives as null (so not in its pooled value).
	RiseLeftOut []bool `json:"rise_left_out,omitempty"`
	PreLeftOut  []bool `json:"pre_cycle_left_out,omitempty"`
	// ExitLeftOut flags, per cycle (devslp.cycle_results[].cycle − 1), an
	// exit the report left out of the pooled exit_ms (exit_host_late, or
	// exit_ms null).
	ExitLeftOut   []bool           `json:"exit_left_out,omitempty"`
	Residency     map[string]Value `json:"residency"` // by the report's state names
	Verdict       string           `json:"verdict"`   // PASS, FAIL, INCONCLUSIVE, NOT SUPPORTED; "" = none given
	VerdictReason string           `json:"verdict_reason,omitempty"`
	Dropped       float64          `json:"dropped"`
	MergeGapMs    float64          `json:"merge_gap_ms"` // settings.merge_gap_ms: busy intervals closer than this are one
	// ActiveIdlePhaseS is how long the active-idle phase ran (phase
	// idle:max_performance; 0 = none): active_idle_max runs it on until
	// the active idle is resolved.
	ActiveIdlePhaseS float64 `json:"active_idle_phase_s,omitempty"`
	// EntryCycles is how many of the drive's DevSlp cycles were entry
	// cycles (devslp.cycle_results[].entry_only; devslp.entry_hold).
	EntryCycles int `json:"entry_cycles,omitempty"`
	// reportVerdict is report.json's devslp.outcome (normalised): the
	// verdict of the analysis that wrote it, which a rescore scores.
	reportVerdict, reportReason string
}

// activeIdlePhase is the active-idle phase's name (rig.IdlePhase of
// max_performance).
const activeIdlePhase = "idle:max_performance"

// Extract reads what a run's outputs in dir say about the drive on port.
// It is the only place that knows the output keys, so when report.json,
// measure.json or states.json change this function changes, nothing else.
// Keys read (docs/report-format.md):
//
//	report.json  drives[port].active_idle_w, average_w, energy_j, peak_w ± peak_ci95_w,
//	             residency.STATE (every key) ± residency_u95.STATE, samples.dropped,
//	             devslp.floor_w (older reports: devslp.power_w), devslp.entry_ms,
//	             devslp.exit_ms (pin release → first read completed), devslp.rise_ms,
//	             devslp.pre_cycle_w, devslp.outcome, devslp.cycle_results[].cycle,
//	             exit_host_late and exit_ms null (cycles left out of exit_ms), rise_ms and
//	             pre_cycle_w null (left out of theirs), entry_only;
//	             settings.merge_gap_ms, drives[port].phases[name = idle:max_performance].duration_s
//	measure.json devslp.PORT.outcome (older: pass), reason
//
// A stated 95 % interval is looked for beside each value: NAME_u95_UNIT
// (a half-width: active_idle_u95_w, floor_u95_w, exit_u95_ms), or
// KEY_ci95 or NAME_ci95_UNIT (peak_ci95_w) as [lo, hi] or {lo, hi}; where none is found the Value has no
// Lo/Hi and coverage counts it as n/a. Reports whose DevSlp values are
// never null (no floor_w key) give a floor, entry and exit only when
// devslp.entered is true; newer ones state absent values as null.
func Extract(dir string, port int) (Measured, error) {
	rep, err := os.ReadFile(filepath.Join(dir, "report.json"))
	if err != nil {
		return Measured{}, err
	}
	meas, err := os.ReadFile(filepath.Join(dir, "measure.json"))
	if err != nil {
		return Measured{}, err
	}
	return extractFrom(rep, meas, port)
}

// extractFrom is Extract on the files' bytes.
func extractFrom(reportJSON, measureJSON []byte, port int) (Measured, error) {
	var m Measured
	d, err := m.reportDrive(reportJSON, port)
	if err != nil {
		return m, err
	}
	m.driveValues(d)
	var outcome string
	if ds, ok := d["devslp"].(map[string]any); ok {
		outcome = m.devslpValues(ds)
		m.reportReason, _ = ds["reason"].(string)
	}
	if err := m.measureVerdict(measureJSON, port); err != nil {
		return m, err
	}
	if outcome != "" {
		m.reportVerdict = normVerdict(outcome)
	}
	if m.Verdict == "" {
		m.Verdict = m.reportVerdict
	}
	return m, nil
}

// reportDrive reads report.json's merge gap into m and returns the drive on
// port.
func (m *Measured) reportDrive(reportJSON []byte, port int) (map[string]any, error) {
	var rep struct {
		Settings map[string]any   `json:"settings"`
		Drives   []map[string]any `json:"drives"`
	}
	if err := json.Unmarshal(reportJSON, &rep); err != nil {
		return nil, fmt.Errorf("report.json: %w", err)
	}
	var d map[string]any
	if st, ok := rep.Settings["merge_gap_ms"]; ok {
		if g, ok := num(st); ok && g >= 0 && g < 1e6 {
			m.MergeGapMs = g
		}
	}
	for _, x := range rep.Drives {
		if p, ok := num(x["port"]); ok && int(p) == port {
			d = x
		}
	}
	if d == nil {
		return nil, fmt.Errorf("report.json: no drive on port %d", port)
	}
	return d, nil
}

// driveValues reads a report.json drive's power, energy, dropped samples,
// active-idle phase and residency.
func (m *Measured) driveValues(d map[string]any) {
	m.ActiveIdleW = value(d, "active_idle_w")
	m.AverageW = value(d, "average_w")
	m.EnergyJ = value(d, "energy_j")
	m.PeakW = value(d, "peak_w")
	if s, ok := d["samples"].(map[string]any); ok {
		m.Dropped, _ = num(s["dropped"])
	}
	if phs, ok := d["phases"].([]any); ok {
		for _, x := range phs {
			if ph, ok := x.(map[string]any); ok && ph["name"] == activeIdlePhase {
				m.ActiveIdlePhaseS, _ = num(ph["duration_s"])
			}
		}
	}
	m.Residency = map[string]Value{}
	if res, ok := d["residency"].(map[string]any); ok {
		u95, _ := d["residency_u95"].(map[string]any)
		for k := range res {
			if strings.HasSuffix(k, "_ci95") {
				continue
			}
			v := value(res, k)
			if u, ok := num(u95[k]); ok && u >= 0 && v.V != nil && v.Lo == nil {
				lo, hi := *v.V-u, *v.V+u
				v.Lo, v.Hi = &lo, &hi
			}
			m.Residency[k] = v
		}
	}
}

// devslpValues reads a report.json drive's devslp block and returns its
// outcome.
func (m *Measured) devslpValues(ds map[string]any) (outcome string) {
	entered, _ := ds["entered"].(bool)
	_, nullable := ds["floor_w"]
	if nullable || entered {
		m.DevSlpFloorW = value(ds, "floor_w")
		if !nullable {
			m.DevSlpFloorW = value(ds, "power_w")
		}
		m.EntryMs = value(ds, "entry_ms")
		m.ExitMs = value(ds, "exit_ms")
		m.RiseMs = value(ds, "rise_ms")
	}
	m.PreCycleW = value(ds, "pre_cycle_w")
	outcome, _ = ds["outcome"].(string)
	if cr, ok := ds["cycle_results"].([]any); ok {
		m.cycleResults(cr)
	}
	return outcome
}

// cycleResults reads which cycles the pooled exit, rise and pre-cycle
// level left out, and counts the entry cycles.
func (m *Measured) cycleResults(cr []any) {
	for _, x := range cr {
		c, _ := x.(map[string]any)
		n, ok := num(c["cycle"])
		if !ok || n < 1 || n > 1e4 {
			continue
		}
		for len(m.ExitLeftOut) < int(n) {
			m.ExitLeftOut = append(m.ExitLeftOut, false)
			m.RiseLeftOut = append(m.RiseLeftOut, false)
			m.PreLeftOut = append(m.PreLeftOut, false)
		}
		nullOrAbsent := func(k string) bool { x, has := c[k]; return !has || x == nil }
		m.RiseLeftOut[int(n)-1] = nullOrAbsent("rise_ms")
		m.PreLeftOut[int(n)-1] = nullOrAbsent("pre_cycle_w")
		// Left out of the pooled exit_ms: a read the host made late,
		// or a cycle whose exit the report gives as null (no floor
		// reached: its read ends no DevSlp exit).
		late, _ := c["exit_host_late"].(bool)
		x, has := c["exit_ms"]
		m.ExitLeftOut[int(n)-1] = late || (has && x == nil)
		if e, _ := c["entry_only"].(bool); e {
			m.EntryCycles++
		}
	}
}

// measureVerdict reads the DevSlp verdict and its reason for port from
// measure.json.
func (m *Measured) measureVerdict(measureJSON []byte, port int) error {
	var meas struct {
		DevSlp map[string]map[string]any `json:"devslp"`
	}
	if err := json.Unmarshal(measureJSON, &meas); err != nil {
		return fmt.Errorf("measure.json: %w", err)
	}
	if v, ok := meas.DevSlp[fmt.Sprint(port)]; ok {
		m.VerdictReason, _ = v["reason"].(string)
		if s, ok := v["outcome"].(string); ok {
			m.Verdict = normVerdict(s)
		} else if s, ok := v["verdict"].(string); ok {
			m.Verdict = normVerdict(s)
		} else if pass, ok := v["pass"].(bool); ok {
			m.Verdict = "FAIL"
			if pass {
				m.Verdict = "PASS"
			}
		}
	}
	return nil
}

func normVerdict(s string) string {
	s = strings.ToUpper(strings.TrimSpace(strings.ReplaceAll(s, "_", " ")))
	switch s {
	case "NOTSUPPORTED", "UNSUPPORTED":
		return "NOT SUPPORTED"
	}
	return s
}

func num(v any) (float64, bool) {
	f, ok := v.(float64)
	return f, ok && !math.IsNaN(f) && !math.IsInf(f, 0)
}

// value reads obj[key] and its interval, if any.
func value(obj map[string]any, key string) Value {
	var out Value
	if f, ok := num(obj[key]); ok {
		out.V = &f
	}
	if out.V == nil {
		return out
	}
	// NAME_u95_UNIT: a 95 % half-width.
	if i := strings.LastIndex(key, "_"); i > 0 {
		if u, ok := num(obj[key[:i]+"_u95"+key[i:]]); ok && u >= 0 {
			lo, hi := *out.V-u, *out.V+u
			out.Lo, out.Hi = &lo, &hi
			return out
		}
	}
	iv := obj[key+"_ci95"]
	if i := strings.LastIndex(key, "_"); iv == nil && i > 0 {
		iv = obj[key[:i]+"_ci95"+key[i:]] // NAME_ci95_UNIT: [lo, hi] (peak_ci95_w)
	}
	if iv == nil {
		if u, ok := obj["uncertainty"].(map[string]any); ok {
			iv = u[key]
		}
	}
	var lo, hi float64
	var ok1, ok2 bool
	switch x := iv.(type) {
	case []any:
		if len(x) == 2 {
			lo, ok1 = num(x[0])
			hi, ok2 = num(x[1])
		}
	case map[string]any:
		lo, ok1 = num(x["lo"])
		hi, ok2 = num(x["hi"])
	}
	if ok1 && ok2 {
		out.Lo, out.Hi = &lo, &hi
	}
	return out
}
