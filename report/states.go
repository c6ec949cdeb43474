package report

import (
	"encoding/json"
	"fmt"
	"io"
	"strings"

	"github.com/idlewatt/idlewatt/analysis"
	"github.com/idlewatt/idlewatt/analysis/judge"
	"github.com/idlewatt/idlewatt/states/detect"
	"github.com/idlewatt/idlewatt/states/powerstate"
)

// FileStates is the state detection's output file.
const FileStates = "states.json"

// WriteStatesJSON writes states.json's content.
func WriteStatesJSON(w io.Writer, r *analysis.Report) error {
	b, err := json.MarshalIndent(struct {
		Schema string                 `json:"schema"`
		Drives []analysis.StateReport `json:"drives"`
	}{analysis.StatesSchema, r.States}, "", "  ")
	if err != nil {
		return err
	}
	_, err = w.Write(append(b, '\n'))
	return err
}

// writeStatesMarkdown is report.md's state-detection section: per drive,
// the learned level of each state and what named it, then each state's
// residency (the Residency table's), the mean power over its intervals —
// a quantity of its own, not the DevSlp floor, which the DevSlp table
// gives — and its latencies.
func writeStatesMarkdown(w io.Writer, r *analysis.Report) {
	var b strings.Builder
	b.WriteString("\n## Interface states detected from power\n\n")
	b.WriteString("Offline classification with hysteresis (states/detect) against each drive's levels, learned from the capture (docs/analysis.md, \"States\"). " +
		"Residency is the Residency table's. \"Mean in intervals\" is the mean power over all of a state's intervals, its entries included: the DevSlp floor is the DevSlp table's. DevSlp latencies are in the DevSlp table.\n\n")
	b.WriteString("| Drive | State | Learned level (mW) | Residency | Mean in intervals (mW) | Intervals | Entry p50 / max (ms) | Exit p50 / max (ms) |\n|---|---|---:|---:|---:|---:|---:|---:|\n")
	for _, s := range r.States {
		if s.Residency == nil {
			fmt.Fprintf(&b, "| %s | — | not classified: %s | | | | | |\n", mdCell(s.Name), mdCell(s.Note))
			continue
		}
		for _, st := range powerstate.Detected {
			name := st.String()
			if s.Spans[name] == 0 {
				continue
			}
			lat := func(m map[string]analysis.LatencyStat) string {
				if l, ok := m[name]; ok {
					return fmt.Sprintf("%.2f / %.2f (%s, n=%d)", l.P50Ms, l.MaxMs, l.Cause, l.Count)
				}
				return ""
			}
			pw := judge.PM(judge.NumW(s.PowerW[name]), judge.NoneW, 1e3)
			if u, ok := s.PowerU95W[name]; ok {
				pw = judge.PM(judge.NumW(s.PowerW[name]), judge.NumW(u), 1e3)
			}
			lv := ""
			if x := levelOf(s.Levels, st); x > 0 {
				lv = fmt.Sprintf("%.3g", x*1e3)
			}
			fmt.Fprintf(&b, "| %s | %s | %s | %.1f %% | %s | %d | %s | %s |\n", mdCell(s.Name), name, lv,
				100*s.Residency[name], pw, s.Spans[name], lat(s.Entry), lat(s.Exit))
		}
		if len(s.Transitions) > 0 {
			var ts []string
			for _, t := range s.Transitions {
				ts = append(ts, fmt.Sprintf("%s→%s %d", t.From, t.To, t.Count))
			}
			fmt.Fprintf(&b, "| %s | transitions: %s | | | | | | |\n", mdCell(s.Name), strings.Join(ts, ", "))
		}
	}
	io.WriteString(w, b.String())
}

// levelOf is the learned level of state st in W, 0 without one.
func levelOf(l detect.Levels, st powerstate.State) float64 {
	switch st {
	case powerstate.Idle:
		return float64(l.Idle)
	case powerstate.Partial:
		return float64(l.Partial)
	case powerstate.Slumber:
		return float64(l.Slumber)
	case powerstate.DevSlp:
		return float64(l.DevSlp)
	}
	return 0
}
