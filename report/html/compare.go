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
	Baseline string           `json:"baseline_run"`
	Series   []compareSeries  `json:"series"`
	Columns  []string         `json:"columns"`
	Deltas   []compareDeltaJS `json:"deltas"`
	Notes    []string         `json:"notes"`
}

// compareSeries is one drive of one run: its buckets as in report.html
// (seriesData), on its own run's time axis (seconds from its start).
type compareSeries struct {
	Run    string     `json:"run"`
	Drive  string     `json:"drive"`
	DtS    float64    `json:"dt_s"`
	WidthS float64    `json:"width_s"`
	Total  seriesData `json:"total"`
}

// compareDeltaJS is a row of the delta table, its cells as compare.md
// shows them.
type compareDeltaJS struct {
	Run       string   `json:"run"`
	Drive     string   `json:"drive"`
	BaseDrive string   `json:"baseline_drive"`
	Cells     []string `json:"cells"`
}

// WriteCompare writes compare.html to path: every drive of every run,
// overlaid on one time axis (seconds from each run's start), with the
// deltas against runs[base] (analysis.CompareDeltas) and notes. Each
// Pyramid must have been analysis.Options.Samples of an analysis of the
// run's capture.
func WriteCompare(path string, runs []CompareRun, base int, notes []string, o outfile.Options) error {
	if len(runs) == 0 || base < 0 || base >= len(runs) {
		return errors.New("html: compare: no runs, or no such baseline")
	}
	d := compareData{Schema: "idlewatt.compare-html/v1", Uplot: UplotVersion, Baseline: runs[base].Label, Series: []compareSeries{},
		Columns: analysis.CompareColumns(), Deltas: []compareDeltaJS{}, Notes: append([]string{}, notes...)}
	var reps []*analysis.Report
	for _, r := range runs {
		if r.Report == nil || r.Pyramid == nil {
			return fmt.Errorf("html: compare: run %s has no report or no pyramid", r.Label)
		}
		reps = append(reps, r.Report)
		p := r.Pyramid
		p.finish()
		for _, dr := range r.Report.Drives {
			l := p.drives[dr.Port]
			if l == nil {
				continue
			}
			d.Series = append(d.Series, compareSeries{Run: r.Label, Drive: dr.Name, DtS: p.dt, WidthS: p.width(), Total: encode(l, p.dt, false)})
		}
	}
	for _, row := range analysis.CompareDeltas(reps, base) {
		if row.Run == base {
			continue
		}
		dj := compareDeltaJS{Run: runs[row.Run].Label, Drive: row.Drive.Name, BaseDrive: analysis.Dash, Cells: []string{}}
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
		return fmt.Errorf("html: compare: encoding the page data: %w", err)
	}
	for name, s := range map[string]string{"uPlot.iife.min.js": uplotJS, "compare.js": compareJS} {
		if strings.Contains(strings.ToLower(s), "</script") {
			return fmt.Errorf("html: %s contains </script and cannot be inlined", name)
		}
	}
	var labels []string
	for _, r := range runs {
		labels = append(labels, r.Label)
	}
	// json.Marshal escapes < and >, so no drive name ends the data's
	// <script> element early.
	data := string(js)
	var out bytes.Buffer
	err = comparePage.Execute(&out, map[string]any{
		"Title": template.HTMLEscapeString("idlewatt comparison: " + strings.Join(labels, ", ")), "UplotCSS": uplotCSS, "AppCSS": appCSS,
		"UplotJS": uplotJS, "JS": compareJS, "Data": data,
	})
	if err != nil {
		return fmt.Errorf("html: compare: rendering: %w", err)
	}
	return outfile.WriteFile(path, out.Bytes(), o)
}
