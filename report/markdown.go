package report

import (
	"fmt"
	"io"
	"math"

	"github.com/idlewatt/idlewatt/analysis"
	"github.com/idlewatt/idlewatt/analysis/judge"
	"github.com/idlewatt/idlewatt/internal/textsafe"
)

// WriteMarkdown writes report.md: review-style tables.
func WriteMarkdown(w io.Writer, r *analysis.Report) {
	p := func(format string, a ...any) { fmt.Fprintf(w, format, a...) }
	p("# Power report\n\n")
	if r.Capture.Path != "" {
		p("Capture %s", mdCell(r.Capture.Path))
	} else {
		p("Capture")
	}
	p(": meter %s %s at %s S/s, %.1f s", mdCell(r.Capture.MeterKind), mdCell(r.Capture.MeterModel), g(r.Capture.RateHz), r.Capture.DurationS)
	if r.Capture.Complete {
		p(", complete.\n\n")
	} else {
		p(", **incomplete** (reading stopped at byte %d).\n\n", r.Capture.EndOffset)
	}
	if iv := r.Interval; iv != nil {
		p("**This report covers only %s–%s s of the capture** (`idlewatt report --from --to`): every figure below is of that interval.\n\n", g(iv.FromS), g(iv.ToS))
	}
	p("## Summary\n\nActive idle, average and energy with their 95 %% intervals (± U95, method under Settings); the peak with its 95 %% interval [lo, hi].\n\n| Drive | Port | Active idle (W) | Average (W) | Peak (W) | Peak 1 s (W) | Energy (J) | Energy (Wh) | Measured (s) |\n|---|---:|---:|---:|---:|---:|---:|---:|---:|\n")
	for _, d := range r.Drives {
		p("| %s | %d | %s | %s | %s | %s | %s | %s | %.3f |\n", mdCell(d.Name), d.Port, analysis.FormatPM(d.ActiveIdleW, d.ActiveIdleU95W, 4), analysis.FormatPM(d.AverageW, d.AverageU95W, 4),
			analysis.FormatCI(d.PeakW, d.PeakCI95W, 4), analysis.FormatV(d.PeakWindows.W1s, 4), analysis.FormatPM(d.EnergyJ, d.EnergyU95J, 3), analysis.FormatV(d.EnergyWh, 6), d.DurationS)
	}
	p("\n## Background bursts\n\nQuiet time (no I/O outstanding, past the settle tail) well above the active-idle level: left out of active idle, reported here.\n\n| Drive | Quiet (s) | Bursts | Burst time (s) | Share of quiet time | Burst mean (W) | Burst energy (J) | Above active idle (J) | Dips |\n|---|---:|---:|---:|---:|---:|---:|---:|---:|\n")
	for _, d := range r.Drives {
		b := d.Bursts
		p("| %s | %.3f | %d | %.3f | %s | %s | %.4f | %.4f | %s |\n", mdCell(d.Name), b.QuietS, b.Count, b.S, pct(b.Share), analysis.FormatV(b.MeanW, 4), b.EnergyJ, b.ExcessJ, pct(b.DipShare))
	}
	p("\n## Peaks and percentiles\n\n| Drive | Peak sample (W) | 1 ms (W) | 10 ms (W) | 100 ms (W) | 1 s (W) | p50 (W) | p95 (W) | p99 (W) |\n|---|---:|---:|---:|---:|---:|---:|---:|---:|\n")
	for _, d := range r.Drives {
		pw := d.PeakWindows
		p("| %s | %s | %s | %s | %s | %s | %s | %s | %s |\n", mdCell(d.Name), analysis.FormatCI(d.PeakW, d.PeakCI95W, 4), analysis.FormatV(pw.W1ms, 4), analysis.FormatV(pw.W10ms, 4), analysis.FormatV(pw.W100ms, 4), analysis.FormatV(pw.W1s, 4),
			analysis.FormatV(d.P50W, 4), analysis.FormatV(d.P95W, 4), analysis.FormatV(d.P99W, 4))
	}
	p("\n## Residency\n\nFraction of measured time in each state (docs/analysis.md, \"States\").\n\n| Drive | Active | Background | Idle | Partial | Slumber | DevSlp | Off |\n|---|---:|---:|---:|---:|---:|---:|---:|\n")
	for _, d := range r.Drives {
		rs := d.Residency
		p("| %s | %s | %s | %s | %s | %s | %s | %s |\n", mdCell(d.Name), pct(rs.Active), pct(rs.Background), pct(rs.Idle), pct(rs.Partial), pct(rs.Slumber), pct(rs.DevSlp), pct(rs.Off))
	}
	p("\n## DevSlp\n\nPooled over the DEVSLP pin cycles, ± the 95 %% half-width (docs/analysis.md, \"DevSlp quantities\").\n\n| Drive | Outcome | Floor (mW) | Entry (ms) | Power rise (ms) | Exit to first read (ms) | Pre-cycle (mW) | Cycles passed | Reason |\n|---|---|---:|---:|---:|---:|---:|---:|---|\n")
	for _, d := range r.Drives {
		ds := d.DevSlp
		outcome := string(ds.Outcome)
		if outcome == "" {
			outcome = "no cycles"
		}
		p("| %s | %s | %s | %s | %s | %s | %s | %d/%d | %s |\n", mdCell(d.Name), outcome, judge.PM(ds.FloorW, ds.FloorU95W, 1e3),
			judge.PM(ds.EntryMs, ds.EntryU95Ms, 1), judge.PM(ds.RiseMs, ds.RiseU95Ms, 1), judge.PM(ds.ExitMs, ds.ExitU95Ms, 1),
			judge.PM(ds.PreCycleW, ds.PreCycleU95W, 1e3), ds.Verdict.Passed, len(ds.CycleResults), mdCell(ds.Reason))
	}
	writeDeclaredMarkdown(w, r)
	p("\n## I/O and efficiency\n\n| Drive | Ops | MB | Busy (s) | Busy power (W) | Settle (s) | Idle (s) | MB/s per W (busy) | IOPS per W (busy) | MB/s per W | IOPS per W |\n|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|\n")
	for _, d := range r.Drives {
		io := d.IO
		p("| %s | %d | %.3f | %.3f | %s | %.3f | %.3f | %.3f | %.1f | %.3f | %.1f |\n", mdCell(d.Name), io.Ops, float64(io.Bytes)/1e6, d.Segments.BusyS, analysis.FormatV(d.Segments.BusyW, 4), d.Segments.SettleS, d.Segments.IdleS, io.MBPerSPerWBusy, io.IOPSPerWBusy, io.MBPerSPerW, io.IOPSPerW)
	}
	for _, d := range r.Drives {
		if len(d.Phases) == 0 {
			continue
		}
		p("\n## Phases: %s\n\n| Phase | Start (s) | Measured (s) | Active idle (W) | Average (W) | Peak (W) | Peak 1 s (W) | Energy (J) | Ops |\n|---|---:|---:|---:|---:|---:|---:|---:|---:|\n", mdCell(d.Name))
		for _, ph := range d.Phases {
			p("| %s | %s | %.3f | %s | %s | %s | %s | %s | %d |\n", mdCell(ph.Name), analysis.FormatV(ph.StartS, 3), ph.DurationS, analysis.FormatPM(ph.ActiveIdleW, ph.ActiveIdleU95W, 4), analysis.FormatPM(ph.AverageW, ph.AverageU95W, 4),
				analysis.FormatV(ph.PeakW, 4), analysis.FormatV(ph.PeakWindows.W1s, 4), analysis.FormatPM(ph.EnergyJ, ph.EnergyU95J, 3), ph.IO.Ops)
		}
	}
	a := r.Alignment
	p("\n## Data quality\n\n| Drive | Samples | Dropped | Gaps | Missing (s) | CRC errors (link) |\n|---|---:|---:|---:|---:|---:|\n")
	for _, d := range r.Drives {
		p("| %s | %d | %d | %d | %.3f | %d |\n", mdCell(d.Name), d.Samples.Count, d.Samples.Dropped, d.Samples.Gaps, d.Samples.MissingS, d.Samples.CRCErrors)
	}
	p("\nClock alignment: %s, %d of %d marks used, drift %.2f ppm, residual %.3f ms RMS / %.3f ms max, min round trip %.3f ms.\n",
		a.Method, a.MarksUsed, a.Marks, a.DriftPPM, a.ResidualRMSMS, a.ResidualMaxMS, a.MinRTTMS)
	p("Settings: settle %g ms, busy intervals merged across gaps < %g ms, active idle = %s, percentiles within %.1f %% (one histogram bin; exact for a bin of one value).\n",
		r.Settings.SettleMS, r.Settings.MergeGapMS, r.Settings.IdleFloor, 100*r.Settings.HistogramRelErr)
	if len(r.Drives) > 0 {
		p("Intervals: %s.\n", r.Drives[0].Uncertainty.Method)
	}
	if r.States != nil {
		writeStatesMarkdown(w, r)
	}
	if len(r.Annotations) > 0 {
		p("\n## Annotations\n\nNotes kept beside the capture (`idlewatt annotate`, or the live view): the user's text, on the report's timeline.\n\n| At (s) | To (s) | Note | Source |\n|---:|---:|---|---|\n")
		for _, n := range r.Annotations {
			to := "–"
			if n.ToS != nil {
				to = g(*n.ToS)
			}
			p("| %s | %s | %s | %s |\n", g(n.AtS), to, mdText(n.Text), mdText(n.Source))
		}
	}
	if len(r.Notes) > 0 {
		p("\n## Notes\n\n")
		for _, n := range r.Notes {
			p("- %s\n", mdCell(n))
		}
	}
}

// pct is a fraction as a percentage, "—" when not measured (NaN).
func pct(x float64) string {
	if math.IsNaN(x) {
		return analysis.Dash
	}
	return fmt.Sprintf("%.1f %%", 100*x)
}

// mdCell makes a string from a capture, a config or a device (a drive or
// phase name, a note, a file name) inline Markdown text that renders as it
// reads (internal/textsafe): a line break would end the row (a drive named
// "a\nb" split the summary table), a "|" start another cell, and
// "<script>" or "<img onerror=…>" be HTML in a viewer.
func mdCell(s string) string { return textsafe.Markdown(s) }

// writeDeclaredMarkdown is report.md's table of declared figures (none
// without drives[].expect): each beside the measured value, which is the
// figure's own table's.
func writeDeclaredMarkdown(w io.Writer, r *analysis.Report) {
	any := false
	for _, d := range r.Drives {
		any = any || len(d.Declared) > 0
	}
	if !any {
		return
	}
	fmt.Fprintf(w, "\n## Declared figures\n\nWhat the configuration declared (drives[].expect), beside the measured value; no estimator reads it. A figure outside the measured 95 %% interval by more than %.0f %% of itself disagrees (docs/analysis.md, \"Declared figures\").\n\n| Drive | Quantity | Declared · measured | Agreement |\n|---|---|---|---|\n", 100*analysis.DeclaredMargin)
	for i := range r.Drives {
		d := &r.Drives[i]
		for _, f := range d.Declared {
			text, agree := f.Text(d)
			fmt.Fprintf(w, "| %s | %s | %s | %s |\n", mdCell(d.Name), f.Name, text, agree)
		}
	}
}

// mdText makes user text (an annotation) inert in a Markdown table cell:
// internal/textsafe's Markdown escaping, which every user string in
// report.md goes through.
func mdText(s string) string { return textsafe.Markdown(s) }
