package analysis

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math"
	"strconv"
	"strings"
)

// CompareSchema is the value of compare.json's "schema".
const CompareSchema = "idlewatt.compare/v1"

// compareFigure is one headline figure compare sets against the baseline.
type compareFigure struct {
	key    string // CSV/JSON stem: delta_<key>_<unit>, delta_<key>_u95_<unit>, delta_<key>_pct
	unit   string // "w" or "j"
	md     string // compare.md column
	scale  float64
	digits int
	value  func(*DriveReport) (float64, *float64) // the report's value and its 95 % half-width (nil: none stated)
}

// CompareColumns are the headings of the delta table (compare.md and
// compare.html), one per CompareRow.Deltas entry.
func CompareColumns() []string {
	var h []string
	for _, f := range compareFigures {
		h = append(h, f.md)
	}
	return h
}

// FormatCompareDelta is delta j of row as compare.md shows it.
func FormatCompareDelta(row CompareRow, j int) string {
	f := compareFigures[j]
	return formatDelta(row.Deltas[j], f.scale, f.digits)
}

// compareFigures are the figures with a delta, in column order.
var compareFigures = []compareFigure{
	{"active_idle", "w", "Δ Active idle (W)", 1, 4, func(d *DriveReport) (float64, *float64) { return d.ActiveIdleW, d.ActiveIdleU95W }},
	{"average", "w", "Δ Average (W)", 1, 4, func(d *DriveReport) (float64, *float64) { return d.AverageW, d.AverageU95W }},
	{"peak_1s", "w", "Δ Peak 1 s (W)", 1, 4, func(d *DriveReport) (float64, *float64) { return d.PeakWindows.W1s, nil }},
	{"energy", "j", "Δ Energy (J)", 1, 3, func(d *DriveReport) (float64, *float64) { return d.EnergyJ, d.EnergyU95J }},
	{"devslp_power", "w", "Δ DevSlp (mW)", 1e3, 3, devslpValue},
}

// devslpValue is a drive's DevSlp power with the floor's half-width when
// the power is the pin cycles' floor; NaN for a drive that never entered
// DevSlp.
func devslpValue(d *DriveReport) (float64, *float64) {
	ds := &d.DevSlp
	if !ds.PowerW.Ok() {
		return math.NaN(), nil
	}
	if ds.FloorW.Ok() && ds.FloorU95W.Ok() && ds.FloorW == ds.PowerW {
		u := float64(ds.FloorU95W)
		return float64(ds.PowerW), &u
	}
	return float64(ds.PowerW), nil
}

// Delta is one figure of a drive set against the baseline drive's.
type Delta struct {
	Value, Base float64 // the two reports' values; NaN where not measured
	// Diff is Value − Base, NaN when either is NaN. DiffU95 is the 95 %
	// half-width of Diff, √(u² + u_base²), when both reports state an
	// interval (the runs' errors taken as independent), else nil.
	Diff    float64
	DiffU95 *float64
	RelPct  float64 // 100·Diff/Base; NaN when Diff is NaN or Base is 0
}

// newDelta sets value x (half-width u) against base b (half-width ub).
func newDelta(x float64, u *float64, b float64, ub *float64) Delta {
	d := Delta{Value: x, Base: b, Diff: math.NaN(), RelPct: math.NaN()}
	if math.IsNaN(x) || math.IsNaN(b) {
		return d
	}
	d.Diff = x - b
	if u != nil && ub != nil && !math.IsNaN(*u) && !math.IsNaN(*ub) {
		s := math.Hypot(*u, *ub)
		d.DiffU95 = &s
	}
	if b != 0 {
		d.RelPct = 100 * d.Diff / b
	}
	return d
}

// CompareRow is one drive of one run with its deltas against the baseline.
type CompareRow struct {
	Run   int // index into the reports
	Drive *DriveReport
	// BaseDrive is the baseline run's drive it is set against: the one of
	// the same name, else the same port, else the baseline's only drive;
	// nil for the baseline run's own drives and when none matches (then
	// every delta is NaN).
	BaseDrive *DriveReport
	Deltas    []Delta // one per compareFigures entry
}

// CompareDeltas sets every drive of every report against the baseline
// report reports[base] (see CompareRow.BaseDrive). Rows are in report order,
// drives in report order.
func CompareDeltas(reports []*Report, base int) []CompareRow {
	var rows []CompareRow
	for i, r := range reports {
		for k := range r.Drives {
			d := &r.Drives[k]
			row := CompareRow{Run: i, Drive: d}
			if i != base {
				row.BaseDrive = baselineDrive(reports[base], d)
			}
			for _, f := range compareFigures {
				x, u := f.value(d)
				if row.BaseDrive == nil {
					row.Deltas = append(row.Deltas, newDelta(x, u, math.NaN(), nil))
					continue
				}
				b, ub := f.value(row.BaseDrive)
				row.Deltas = append(row.Deltas, newDelta(x, u, b, ub))
			}
			rows = append(rows, row)
		}
	}
	return rows
}

func baselineDrive(b *Report, d *DriveReport) *DriveReport {
	for k := range b.Drives {
		if b.Drives[k].Name == d.Name {
			return &b.Drives[k]
		}
	}
	for k := range b.Drives {
		if b.Drives[k].Port == d.Port {
			return &b.Drives[k]
		}
	}
	if len(b.Drives) == 1 {
		return &b.Drives[0]
	}
	return nil
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

func ptrNaN(u *float64) float64 {
	if u == nil {
		return math.NaN()
	}
	return *u
}

// compareFields are a row's columns: the report's values (compare.csv's
// first-release columns first), then the baseline and the deltas.
func compareFields(row CompareRow, labels []string, base int) []compareField {
	d := row.Drive
	ds, dsu := devslpValue(d)
	txt := func(n, s string) compareField { return compareField{name: n, text: s, isText: true} }
	num := func(n string, x float64) compareField { return compareField{name: n, num: x} }
	integer := func(n string, x float64) compareField { return compareField{name: n, num: x, isInt: true} }
	fs := []compareField{txt("run", labels[row.Run]), txt("drive", d.Name), integer("port", float64(d.Port)),
		num("active_idle_w", d.ActiveIdleW), num("average_w", d.AverageW), num("peak_w", d.PeakW), num("peak_1s_w", d.PeakWindows.W1s),
		num("energy_j", d.EnergyJ), num("duration_s", d.DurationS), num("devslp_power_w", ds), integer("dropped", float64(d.Samples.Dropped)),
		num("active_idle_u95_w", ptrNaN(d.ActiveIdleU95W)), num("average_u95_w", ptrNaN(d.AverageU95W)), num("energy_u95_j", ptrNaN(d.EnergyU95J)),
		num("devslp_power_u95_w", ptrNaN(dsu)), txt("baseline_run", labels[base])}
	bd := ""
	if row.BaseDrive != nil {
		bd = row.BaseDrive.Name
	}
	fs = append(fs, txt("baseline_drive", bd))
	for j, f := range compareFigures {
		dl := row.Deltas[j]
		fs = append(fs, num("delta_"+f.key+"_"+f.unit, dl.Diff), num("delta_"+f.key+"_u95_"+f.unit, ptrNaN(dl.DiffU95)), num("delta_"+f.key+"_pct", dl.RelPct))
	}
	return fs
}

// CompareCSVHeader is compare.csv's header row.
func CompareCSVHeader() []string {
	var h []string
	for _, f := range compareFields(CompareRow{Drive: &DriveReport{}, Deltas: make([]Delta, len(compareFigures))}, []string{""}, 0) {
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
func compareJSON(rows []CompareRow, labels []string, base int, notes []string) ([]byte, error) {
	var b bytes.Buffer
	put := func(v any) {
		j, _ := json.Marshal(v) // strings and slices of strings only
		b.Write(j)
	}
	b.WriteString(`{"schema":`)
	put(CompareSchema)
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
func compareDeltaMD(rows []CompareRow, labels []string, base int) string {
	if len(labels) < 2 {
		return ""
	}
	var md strings.Builder
	fmt.Fprintf(&md, "\n## Deltas against %s\n\nEach figure minus the baseline drive's (the drive of %s with the same name, else the same port, else its only drive), "+
		"± √(u² + u_base²) from the two 95 %% half-widths where both reports state one, and in parentheses relative to the baseline; — where either side did not measure the value.\n\n",
		labels[base], labels[base])
	md.WriteString("| Run | Drive | Baseline drive |")
	for _, f := range compareFigures {
		md.WriteString(" " + f.md + " |")
	}
	md.WriteString("\n|---|---|---|" + strings.Repeat("---:|", len(compareFigures)) + "\n")
	for _, row := range rows {
		if row.Run == base {
			continue
		}
		bd := Dash
		if row.BaseDrive != nil {
			bd = row.BaseDrive.Name
		}
		fmt.Fprintf(&md, "| %s | %s | %s |", labels[row.Run], row.Drive.Name, bd)
		for j, f := range compareFigures {
			md.WriteString(" " + formatDelta(row.Deltas[j], f.scale, f.digits) + " |")
		}
		md.WriteByte('\n')
	}
	return md.String()
}

// formatDelta is "+0.0123 ± 0.0010 (+3.5 %)": the difference (times
// scale) signed, its half-width, the relative difference; Dash when the
// difference is not measured.
func formatDelta(d Delta, scale float64, digits int) string {
	if math.IsNaN(d.Diff) {
		return Dash
	}
	var u *float64
	if d.DiffU95 != nil {
		s := *d.DiffU95 * scale
		u = &s
	}
	s := FormatPM(d.Diff*scale, u, digits)
	if s[0] != '-' {
		s = "+" + s
	}
	if !math.IsNaN(d.RelPct) {
		s += fmt.Sprintf(" (%+.1f %%)", d.RelPct)
	}
	return s
}
