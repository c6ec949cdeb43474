package analysis

import (
	"fmt"
	"math"
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

// CompareKey is the stem and unit of a delta figure's compare.csv and
// compare.json keys: delta_<Key>_<Unit>, delta_<Key>_u95_<Unit> and
// delta_<Key>_pct.
type CompareKey struct{ Key, Unit string }

// CompareKeys are the delta figures' keys, one per CompareRow.Deltas entry.
func CompareKeys() []CompareKey {
	var k []CompareKey
	for _, f := range compareFigures {
		k = append(k, CompareKey{f.key, f.unit})
	}
	return k
}

// FormatCompareDelta is delta j of row as compare.md shows it.
func FormatCompareDelta(row CompareRow, j int) string {
	f := compareFigures[j]
	return formatDelta(row.Deltas[j], f.scale, f.digits)
}

// compareFigures are the figures with a delta, in column order. A delta
// holds figures of several units (its key says which), so the typed figures
// become plain numbers here.
var compareFigures = []compareFigure{
	{"active_idle", "w", "Δ Active idle (W)", 1, 4, func(d *DriveReport) (float64, *float64) {
		return float64(d.ActiveIdleW), (*float64)(d.ActiveIdleU95W)
	}},
	{"average", "w", "Δ Average (W)", 1, 4, func(d *DriveReport) (float64, *float64) { return float64(d.AverageW), (*float64)(d.AverageU95W) }},
	{"peak_1s", "w", "Δ Peak 1 s (W)", 1, 4, func(d *DriveReport) (float64, *float64) { return float64(d.PeakWindows.W1s), nil }},
	{"energy", "j", "Δ Energy (J)", 1, 3, func(d *DriveReport) (float64, *float64) { return float64(d.EnergyJ), (*float64)(d.EnergyU95J) }},
	{"devslp_power", "w", "Δ DevSlp (mW)", 1e3, 3, DevSlpValue},
}

// DevSlpValue is a drive's DevSlp power with the floor's half-width when
// the power is the pin cycles' floor; NaN for a drive that never entered
// DevSlp.
func DevSlpValue(d *DriveReport) (float64, *float64) {
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
	if num, _, _ := strings.Cut(s, " "); s[0] != '-' && strings.Trim(num, "0.") != "" {
		s = "+" + s // a difference that rounds to zero carries no sign
	}
	if !math.IsNaN(d.RelPct) {
		if rel := fmt.Sprintf("%.1f", math.Abs(d.RelPct)); rel == "0.0" {
			s += " (0.0 %)"
		} else {
			s += fmt.Sprintf(" (%+.1f %%)", d.RelPct)
		}
	}
	return s
}
