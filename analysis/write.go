package analysis

import (
	"bytes"
	"encoding/csv"
	"encoding/json"
	"errors"
	"fmt"
	"github.com/idlewatt/idlewatt/analysis/states"
	"io"
	"math"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/idlewatt/idlewatt/analysis/chart"
	"github.com/idlewatt/idlewatt/internal/outfile"
)

// Files WriteFiles writes into its directory.
const (
	FileJSON    = "report.json"
	FileMD      = "report.md"
	FileCSV     = "summary.csv"
	FilePower   = "power.png"
	FileIdle    = "active-idle.png"
	FileAverage = "average.png"
	FileHist    = "power-hist.png"
	FileCDF     = "power-cdf.png"
)

// ReportFiles are the names WriteFiles may write (charts only when they
// have data), for checking a directory before the work starts.
var ReportFiles = []string{FileJSON, FileMD, FileCSV, FilePower, FileIdle, FileAverage, FileHist, FileCDF, FileStates}

// WriteOptions say how WriteFilesWith writes.
type WriteOptions struct {
	// Out says what may be replaced (internal/outfile): existing files only
	// with Out.Overwrite, never through a symbolic link or over an input.
	// The capture the report is of is always an input.
	Out outfile.Options
	// MarkdownAppendix is appended to report.md (the interface-state
	// section internal/rig adds), so report.md is written once, whole.
	MarkdownAppendix []byte
}

// WriteFiles writes report.json, report.md and summary.csv into dir
// (created if needed) and, when the report has samples, the charts
// power.png, active-idle.png, average.png, power-hist.png and power-cdf.png.
// It refuses to replace an existing file; see WriteFilesWith.
func (r *Report) WriteFiles(dir string) error { return r.WriteFilesWith(dir, WriteOptions{}) }

// WriteFilesWith writes what WriteFiles writes under o. Every file goes
// through a temporary file renamed into place.
func (r *Report) WriteFilesWith(dir string, o WriteOptions) error {
	if err := outfile.Dir(dir); err != nil {
		return err
	}
	fo := o.Out
	if r.Capture.Path != "" {
		fo.Inputs = append(fo.Inputs[:len(fo.Inputs):len(fo.Inputs)], r.Capture.Path)
	}
	var js bytes.Buffer
	if err := r.WriteJSON(&js); err != nil {
		return err
	}
	var md bytes.Buffer
	r.WriteMarkdown(&md)
	md.Write(o.MarkdownAppendix)
	var cs bytes.Buffer
	if err := r.WriteCSV(&cs); err != nil {
		return err
	}
	files := []struct {
		name string
		b    []byte
	}{{FileJSON, js.Bytes()}, {FileMD, md.Bytes()}, {FileCSV, cs.Bytes()}}
	if r.States != nil {
		var st bytes.Buffer
		if err := r.WriteStatesJSON(&st); err != nil {
			return err
		}
		files = append(files, struct {
			name string
			b    []byte
		}{FileStates, st.Bytes()})
	}
	for _, f := range files {
		if err := outfile.WriteFile(filepath.Join(dir, f.name), f.b, fo); err != nil {
			return err
		}
	}
	return r.writeCharts(dir, fo)
}

// WriteCharts writes the charts that have data into dir, refusing to
// replace existing files.
func (r *Report) WriteCharts(dir string) error { return r.writeCharts(dir, outfile.Options{}) }

func (r *Report) writeCharts(dir string, o outfile.Options) error {
	var errs []error
	save := func(f *chart.Figure, err error, name string) {
		errs = append(errs, saveFig(f, err, filepath.Join(dir, name), o))
	}
	if len(r.traces) > 0 {
		names := make([]string, len(r.traces))
		for i, tr := range r.traces {
			names[i] = tr.Name
		}
		title, sub := PowerTitle(names, r.Capture)
		f, err := chart.PowerOverTime(r.traces, chart.PowerOpts{Title: title, Subtitle: sub, Unit: chart.UnitAuto})
		save(f, err, FilePower)
	}
	var idle []chart.Bar
	for _, d := range r.Drives {
		if d.Samples.Count == 0 {
			continue
		}
		if !math.IsNaN(d.ActiveIdleW) {
			idle = append(idle, chart.Bar{Label: d.Name, Value: d.ActiveIdleW, Err: barErr(d.ActiveIdleU95W)})
		}
	}
	if len(idle) > 0 {
		f, err := chart.ActiveIdlePower(idle)
		save(f, err, FileIdle)
	}
	if avg, ao := r.averageChart(); len(avg) > 0 {
		f, err := chart.BarChart(avg, ao)
		save(f, err, FileAverage)
	}
	if len(r.dists) > 0 {
		// The CDF marks the report's own percentiles, not the chart's
		// re-binned estimate of them.
		for i := range r.dists {
			for _, d := range r.Drives {
				if d.Name == r.dists[i].Name {
					r.dists[i].P50, r.dists[i].P99 = d.P50W, d.P99W
				}
			}
		}
		o := chart.DistOpts{Title: "Power distribution", Subtitle: "share of measured time per power bin (log scale: short modes such as DevSlp stay visible)", Unit: chart.UnitAuto, LogY: true}
		f, err := chart.Histogram(r.dists, o)
		save(f, err, FileHist)
		o = chart.DistOpts{Title: "Power CDF", Subtitle: "share of measured time at or below each power; p50 and p99 as in report.json", Unit: chart.UnitAuto}
		f, err = chart.CDF(r.dists, o)
		save(f, err, FileCDF)
	}
	errs = append(errs, r.writeDevSlpCharts(dir, o))
	return errors.Join(errs...)
}

// PowerTitle is the power-over-time chart's title and subtitle: what was
// measured (the drives, or how many), when and with what meter; never a file
// name.
func PowerTitle(drives []string, c CaptureInfo) (title, subtitle string) {
	title = "Power over Time"
	switch {
	case len(drives) == 1:
		title += ": " + drives[0]
	case len(drives) == 2:
		title += ": " + drives[0] + " and " + drives[1]
	case len(drives) > 2:
		title += fmt.Sprintf(": %d drives", len(drives))
	}
	var parts []string
	if c.Created != "" {
		parts = append(parts, "run of "+c.Created)
	}
	if m := strings.TrimSpace(c.MeterKind + " " + c.MeterModel); m != "" {
		if c.RateHz > 0 {
			m += " at " + g(float64(c.RateHz)) + " S/s"
		}
		parts = append(parts, "meter "+m)
	}
	return title, strings.Join(parts, " · ")
}

// barErr is a bar's whisker: the 95 % interval, none when unknown.
func barErr(u *float64) float64 {
	if u == nil || !finite(*u) {
		return 0
	}
	return *u
}

func saveFig(f *chart.Figure, err error, path string, o outfile.Options) error {
	if errors.Is(err, chart.ErrNoData) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("%s: %w", filepath.Base(path), err)
	}
	return f.SaveWith(path, o)
}

// WriteJSON writes report.json's content.
func (r *Report) WriteJSON(w io.Writer) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(r)
}

// ReadJSON reads a report.json written by WriteJSON.
func ReadJSON(rd io.Reader) (*Report, error) {
	var r Report
	if err := json.NewDecoder(rd).Decode(&r); err != nil {
		return nil, err
	}
	if r.Schema != Schema {
		return nil, fmt.Errorf("schema %q, want %q", r.Schema, Schema)
	}
	return &r, nil
}

// LoadJSON reads the report.json at path.
func LoadJSON(path string) (*Report, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	r, err := ReadJSON(f)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return r, nil
}

// WriteMarkdown writes report.md: review-style tables.
func (r *Report) WriteMarkdown(w io.Writer) {
	p := func(format string, a ...any) { fmt.Fprintf(w, format, a...) }
	p("# Power report\n\n")
	if r.Capture.Path != "" {
		p("Capture `%s`", r.Capture.Path)
	} else {
		p("Capture")
	}
	p(": meter %s %s at %s S/s, %.1f s", r.Capture.MeterKind, r.Capture.MeterModel, g(float64(r.Capture.RateHz)), r.Capture.DurationS)
	if r.Capture.Complete {
		p(", complete.\n\n")
	} else {
		p(", **incomplete** (reading stopped at byte %d).\n\n", r.Capture.EndOffset)
	}
	p("## Summary\n\nActive idle, average and energy with their 95 %% intervals (method under Settings).\n\n| Drive | Port | Active idle (W) | Average (W) | Peak (W) | Peak 1 s (W) | Energy (J) | Energy (Wh) | Measured (s) |\n|---|---:|---:|---:|---:|---:|---:|---:|---:|\n")
	for _, d := range r.Drives {
		p("| %s | %d | %s | %s | %s | %s | %s | %s | %.3f |\n", d.Name, d.Port, FormatPM(d.ActiveIdleW, d.ActiveIdleU95W, 4), FormatPM(d.AverageW, d.AverageU95W, 4),
			FormatV(d.PeakW, 4), FormatV(d.PeakWindows.W1s, 4), FormatPM(d.EnergyJ, d.EnergyU95J, 3), FormatV(d.EnergyWh, 6), d.DurationS)
	}
	p("\n## Background bursts\n\nQuiet time (no I/O outstanding, past the settle tail) well above the active-idle level: left out of active idle, reported here.\n\n| Drive | Quiet (s) | Bursts | Burst time (s) | Share of quiet time | Burst mean (W) | Burst energy (J) | Above active idle (J) | Dips |\n|---|---:|---:|---:|---:|---:|---:|---:|---:|\n")
	for _, d := range r.Drives {
		b := d.Bursts
		p("| %s | %.3f | %d | %.3f | %s | %s | %.4f | %.4f | %s |\n", d.Name, b.QuietS, b.Count, b.S, pct(b.Share), FormatV(b.MeanW, 4), b.EnergyJ, b.ExcessJ, pct(b.DipShare))
	}
	p("\n## Peaks and percentiles\n\n| Drive | Peak sample (W) | 1 ms (W) | 10 ms (W) | 100 ms (W) | 1 s (W) | p50 (W) | p95 (W) | p99 (W) |\n|---|---:|---:|---:|---:|---:|---:|---:|---:|\n")
	for _, d := range r.Drives {
		pw := d.PeakWindows
		p("| %s | %s | %s | %s | %s | %s | %s | %s | %s |\n", d.Name, FormatV(d.PeakW, 4), FormatV(pw.W1ms, 4), FormatV(pw.W10ms, 4), FormatV(pw.W100ms, 4), FormatV(pw.W1s, 4),
			FormatV(d.P50W, 4), FormatV(d.P95W, 4), FormatV(d.P99W, 4))
	}
	p("\n## Residency\n\nFraction of measured time in each state (docs/analysis.md, \"States\").\n\n| Drive | Active | Background | Idle | Partial | Slumber | DevSlp | Off |\n|---|---:|---:|---:|---:|---:|---:|---:|\n")
	for _, d := range r.Drives {
		rs := d.Residency
		p("| %s | %s | %s | %s | %s | %s | %s | %s |\n", d.Name, pct(rs.Active), pct(rs.Background), pct(rs.Idle), pct(rs.Partial), pct(rs.Slumber), pct(rs.DevSlp), pct(rs.Off))
	}
	p("\n## DevSlp\n\nPooled over the DEVSLP pin cycles, ± the 95 %% half-width (docs/analysis.md, \"DevSlp quantities\").\n\n| Drive | Outcome | Floor (mW) | Entry (ms) | Power rise (ms) | Exit to first read (ms) | Pre-cycle (mW) | Cycles passed | Reason |\n|---|---|---:|---:|---:|---:|---:|---:|---|\n")
	for _, d := range r.Drives {
		ds := d.DevSlp
		outcome := string(ds.Outcome)
		if outcome == "" {
			outcome = "no cycles"
		}
		p("| %s | %s | %s | %s | %s | %s | %s | %d/%d | %s |\n", d.Name, outcome, states.PM(ds.FloorW, ds.FloorU95W, 1e3),
			states.PM(ds.EntryMs, ds.EntryU95Ms, 1), states.PM(ds.RiseMs, ds.RiseU95Ms, 1), states.PM(ds.ExitMs, ds.ExitU95Ms, 1),
			states.PM(ds.PreCycleW, states.None, 1e3), ds.Verdict.Passed, len(ds.CycleResults), strings.ReplaceAll(ds.Reason, "|", "/"))
	}
	p("\n## I/O and efficiency\n\n| Drive | Ops | MB | Busy (s) | Busy power (W) | Settle (s) | Idle (s) | MB/s per W (busy) | IOPS per W (busy) | MB/s per W | IOPS per W |\n|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|\n")
	for _, d := range r.Drives {
		io := d.IO
		p("| %s | %d | %.3f | %.3f | %s | %.3f | %.3f | %.3f | %.1f | %.3f | %.1f |\n", d.Name, io.Ops, float64(io.Bytes)/1e6, d.Segments.BusyS, FormatV(d.Segments.BusyW, 4), d.Segments.SettleS, d.Segments.IdleS, io.MBPerSPerWBusy, io.IOPSPerWBusy, io.MBPerSPerW, io.IOPSPerW)
	}
	for _, d := range r.Drives {
		if len(d.Phases) == 0 {
			continue
		}
		p("\n## Phases: %s\n\n| Phase | Start (s) | Measured (s) | Active idle (W) | Average (W) | Peak (W) | Peak 1 s (W) | Energy (J) | Ops |\n|---|---:|---:|---:|---:|---:|---:|---:|---:|\n", d.Name)
		for _, ph := range d.Phases {
			p("| %s | %s | %.3f | %s | %s | %s | %s | %s | %d |\n", ph.Name, FormatV(ph.StartS, 3), ph.DurationS, FormatPM(ph.ActiveIdleW, ph.ActiveIdleU95W, 4), FormatPM(ph.AverageW, ph.AverageU95W, 4),
				FormatV(ph.PeakW, 4), FormatV(ph.PeakWindows.W1s, 4), FormatPM(ph.EnergyJ, ph.EnergyU95J, 3), ph.IO.Ops)
		}
	}
	a := r.Alignment
	p("\n## Data quality\n\n| Drive | Samples | Dropped | Gaps | Missing (s) | CRC errors (link) |\n|---|---:|---:|---:|---:|---:|\n")
	for _, d := range r.Drives {
		p("| %s | %d | %d | %d | %.3f | %d |\n", d.Name, d.Samples.Count, d.Samples.Dropped, d.Samples.Gaps, d.Samples.MissingS, d.Samples.CRCErrors)
	}
	p("\nClock alignment: %s, %d of %d marks used, drift %.2f ppm, residual %.3f ms RMS / %.3f ms max, min round trip %.3f ms.\n",
		a.Method, a.MarksUsed, a.Marks, a.DriftPPM, a.ResidualRMSMS, a.ResidualMaxMS, a.MinRTTMS)
	p("Settings: settle %g ms, busy intervals merged across gaps < %g ms, active idle = %s, percentiles within %.1f %% (one histogram bin; exact for a bin of one value).\n",
		r.Settings.SettleMS, r.Settings.MergeGapMS, r.Settings.IdleFloor, 100*r.Settings.HistogramRelErr)
	if len(r.Drives) > 0 {
		p("Intervals: %s.\n", r.Drives[0].Uncertainty.Method)
	}
	if r.States != nil {
		r.writeStatesMarkdown(w)
	}
	if len(r.Notes) > 0 {
		p("\n## Notes\n\n")
		for _, n := range r.Notes {
			p("- %s\n", n)
		}
	}
}

func pct(x float64) string { return fmt.Sprintf("%.1f %%", 100*x) }

// Dash is what the Markdown and terminal outputs show for a value that was
// not measured (NaN here, null in JSON).
const Dash = "—"

// FormatV formats x with digits decimals, or Dash when it is NaN. A value
// that rounds to zero reads "0.000", not "-0.000": a phase that starts a
// fraction of a nanosecond before the first sample (clock alignment) starts
// at zero for a reader.
func FormatV(x float64, digits int) string {
	if math.IsNaN(x) {
		return Dash
	}
	s := strconv.FormatFloat(x, 'f', digits, 64)
	if s[0] == '-' && strings.Trim(s[1:], "0.") == "" {
		s = s[1:]
	}
	return s
}

// FormatPM formats x with its 95 % expanded uncertainty u as "x ± u", with
// at least digits decimals and up to two more as u needs to show two
// significant figures; an u too small for that reads "± <0.000001" (for
// digits 4); just x when u is nil, Dash when x is NaN.
func FormatPM(x float64, u *float64, digits int) string {
	if math.IsNaN(x) {
		return Dash
	}
	if u == nil || math.IsNaN(*u) {
		return FormatV(x, digits)
	}
	top := digits + 2
	if *u < 0.5*math.Pow(10, -float64(top)) {
		return strconv.FormatFloat(x, 'f', top, 64) + " ± <" + strconv.FormatFloat(math.Pow(10, -float64(top)), 'f', top, 64)
	}
	d := min(top, max(digits, 1-int(math.Floor(math.Log10(*u)))))
	return strconv.FormatFloat(x, 'f', d, 64) + " ± " + strconv.FormatFloat(*u, 'f', d, 64)
}

func g(x float64) string { return strconv.FormatFloat(x, 'g', -1, 64) }

// csvFloat formats a CSV value: 6 decimals, empty when not measured (NaN).
func csvFloat(x float64) string {
	if math.IsNaN(x) {
		return ""
	}
	return strconv.FormatFloat(x, 'f', 6, 64)
}

// CSVHeader is summary.csv's header row.
var CSVHeader = []string{"drive", "port", "phase", "duration_s", "active_idle_w", "average_w", "peak_w",
	"peak_1ms_w", "peak_10ms_w", "peak_100ms_w", "peak_1s_w", "p50_w", "p95_w", "p99_w", "energy_j",
	"busy_s", "settle_s", "idle_s", "io_ops", "io_bytes", "samples",
	"active_idle_u95_w", "average_u95_w", "energy_u95_j", "burst_share", "burst_energy_j"}

// WriteCSV writes summary.csv: one row per drive for the whole capture
// (phase "all") and one per drive × phase.
func (r *Report) WriteCSV(w io.Writer) error {
	cw := csv.NewWriter(w)
	cw.Write(CSVHeader)
	f := csvFloat
	fu := func(u *float64) string {
		if u == nil {
			return ""
		}
		return f(*u)
	}
	for _, d := range r.Drives {
		row := func(phase string, dur, ai, avg, pk float64, pw PeakWindows, p50, p95, p99, e float64, s Segments, io IOTotals, n uint64, uai, uavg, ue *float64, b Bursts) {
			cw.Write([]string{d.Name, strconv.Itoa(d.Port), phase, f(dur), f(ai), f(avg), f(pk), f(pw.W1ms), f(pw.W10ms), f(pw.W100ms), f(pw.W1s),
				f(p50), f(p95), f(p99), f(e), f(s.BusyS), f(s.SettleS), f(s.IdleS), strconv.FormatUint(io.Ops, 10), strconv.FormatUint(io.Bytes, 10), strconv.FormatUint(n, 10),
				fu(uai), fu(uavg), fu(ue), f(b.Share), f(b.EnergyJ)})
		}
		row("all", d.DurationS, d.ActiveIdleW, d.AverageW, d.PeakW, d.PeakWindows, d.P50W, d.P95W, d.P99W, d.EnergyJ, d.Segments, d.IO, d.Samples.Count,
			d.ActiveIdleU95W, d.AverageU95W, d.EnergyU95J, d.Bursts)
		for _, ph := range d.Phases {
			row(strings.TrimSpace(ph.Name), ph.DurationS, ph.ActiveIdleW, ph.AverageW, ph.PeakW, ph.PeakWindows, ph.P50W, ph.P95W, ph.P99W, ph.EnergyJ, ph.Segments, ph.IO, ph.Samples,
				ph.ActiveIdleU95W, ph.AverageU95W, ph.EnergyU95J, ph.Bursts)
		}
	}
	cw.Flush()
	return cw.Error()
}
