package analysis

import (
	"encoding/json"
	"fmt"
	"math"
	"strings"

	"github.com/idlewatt/idlewatt/analysis/judge"
	"github.com/idlewatt/idlewatt/units"
)

// What a user knows beforehand (drives[].expect: a datasheet's DevSlp or
// idle figure) is recorded in the capture as a note on the drive's port
// ("expect {json}"), so a report of the capture shows it as the run did.
// It is shown beside the measured value and compared with it after every
// figure is computed; no estimator reads it (docs/analysis.md, "Declared
// figures").

// NoteExpect prefixes the capture note with a drive's declared figures.
const NoteExpect = "expect "

// NoteRun prefixes a note of the measuring run (why a phase ran longer,
// a policy not applied): the report carries it as a note.
const NoteRun = "run-note "

// Expectation is what was declared for one drive (drives[].expect).
type Expectation struct {
	DevSlpMW    units.Milliwatts `json:"devslp_mw,omitempty"`     // the DevSlp floor
	ActiveIdleW units.Watts      `json:"active_idle_w,omitempty"` // active idle
}

// DeclaredMargin is how far outside its measurement's 95 % interval a
// declared figure may lie, as a fraction of the declared figure, before it
// counts as a disagreement: a datasheet states a typical part, and parts
// differ from it by tens of per cent.
const DeclaredMargin = 0.25

// DeclaredFigure is one declared figure beside the measured one.
type DeclaredFigure struct {
	// Quantity is the report key the figure is compared with
	// ("devslp.floor_w", "active_idle_w"); Name is how outputs call it.
	Quantity string      `json:"quantity"`
	Name     string      `json:"name"`
	Declared units.Watts `json:"declared"` // both quantities are powers
	// Agrees is null when the quantity was not measured with an interval;
	// false when the declared figure lies outside the measured 95 %
	// interval widened by DeclaredMargin of the declared figure.
	Agrees *bool  `json:"agrees"`
	Note   string `json:"note,omitempty"`
}

// parseExpectation reads a NoteExpect note's JSON; false if it is not one.
func parseExpectation(v string) (Expectation, bool) {
	var e Expectation
	if !strings.HasPrefix(v, NoteExpect) || json.Unmarshal([]byte(strings.TrimPrefix(v, NoteExpect)), &e) != nil {
		return e, false
	}
	return e, true
}

// ExpectationNote is the capture note recording e.
func ExpectationNote(e Expectation) string {
	b, _ := json.Marshal(e)
	return NoteExpect + string(b)
}

// declare compares each drive's declared figures with what was measured.
func (r *Report) declare(exp map[int]Expectation) {
	for i := range r.Drives {
		d := &r.Drives[i]
		e, ok := exp[d.Port]
		if !ok {
			continue
		}
		if e.DevSlpMW > 0 {
			d.Declared = append(d.Declared, compareDeclared("devslp.floor_w", "DevSlp floor", e.DevSlpMW.Watts(),
				d.DevSlp.FloorW.Value(), d.DevSlp.FloorW.Ok(), numPtr(d.DevSlp.FloorU95W)))
		}
		if e.ActiveIdleW > 0 {
			d.Declared = append(d.Declared, compareDeclared("active_idle_w", "active idle", e.ActiveIdleW,
				d.ActiveIdleW, !math.IsNaN(float64(d.ActiveIdleW)), d.ActiveIdleU95W))
		}
		for _, f := range d.Declared {
			if f.Agrees != nil && !*f.Agrees {
				r.note(fmt.Sprintf("drive %q: %s", d.Name, f.Note))
			}
		}
	}
}

func numPtr(n judge.NumW) *units.Watts {
	if !n.Ok() {
		return nil
	}
	x := n.Value()
	return &x
}

func compareDeclared(key, name string, declared, measured units.Watts, ok bool, u95 *units.Watts) DeclaredFigure {
	f := DeclaredFigure{Quantity: key, Name: name, Declared: declared}
	switch {
	case !ok:
		f.Note = fmt.Sprintf("%s: declared %.4g W, not measured", name, declared)
	case u95 == nil:
		f.Note = fmt.Sprintf("%s: declared %.4g W, measured %.4g W without an interval: not compared", name, declared, measured)
	default:
		agrees := math.Abs(float64(declared-measured)) <= float64(*u95+DeclaredMargin*declared)
		f.Agrees = &agrees
		if !agrees {
			f.Note = fmt.Sprintf("%s: the declared %.4g W disagrees with the measured %.4g ± %.2g W (outside its 95 %% interval by more than %.0f %% of the declared figure)",
				name, declared, measured, *u95, 100*DeclaredMargin)
		}
	}
	return f
}

// Text is the figure as outputs print it — "datasheet 5 mW · measured
// 4.51 ± 0.05 mW" — with the measured value formatted as everywhere else
// (d is the figure's drive), and its agreement ("agrees", "DISAGREES",
// "not compared").
func (f DeclaredFigure) Text(d *DriveReport) (text, agreement string) {
	var declared, measured string
	switch f.Quantity {
	case "devslp.floor_w":
		declared = fmt.Sprintf("%.4g mW", f.Declared.Milliwatts())
		measured = judge.PM(d.DevSlp.FloorW, d.DevSlp.FloorU95W, 1e3)
		if measured != Dash {
			measured += " mW"
		}
	default:
		declared = fmt.Sprintf("%.4g W", f.Declared)
		measured = FormatPM(d.ActiveIdleW, d.ActiveIdleU95W, 4)
		if measured != Dash {
			measured += " W"
		}
	}
	agreement = "not compared"
	if f.Agrees != nil {
		agreement = "agrees"
		if !*f.Agrees {
			agreement = "DISAGREES"
		}
	}
	return fmt.Sprintf("datasheet %s · measured %s", declared, measured), agreement
}
