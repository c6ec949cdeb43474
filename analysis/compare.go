package analysis

import (
	"bytes"
	"encoding/csv"
	"errors"
	"fmt"
	"github.com/idlewatt/idlewatt/analysis/states"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/idlewatt/idlewatt/analysis/chart"
	"github.com/idlewatt/idlewatt/internal/outfile"
)

// Compare writes compare.md (side-by-side table), compare.csv and the
// review-style bar charts active-idle.png and average.png for every drive of
// every report into dir. labels name the runs (e.g. file names); a drive's
// bar is "run: drive" when there are several runs. It refuses to replace
// existing files; see CompareWith.
func Compare(reports []*Report, labels []string, dir string) error {
	return CompareWith(reports, labels, dir, outfile.Options{})
}

// CompareFiles are the names Compare may write into its directory.
var CompareFiles = []string{"compare.md", "compare.csv", FileIdle, FileAverage}

// CompareWith writes what Compare writes under o (internal/outfile): an
// existing file only with o.Overwrite, never through a symbolic link or
// over one of o.Inputs (the report.json files compared), every file
// through a temporary file renamed into place.
func CompareWith(reports []*Report, labels []string, dir string, o outfile.Options) error {
	if len(reports) == 0 {
		return errors.New("compare: no reports")
	}
	if err := outfile.Dir(dir); err != nil {
		return err
	}
	var md strings.Builder
	md.WriteString("# Comparison\n\n| Run | Drive | Active idle (W) | Average (W) | Peak 1 s (W) | Energy (J) | Measured (s) | DevSlp (mW) | Dropped |\n|---|---|---:|---:|---:|---:|---:|---:|---:|\n")
	var cb bytes.Buffer
	cw := csv.NewWriter(&cb)
	cw.Write([]string{"run", "drive", "port", "active_idle_w", "average_w", "peak_w", "peak_1s_w", "energy_j", "duration_s", "devslp_power_w", "dropped"})
	ff := func(x float64) string { return strconv.FormatFloat(x, 'f', 6, 64) }
	ffn := func(x states.Num) string { // absent: an empty cell
		if !x.Ok() {
			return ""
		}
		return ff(float64(x))
	}
	var idle, avg []chart.Bar
	for i, r := range reports {
		for _, d := range r.Drives {
			label := d.Name
			if len(reports) > 1 {
				label = labels[i] + ": " + d.Name
			}
			fmt.Fprintf(&md, "| %s | %s | %.4f | %.4f | %.4f | %.3f | %.3f | %s | %d |\n", labels[i], d.Name, d.ActiveIdleW, d.AverageW, d.PeakWindows.W1s, d.EnergyJ, d.DurationS, states.PM(d.DevSlp.PowerW, states.None, 1e3), d.Samples.Dropped)
			cw.Write([]string{labels[i], d.Name, strconv.Itoa(d.Port), ff(d.ActiveIdleW), ff(d.AverageW), ff(d.PeakW), ff(d.PeakWindows.W1s), ff(d.EnergyJ), ff(d.DurationS), ffn(d.DevSlp.PowerW), strconv.FormatUint(d.Samples.Dropped, 10)})
			if d.Samples.Count > 0 {
				idle = append(idle, chart.Bar{Label: label, Value: d.ActiveIdleW})
				avg = append(avg, chart.Bar{Label: label, Value: d.AverageW})
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
	if err := outfile.WriteFile(filepath.Join(dir, "compare.md"), []byte(md.String()), o); err != nil {
		return err
	}
	if len(idle) == 0 {
		return nil
	}
	fi, err := chart.ActiveIdlePower(idle)
	e1 := saveFig(fi, err, filepath.Join(dir, FileIdle), o)
	fa, err := chart.AveragePower(avg, "Run")
	return errors.Join(e1, saveFig(fa, err, filepath.Join(dir, FileAverage), o))
}
