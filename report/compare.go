package report

import (
	"bytes"
	"encoding/csv"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/idlewatt/idlewatt/analysis"
	"github.com/idlewatt/idlewatt/internal/outfile"
	"github.com/idlewatt/idlewatt/report/chart"
)

// Compare writes compare.md (side-by-side table and deltas against the
// first report), compare.csv, compare.json and the review-style bar charts
// active-idle.png and average.png for every drive of every report into dir. labels name the runs (e.g. file names); a drive's
// bar is "run: drive" when there are several runs. It refuses to replace
// existing files; see CompareWith.
func Compare(reports []*analysis.Report, labels []string, dir string) error {
	return CompareWith(reports, labels, 0, dir, outfile.Options{})
}

// CompareFiles are the names Compare may write into its directory.
var CompareFiles = []string{"compare.md", "compare.csv", "compare.json", FileIdle, FileAverage}

// CompareWith writes what Compare writes under o (internal/outfile): an
// existing file only with o.Overwrite, never through a symbolic link or
// over one of o.Inputs (the report.json files compared), every file
// through a temporary file renamed into place. Deltas are against
// reports[base] (CompareDeltas).
func CompareWith(reports []*analysis.Report, labels []string, base int, dir string, o outfile.Options) error {
	if len(reports) == 0 {
		return errors.New("compare: no reports")
	}
	if base < 0 || base >= len(reports) || len(labels) != len(reports) {
		return fmt.Errorf("compare: baseline %d of %d reports (%d labels)", base+1, len(reports), len(labels))
	}
	for i, r := range reports {
		if err := analysis.CheckCompareInput(r); err != nil {
			return fmt.Errorf("%s: %w", labels[i], err)
		}
	}
	rows := analysis.CompareDeltas(reports, base)
	if err := outfile.Dir(dir); err != nil {
		return err
	}
	var md strings.Builder
	md.WriteString("# Comparison\n\nActive idle, average and energy with their 95 % intervals; — where a run did not measure the value.\n\n| Run | Drive | Active idle (W) | Average (W) | Peak 1 s (W) | Energy (J) | Measured (s) | DevSlp (mW) | Dropped |\n|---|---|---:|---:|---:|---:|---:|---:|---:|\n")
	var cb bytes.Buffer
	cw := csv.NewWriter(&cb)
	cw.Write(CompareCSVHeader())
	for _, row := range rows {
		var rec []string
		for _, f := range compareFields(row, labels, base) {
			rec = append(rec, f.csv())
		}
		cw.Write(rec)
	}
	var idle, avg []chart.Bar
	for i, r := range reports {
		for _, d := range r.Drives {
			label := d.Name
			if len(reports) > 1 {
				label = labels[i] + ": " + d.Name
			}
			ds := math.NaN() // a drive that never entered DevSlp has no DevSlp power
			if d.DevSlp.PowerW.Ok() {
				ds = float64(d.DevSlp.PowerW)
			}
			fmt.Fprintf(&md, "| %s | %s | %s | %s | %s | %s | %.3f | %s | %d |\n", mdCell(labels[i]), mdCell(d.Name), analysis.FormatPM(d.ActiveIdleW, d.ActiveIdleU95W, 4), analysis.FormatPM(d.AverageW, d.AverageU95W, 4),
				analysis.FormatV(d.PeakWindows.W1s, 4), analysis.FormatPM(d.EnergyJ, d.EnergyU95J, 3), d.DurationS, analysis.FormatV(ds*1e3, 3), d.Samples.Dropped)
			if d.Samples.Count > 0 && !math.IsNaN(float64(d.ActiveIdleW)) {
				idle = append(idle, chart.Bar{Label: label, Value: float64(d.ActiveIdleW), Err: barErr(d.ActiveIdleU95W)})
			}
			if d.Samples.Count > 0 && !math.IsNaN(float64(d.AverageW)) {
				avg = append(avg, chart.Bar{Label: label, Value: float64(d.AverageW), Err: barErr(d.AverageU95W)})
			}
		}
	}
	cw.Flush()
	if err := cw.Error(); err != nil {
		return err
	}
	if err := outfile.WriteFile(filepath.Join(dir, "compare.csv"), cb.Bytes(), o); err != nil {
		return err
	}
	md.WriteString(compareDeltaMD(rows, labels, base))
	notes := analysis.CompareNotes(reports, labels)
	js, err := compareJSON(rows, labels, base, notes)
	if err != nil {
		return err
	}
	if err := outfile.WriteFile(filepath.Join(dir, "compare.json"), js, o); err != nil {
		return err
	}
	md.WriteString(compareAnnotationsMD(reports, labels))
	if len(notes) > 0 {
		md.WriteString("\n## Notes\n\n")
		for _, n := range notes {
			md.WriteString("- " + mdCell(n) + "\n")
		}
	}
	if err := outfile.WriteFile(filepath.Join(dir, "compare.md"), []byte(md.String()), o); err != nil {
		return err
	}
	var e1, e2 error
	if len(idle) > 0 {
		fi, err := chart.ActiveIdlePower(idle)
		e1 = saveFig(fi, err, filepath.Join(dir, FileIdle), o)
	}
	if len(avg) > 0 {
		fa, err := chart.AveragePower(avg, "Run")
		e2 = saveFig(fa, err, filepath.Join(dir, FileAverage), o)
	}
	return errors.Join(e1, e2)
}

// compareField is one column of compare.csv and one key of a compare.json
// row, in the same order: text when isText, else num (NaN: empty / null).
type compareField struct {
	name   string
	text   string
	num    float64
	isText bool
	isInt  bool
}

func ptrNaN[Q ~float64](u *Q) float64 {
	if u == nil {
		return math.NaN()
	}
	return float64(*u)
}

// compareFields are a row's columns: the report's values (compare.csv's
// first-release columns first), then the baseline and the deltas.
func compareFields(row analysis.CompareRow, labels []string, base int) []compareField {
	d := row.Drive
	ds, dsu := analysis.DevSlpValue(d)
	txt := func(n, s string) compareField { return compareField{name: n, text: s, isText: true} }
	num := func(n string, x float64) compareField { return compareField{name: n, num: x} }
	integer := func(n string, x float64) compareField { return compareField{name: n, num: x, isInt: true} }
	fs := []compareField{txt("run", labels[row.Run]), txt("drive", d.Name), integer("port", float64(d.Port)),
		num("active_idle_w", float64(d.ActiveIdleW)), num("average_w", float64(d.AverageW)), num("peak_w", float64(d.PeakW)), num("peak_1s_w", float64(d.PeakWindows.W1s)),
		num("energy_j", float64(d.EnergyJ)), num("duration_s", float64(d.DurationS)), num("devslp_power_w", ds), integer("dropped", float64(d.Samples.Dropped)),
		num("active_idle_u95_w", ptrNaN(d.ActiveIdleU95W)), num("average_u95_w", ptrNaN(d.AverageU95W)), num("energy_u95_j", ptrNaN(d.EnergyU95J)),
		num("devslp_power_u95_w", ptrNaN(dsu)), txt("baseline_run", labels[base])}
	bd := ""
	if row.BaseDrive != nil {
		bd = row.BaseDrive.Name
	}
	fs = append(fs, txt("baseline_drive", bd))
	for j, f := range analysis.CompareKeys() {
		dl := row.Deltas[j]
		fs = append(fs, num("delta_"+f.Key+"_"+f.Unit, dl.Diff), num("delta_"+f.Key+"_u95_"+f.Unit, ptrNaN(dl.DiffU95)), num("delta_"+f.Key+"_pct", dl.RelPct))
	}
	return fs
}

// CompareCSVHeader is compare.csv's header row.
func CompareCSVHeader() []string {
	var h []string
	for _, f := range compareFields(analysis.CompareRow{Drive: &analysis.DriveReport{}, Deltas: make([]analysis.Delta, len(analysis.CompareKeys()))}, []string{""}, 0) {
		h = append(h, f.name)
	}
	return h
}

func (f compareField) csv() string {
	switch {
	case f.isText:
		return f.text
	case f.isInt:
		return strconv.FormatFloat(f.num, 'f', 0, 64)
	}
	return csvFloat(f.num)
}

// compareJSON is compare.json: the schema, the baseline run, the notes and
// one object per row with compare.csv's keys (null where the cell is empty).
func compareJSON(rows []analysis.CompareRow, labels []string, base int, notes []string) ([]byte, error) {
	var b bytes.Buffer
	put := func(v any) {
		j, _ := json.Marshal(v) // strings and slices of strings only
		b.Write(j)
	}
	b.WriteString(`{"schema":`)
	put(analysis.CompareSchema)
	b.WriteString(`,"baseline_run":`)
	put(labels[base])
	b.WriteString(`,"baseline_index":`)
	put(base + 1)
	b.WriteString(`,"notes":`)
	if notes == nil {
		notes = []string{}
	}
	put(notes)
	b.WriteString(`,"rows":[`)
	for i, row := range rows {
		if i > 0 {
			b.WriteByte(',')
		}
		b.WriteString("\n  {")
		for k, f := range compareFields(row, labels, base) {
			if k > 0 {
				b.WriteByte(',')
			}
			put(f.name)
			b.WriteByte(':')
			switch {
			case f.isText:
				put(f.text)
			case math.IsNaN(f.num) || math.IsInf(f.num, 0):
				b.WriteString("null")
			default:
				b.WriteString(strconv.FormatFloat(f.num, 'g', -1, 64))
			}
		}
		b.WriteByte('}')
	}
	b.WriteString("\n]}\n")
	if !json.Valid(b.Bytes()) {
		return nil, fmt.Errorf("compare.json: internal error, invalid JSON")
	}
	return b.Bytes(), nil
}

// compareDeltaMD is compare.md's delta section; empty for one run.
func compareDeltaMD(rows []analysis.CompareRow, labels []string, base int) string {
	if len(labels) < 2 {
		return ""
	}
	var md strings.Builder
	fmt.Fprintf(&md, "\n## Deltas against %s\n\nEach figure minus the baseline drive's (the drive of %s with the same name, else the same port, else its only drive), "+
		"± √(u² + u_base²) from the two 95 %% half-widths where both reports state one, and in parentheses relative to the baseline; — where either side did not measure the value.\n\n",
		mdCell(labels[base]), mdCell(labels[base]))
	md.WriteString("| Run | Drive | Baseline drive |")
	cols := analysis.CompareColumns()
	for _, c := range cols {
		md.WriteString(" " + c + " |")
	}
	md.WriteString("\n|---|---|---|" + strings.Repeat("---:|", len(cols)) + "\n")
	for _, row := range rows {
		if row.Run == base {
			continue
		}
		bd := analysis.Dash
		if row.BaseDrive != nil {
			bd = mdCell(row.BaseDrive.Name)
		}
		fmt.Fprintf(&md, "| %s | %s | %s |", mdCell(labels[row.Run]), mdCell(row.Drive.Name), bd)
		for j := range row.Deltas {
			md.WriteString(" " + analysis.FormatCompareDelta(row, j) + " |")
		}
		md.WriteByte('\n')
	}
	return md.String()
}

// compareAnnotationsMD lists each run's annotations (report.json's
// annotations), their text made inert; "" when no run has any.
func compareAnnotationsMD(reports []*analysis.Report, labels []string) string {
	var b strings.Builder
	for i, r := range reports {
		for _, n := range r.Annotations {
			if b.Len() == 0 {
				b.WriteString("\n## Annotations\n\nEach run's notes (`idlewatt annotate`), in seconds of its own timeline.\n\n| Run | At (s) | To (s) | Note |\n|---|---:|---:|---|\n")
			}
			to := "–"
			if n.ToS != nil {
				to = g(*n.ToS)
			}
			fmt.Fprintf(&b, "| %s | %s | %s | %s |\n", mdCell(labels[i]), g(n.AtS), to, mdText(n.Text))
		}
	}
	return b.String()
}
