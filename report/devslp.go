package report

import (
	"fmt"

	"github.com/idlewatt/idlewatt/analysis"
	"github.com/idlewatt/idlewatt/analysis/judge"
	"github.com/idlewatt/idlewatt/report/chart"
)

// FileDevSlp is the DevSlp cycle chart's name pattern (by port).
const FileDevSlp = "devslp-p%d.png"

// buildDevSlpCharts draws, per charted drive (ports), its first cycle that
// did not pass (else its first), with the fitted entry and rise, in ms from
// assertion; save renders and keeps each, or returns stop's error.
func buildDevSlpCharts(r *analysis.Report, ports map[int]bool, save func(*chart.Figure, error, string) error) error {
	for _, dc := range r.DevSlpCharts() {
		if !ports[dc.Port] {
			continue
		}
		cy := dc.Cycle
		fig, err := chart.DevSlpCycleChart(dc.Series, chart.DevSlpOpts{
			Title: fmt.Sprintf("DevSlp cycle %d — %s", cy.Cycle, dc.Series.Name),
			Subtitle: fmt.Sprintf("%s · entry %s ms · floor %s mW · exit to first read %s ms", cy.Outcome,
				judge.PM(cy.EntryMs, cy.EntryU95Ms, 1), judge.PM(cy.FloorW, cy.FloorU95W, 1e3), judge.PM(cy.ExitMs, cy.ExitU95Ms, 1)),
			Unit: chart.UnitMW, LogY: true,
		})
		if err := save(fig, err, fmt.Sprintf(FileDevSlp, dc.Port)); err != nil {
			return err
		}
	}
	return nil
}
