package html

import (
	"bytes"
	_ "embed"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"text/template"

	"github.com/idlewatt/idlewatt/analysis"
	"github.com/idlewatt/idlewatt/internal/outfile"
)

// CompareFileName is the comparison viewer's name in compare's directory.
const CompareFileName = "compare.html"

// CompareRun is one run of a comparison: its label, its report (the
// numbers) and the pyramid of its capture (the trace drawn).
type CompareRun struct {
	Label   string
	Report  *analysis.Report
	Pyramid *Pyramid
	// Capture is the capture the report was computed from: its events
	// (I/O, DEVSLP pin, phases, marks) are in the run's strips and tables
	// (as Options.Capture). Empty: power and states only.
	Capture string
}

// CompareBudget is the budget of each run's Pyramid in a comparison of n
// runs: DefaultBudget's buckets shared between them, so that compare.html
// stays within the size of one report.html however many runs it holds.
// Full-resolution windows (DEVSLP pin edges, peaks) get twice one report's
// share in all, so two runs keep every window their own reports have: at
// most 14 MiB of buckets and 4.2 MiB of windows, under issue 16's 20 MB.
func CompareBudget(n int) Budget { return shareBudget(DefaultBudget, n) }

func shareBudget(b Budget, n int) Budget {
	if n > 1 {
		b.ShortBytes /= n
		b.LongBytes /= n
		b.RawShare = 2 * rawShare
	}
	return b
}

var (
	//go:embed assets/compare.js
	compareJS string
	//go:embed assets/compare.html.tmpl
	compareTmpl string
)

var comparePage = template.Must(template.New("compare").Parse(compareTmpl))

type compareData struct {
	Schema   string           `json:"schema"`
	Uplot    string           `json:"uplot_version"`
	Baseline int              `json:"baseline"`     // index into runs
	BaseRun  string           `json:"baseline_run"` // its label
	Runs     []compareRunJS   `json:"runs"`
	Series   []compareSeries  `json:"series"`
	Columns  []string         `json:"columns"`
	Deltas   []compareDeltaJS `json:"deltas"`
	Notes    []string         `json:"notes"`
}

// compareRunJS is one run: its report and the grid of its buckets, as in
// report.html's page data (pageData).
type compareRunJS struct {
	Label  string           `json:"label"`
	Report *analysis.Report `json:"report"`
	DtS    float64          `json:"dt_s"`
	WidthS float64          `json:"width_s"`
	PerBkt uint64           `json:"per_bucket"`
	RailW  float64          `json:"rail_width_s"`
	Phases []phaseJSON      `json:"phases"`
	Marks  []mark           `json:"marks"`
	Notes  []string         `json:"page_notes"`
}

// compareSeries is one drive of one run, on its own run's timeline, and
// the series of the baseline run analysis compares it with.
type compareSeries struct {
	Run   int       `json:"run"`
	Base  int       `json:"base"` // index into series; -1: none (or the baseline run)
	Drive driveData `json:"drive"`
}

// compareDeltaJS is a row of the delta table, its cells as compare.md
// shows them.
type compareDeltaJS struct {
	Run       string   `json:"run"`
	Drive     string   `json:"drive"`
	BaseDrive string   `json:"baseline_drive"`
	Series    int      `json:"series"` // -1: the drive has no samples drawn
	Cells     []string `json:"cells"`
}

// WriteCompare writes compare.html to path: every drive of every run with
// its min–max envelope, overlaid or stacked on one time axis (seconds from
// each run's start, or from a phase all runs share), with a selection
// tool, per-run I/O, state and DEVSLP strips, the deltas against
// runs[base] (analysis.CompareDeltas) and tables linked to the time axis.
// Each Pyramid must have been analysis.Options.Samples of an analysis of
// the run's capture (CompareBudget keeps the file to one report's size).
func WriteCompare(path string, runs []CompareRun, base int, notes []string, o outfile.Options) error {
	b, err := buildCompare(runs, base, notes)
	if err != nil {
		return err
	}
	return outfile.WriteFile(path, b, o)
}

func buildCompare(runs []CompareRun, base int, notes []string) ([]byte, error) {
	if len(runs) == 0 || base < 0 || base >= len(runs) {
		return nil, errors.New("html: compare: no runs, or no such baseline")
	}
	d := compareData{Schema: "idlewatt.compare-html/v2", Uplot: UplotVersion, Baseline: base, BaseRun: runs[base].Label, Runs: []compareRunJS{}, Series: []compareSeries{},
		Columns: analysis.CompareColumns(), Deltas: []compareDeltaJS{}, Notes: append([]string{}, notes...)}
	var reps []*analysis.Report
	index := map[*analysis.DriveReport]int{} // series of each drive
	for i, r := range runs {
		if r.Report == nil || r.Pyramid == nil {
			return nil, fmt.Errorf("html: compare: run %s has no report or no pyramid", r.Label)
		}
		reps = append(reps, r.Report)
		p := r.Pyramid
		if !p.seen && p.dt == 0 {
			return nil, fmt.Errorf("html: compare: run %s: the pyramid was not analysis.Options.Samples of the analysis (no Begin)", r.Label)
		}
		p.finish()
		tl := emptyTimeline()
		switch {
		case r.Capture != "" && !regular(r.Capture):
			// A FIFO was read once, by the analysis: its events cannot be
			// read again.
			d.Notes = append(d.Notes, fmt.Sprintf("%s: %s is not a regular file: its I/O, DEVSLP pin and phase events are not shown", r.Label, r.Capture))
		case r.Capture != "":
			var ports []int
			for _, dr := range r.Report.Drives {
				ports = append(ports, dr.Port)
			}
			var err error
			if tl, err = p.timeline(r.Capture, ports, nil); err != nil {
				return nil, fmt.Errorf("html: compare: run %s: reading events: %w", r.Label, err)
			}
		}
		rj := compareRunJS{Label: r.Label, Report: r.Report, DtS: p.dt, WidthS: p.width(), PerBkt: uint64(1) << p.shift,
			RailW: p.width() * railFactor, Phases: phaseDatas(tl), Marks: tl.marks, Notes: pageNotes(p, tl)}
		if rj.Marks == nil {
			rj.Marks = []mark{}
		}
		if rj.Notes == nil {
			rj.Notes = []string{}
		}
		d.Runs = append(d.Runs, rj)
		for k, dd := range driveDatas(r.Report, p, tl) {
			if p.drives[dd.Port] == nil {
				continue // no sample of this drive: nothing to draw
			}
			index[&r.Report.Drives[k]] = len(d.Series)
			d.Series = append(d.Series, compareSeries{Run: i, Base: -1, Drive: dd})
		}
	}
	for _, row := range analysis.CompareDeltas(reps, base) {
		si, ok := index[row.Drive]
		if !ok {
			si = -1
		}
		if row.BaseDrive != nil && si >= 0 {
			if bi, ok := index[row.BaseDrive]; ok {
				d.Series[si].Base = bi
			}
		}
		if row.Run == base {
			continue
		}
		dj := compareDeltaJS{Run: runs[row.Run].Label, Drive: row.Drive.Name, BaseDrive: analysis.Dash, Series: si, Cells: []string{}}
		if row.BaseDrive != nil {
			dj.BaseDrive = row.BaseDrive.Name
		}
		for j := range row.Deltas {
			dj.Cells = append(dj.Cells, analysis.FormatCompareDelta(row, j))
		}
		d.Deltas = append(d.Deltas, dj)
	}
	js, err := json.Marshal(d)
	if err != nil {
		return nil, fmt.Errorf("html: compare: encoding the page data: %w", err)
	}
	for name, s := range map[string]string{"uPlot.iife.min.js": uplotJS, "core.js": coreJS, "compare.js": compareJS} {
		if strings.Contains(strings.ToLower(s), "</script") {
			return nil, fmt.Errorf("html: %s contains </script and cannot be inlined", name)
		}
	}
	var labels []string
	for _, r := range runs {
		labels = append(labels, r.Label)
	}
	// json.Marshal escapes < and >, so no drive name ends the data's
	// <script> element early.
	var out bytes.Buffer
	err = comparePage.Execute(&out, map[string]any{
		"Title": template.HTMLEscapeString("idlewatt comparison: " + strings.Join(labels, ", ")), "UplotCSS": uplotCSS, "AppCSS": appCSS,
		"UplotJS": uplotJS, "CoreJS": coreJS, "JS": compareJS, "Data": string(js),
	})
	if err != nil {
		return nil, fmt.Errorf("html: compare: rendering: %w", err)
	}
	return out.Bytes(), nil
}
