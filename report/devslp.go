package report

import (
	"errors"
	"fmt"
	"path/filepath"

	"github.com/idlewatt/idlewatt/analysis"
	"github.com/idlewatt/idlewatt/analysis/states"
	"github.com/idlewatt/idlewatt/internal/outfile"
	"github.com/idlewatt/idlewatt/report/chart"
)

// FileDevSlp is the DevSlp cycle chart's name pattern (by port).
const FileDevSlp = "devslp-p%d.png"

// writeDevSlpCharts draws, per drive, its first cycle that did not pass
// (else its first), with the fitted entry and rise, in ms from assertion.
func writeDevSlpCharts(r *analysis.Report, dir string, o outfile.Options) error {
	var errs []error
	for _, dc := range r.DevSlpCharts() {
		cy := dc.Cycle
		fig, err := chart.DevSlpCycleChart(dc.Series, chart.DevSlpOpts{
			Title: fmt.Sprintf("DevSlp cycle %d — %s", cy.Cycle, dc.Series.Name),
			Subtitle: fmt.Sprintf("%s · entry %s ms · floor %s mW · exit to first read %s ms", cy.Outcome,
				states.PM(cy.EntryMs, cy.EntryU95Ms, 1), states.PM(cy.FloorW, cy.FloorU95W, 1e3), states.PM(cy.ExitMs, cy.ExitU95Ms, 1)),
			Unit: chart.UnitMW, LogY: true,
		})
		errs = append(errs, saveFig(fig, err, filepath.Join(dir, fmt.Sprintf(FileDevSlp, dc.Port)), o))
	}
	return errors.Join(errs...)
}
