// Package report writes what analysis computed: the report files of a
// capture and of a comparison. It is the report layer's top; its
// sub-packages draw and export:
//
//   - report (this package): report.json, report.md, summary.csv and
//     states.json (WriteFiles), the charts power.png, active-idle.png,
//     average.png, power-hist.png, power-cdf.png and devslp-pN.png
//     (WriteCharts), power over time of a capture (Plot), compare.md,
//     compare.csv, compare.json and the comparison's bar charts
//     (CompareWith), the replay/bench IOPS consistency chart (IOPSChart),
//     and a measuring run's measure.json and an idle run's idle.json
//     (WriteJSONFile, FileMeasure, FileIdleRun, for app/rig).
//   - report/chart: the charts themselves (the only gonum/plot user the
//     library and the command have; states/drivesim/internal/simchart, a
//     go run tool that redraws a docs image, is the other).
//   - report/html: report.html and compare.html, the self-contained viewer.
//   - report/pqexport: Parquet export; report/livemetrics: Prometheus
//     metrics of a running record.
//
// Nothing here computes a figure: every number is analysis' own (one
// number, one place), formatted with analysis.FormatV and FormatPM so the
// terminal, report.md and compare.md read alike. analysis never imports
// this package.
//
// # Files
//
// Every file goes through internal/outfile: an existing file is replaced
// only with Options.Overwrite, never through a symbolic link or over an
// input (the capture, the compared report.json files), and always through a
// temporary file renamed into place. The keys of every JSON file and the
// CSV headers are in docs/report-format.md; the charts in docs/charts.md.
//
// # Commands
//
// The commands that read a capture and write what this package draws
// declare their settings here (ReportFlags, PlotFlags, ExportFlags,
// CompareFlags, HubInfoFlags) with the limits that keep an output
// drawable; Session is the read of one capture under a context and a
// progress line (Build for `report`, ExportParquet for `export
// --parquet`); inputs.go classes a capture's and a report.json's errors;
// terminal.go prints the drive table and headline.
//
// # Use
//
//	r, err := analysis.Analyze("run.iwcap", analysis.DefaultOptions())
//	...
//	err = report.WriteFiles(r, "run.report")
package report
