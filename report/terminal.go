package report

// What the commands print on the terminal of a report (docs/cli.md,
// "Terminal tables"): the same figures the files hold, as analysis
// computed them.

import (
	"fmt"
	"io"
	"math"

	"github.com/idlewatt/idlewatt/analysis"
	"github.com/idlewatt/idlewatt/analysis/judge"
	"github.com/idlewatt/idlewatt/internal/textsafe"
)

// WriteDriveTable is the drive table every command prints: one table
// within 120 columns, units in the header, a name longer than its column
// on a line of its own, the residency (when residency is set) and dropped
// samples on lines of their own below each drive. head gives the first
// column (nil: active idle) under the title first.
func WriteDriveTable(w io.Writer, rep *analysis.Report, first string, head func(d *analysis.DriveReport) string, residency bool) {
	const nameW = 28
	fmt.Fprintf(w, "%-*s %18s %18s %23s %15s %12s\n", nameW, "drive", first+" (W)", "average (W)", "peak [95 %] (W)", "energy (J)", "devslp mW")
	for i := range rep.Drives {
		d := &rep.Drives[i]
		floor := analysis.Dash
		if d.DevSlp.FloorW.Ok() {
			floor = judge.PM(d.DevSlp.FloorW, d.DevSlp.FloorU95W, 1e3)
		}
		name := textsafe.Terminal(d.Name)
		if len([]rune(name)) > nameW {
			fmt.Fprintln(w, name)
			name = ""
		}
		h := analysis.FormatPM(d.ActiveIdleW, d.ActiveIdleU95W, 3)
		if head != nil {
			h = head(d)
		}
		fmt.Fprintf(w, "%-*s %18s %18s %23s %15s %12s\n", nameW, name, h, analysis.FormatPM(d.AverageW, d.AverageU95W, 3),
			analysis.FormatCI(d.PeakW, d.PeakCI95W, 4), analysis.FormatPM(d.EnergyJ, d.EnergyU95J, 1), floor)
		if d.Samples.Dropped > 0 {
			fmt.Fprintf(w, "  dropped: %d samples\n", d.Samples.Dropped)
		}
		if !residency {
			continue
		}
		rs := d.Residency
		if math.IsNaN(rs.Idle) {
			fmt.Fprintf(w, "  residency: %s (levels not learned: the notes say why)\n", analysis.Dash)
			continue
		}
		fmt.Fprintf(w, "  residency: active %.1f %%, background %.1f %%, idle %.1f %%, partial %.1f %%, slumber %.1f %%, devslp %.1f %%\n",
			100*rs.Active, 100*rs.Background, 100*rs.Idle, 100*rs.Partial, 100*rs.Slumber, 100*rs.DevSlp)
	}
}

// WriteHeadline is what `idlewatt report` prints: the drive table, the
// DevSlp verdicts, the declared figures and the notes.
func WriteHeadline(w io.Writer, r *analysis.Report) {
	WriteDriveTable(w, r, "active idle", nil, true)
	for _, d := range r.Drives {
		if d.DevSlp.Outcome != "" {
			fmt.Fprintf(w, "DevSlp port %d: %s\n", d.Port, textsafe.Terminal(d.DevSlp.Verdict.String()))
		}
	}
	WriteDeclared(w, r)
	WriteNotes(w, "", r.Notes)
}

// WriteDeclared prints each declared figure beside the measured one.
func WriteDeclared(w io.Writer, r *analysis.Report) {
	for i := range r.Drives {
		d := &r.Drives[i]
		for _, f := range d.Declared {
			text, agree := f.Text(d)
			fmt.Fprintf(w, "declared: %s: %s: %s (%s)\n", d.Name, f.Name, text, agree)
		}
	}
}

// WriteNotes prints notes as "who: note: …" lines ("note: …" without who),
// shown, never acted on.
func WriteNotes(w io.Writer, who string, notes []string) {
	if who != "" {
		who += ": "
	}
	for _, n := range notes {
		fmt.Fprintf(w, "%snote: %s\n", who, textsafe.Terminal(n))
	}
}
