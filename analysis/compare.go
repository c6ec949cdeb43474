package analysis

import (
	"bytes"
	"encoding/csv"
	"errors"
	"fmt"
	"math"
	"path/filepath"
	"sort"
	"strings"

	"github.com/idlewatt/idlewatt/internal/outfile"
	"github.com/idlewatt/idlewatt/report/chart"
)

// Compare writes compare.md (side-by-side table and deltas against the
// first report), compare.csv, compare.json and the review-style bar charts
// active-idle.png and average.png for every drive of every report into dir. labels name the runs (e.g. file names); a drive's
// bar is "run: drive" when there are several runs. It refuses to replace
// existing files; see CompareWith.
func Compare(reports []*Report, labels []string, dir string) error {
	return CompareWith(reports, labels, 0, dir, outfile.Options{})
}

// CompareFiles are the names Compare may write into its directory.
var CompareFiles = []string{"compare.md", "compare.csv", "compare.json", FileIdle, FileAverage}

// CompareWith writes what Compare writes under o (internal/outfile): an
// existing file only with o.Overwrite, never through a symbolic link or
// over one of o.Inputs (the report.json files compared), every file
// through a temporary file renamed into place. Deltas are against
// reports[base] (CompareDeltas).
func CompareWith(reports []*Report, labels []string, base int, dir string, o outfile.Options) error {
	if len(reports) == 0 {
		return errors.New("compare: no reports")
	}
	if base < 0 || base >= len(reports) || len(labels) != len(reports) {
		return fmt.Errorf("compare: baseline %d of %d reports (%d labels)", base+1, len(reports), len(labels))
	}
	for i, r := range reports {
		if err := CheckCompareInput(r); err != nil {
			return fmt.Errorf("%s: %w", labels[i], err)
		}
	}
	rows := CompareDeltas(reports, base)
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
			fmt.Fprintf(&md, "| %s | %s | %s | %s | %s | %s | %.3f | %s | %d |\n", labels[i], d.Name, FormatPM(d.ActiveIdleW, d.ActiveIdleU95W, 4), FormatPM(d.AverageW, d.AverageU95W, 4),
				FormatV(d.PeakWindows.W1s, 4), FormatPM(d.EnergyJ, d.EnergyU95J, 3), d.DurationS, FormatV(ds*1e3, 3), d.Samples.Dropped)
			if d.Samples.Count > 0 && !math.IsNaN(d.ActiveIdleW) {
				idle = append(idle, chart.Bar{Label: label, Value: d.ActiveIdleW, Err: barErr(d.ActiveIdleU95W)})
			}
			if d.Samples.Count > 0 && !math.IsNaN(d.AverageW) {
				avg = append(avg, chart.Bar{Label: label, Value: d.AverageW, Err: barErr(d.AverageU95W)})
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
	notes := CompareNotes(reports, labels)
	js, err := compareJSON(rows, labels, base, notes)
	if err != nil {
		return err
	}
	if err := outfile.WriteFile(filepath.Join(dir, "compare.json"), js, o); err != nil {
		return err
	}
	if len(notes) > 0 {
		md.WriteString("\n## Notes\n\n")
		for _, n := range notes {
			md.WriteString("- " + n + "\n")
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

// CompareNotes says what makes the runs' averages and energies not
// comparable as they stand: different workloads (their "workload:" phases)
// or measured durations more than 10 % apart. Empty for one run.
func CompareNotes(reports []*Report, labels []string) []string {
	if len(reports) < 2 {
		return nil
	}
	var notes []string
	wl := func(r *Report) string {
		seen := map[string]bool{}
		var w []string
		for _, d := range r.Drives {
			for _, ph := range d.Phases {
				if strings.HasPrefix(ph.Name, "workload:") && !seen[ph.Name] {
					seen[ph.Name] = true
					w = append(w, ph.Name)
				}
			}
		}
		sort.Strings(w)
		if len(w) == 0 {
			return "no workload"
		}
		return strings.Join(w, ", ")
	}
	first := wl(reports[0])
	for i, r := range reports[1:] {
		if w := wl(r); w != first {
			notes = append(notes, fmt.Sprintf("the runs played different workloads (%s: %s; %s: %s): their averages and energies compare different work, not only different drives", labels[0], first, labels[i+1], w))
			break
		}
	}
	lo, hi := math.Inf(1), math.Inf(-1)
	var loL, hiL string
	for i, r := range reports {
		for _, d := range r.Drives {
			if d.Samples.Count == 0 {
				continue
			}
			if d.DurationS < lo {
				lo, loL = d.DurationS, labels[i]
			}
			if d.DurationS > hi {
				hi, hiL = d.DurationS, labels[i]
			}
		}
	}
	if lo > 0 && hi > 1.1*lo {
		notes = append(notes, fmt.Sprintf("measured durations differ (%.1f s in %s, %.1f s in %s): energies scale with duration; compare averages", lo, loL, hi, hiL))
	}
	return notes
}

// MaxCompareW bounds a headline power compare accepts: the bound above
// which the analysis treats a sample as invalid (|V·I| > 1 MW), so no
// report idlewatt wrote from a capture can exceed it.
const MaxCompareW = 1e6

// maxCompareS bounds a measured duration compare accepts (about 32 years).
const maxCompareS = 1e9

// CheckCompareInput refuses a report whose headline values — the ones
// compare tables and charts — are impossible: ±Inf, negative, or beyond
// MaxCompareW (energy beyond MaxCompareW × duration_s), naming the key as
// drives[i].key. null (NaN, not measured) is accepted: compare shows it as
// —. A hand-edited or damaged report.json with active_idle_w −1e308 used
// to be charted without a note.
func CheckCompareInput(r *Report) error {
	for i, d := range r.Drives {
		dur := d.DurationS
		if math.IsNaN(dur) {
			dur = 0
		}
		for _, v := range []struct {
			key string
			val float64
			max float64
		}{
			{"duration_s", d.DurationS, maxCompareS},
			{"active_idle_w", d.ActiveIdleW, MaxCompareW},
			{"average_w", d.AverageW, MaxCompareW},
			{"peak_w", d.PeakW, MaxCompareW},
			{"peak_windows.1s_w", d.PeakWindows.W1s, MaxCompareW},
			{"energy_j", d.EnergyJ, MaxCompareW * math.Min(dur, maxCompareS)},
			{"devslp.power_w", float64(d.DevSlp.PowerW), MaxCompareW},
			{"active_idle_u95_w", deref(d.ActiveIdleU95W), MaxCompareW},
			{"average_u95_w", deref(d.AverageU95W), MaxCompareW},
			{"energy_u95_j", deref(d.EnergyU95J), MaxCompareW * math.Min(dur, maxCompareS)},
		} {
			x := v.val
			switch {
			case math.IsNaN(x): // null: not measured
			case math.IsInf(x, 0):
				return fmt.Errorf("drives[%d].%s (drive %q): %g is not a finite number", i, v.key, d.Name, x)
			case x < 0:
				return fmt.Errorf("drives[%d].%s (drive %q): %g is negative, not a drive's power, energy or duration; compare refuses it rather than chart it", i, v.key, d.Name, x)
			case x > v.max:
				return fmt.Errorf("drives[%d].%s (drive %q): %g is beyond any drive's (at most %g); compare refuses it rather than chart it", i, v.key, d.Name, x, v.max)
			}
		}
	}
	return nil
}

// deref is *u, or NaN (not measured) for nil.
func deref(u *float64) float64 {
	if u == nil {
		return math.NaN()
	}
	return *u
}
