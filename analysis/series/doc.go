// Package series holds the data analysis hands to the report layer for
// drawing: a drive's power envelope with its I/O intervals, state spans and
// annotations (Trace), streaming power histograms (Hist, Distribution) and
// one DevSlp cycle (DevSlpCycle).
//
// analysis fills these while it reads a capture; report/chart draws them and
// keeps chart.Trace, chart.Hist, chart.DevSlpCycle and the rest as aliases
// of what is here. The package imports nothing but the standard library and
// analysis/decimate, so computing the numbers never pulls in plotting, and
// nothing here draws or writes files. Every value is the analysis' own: a
// chart computes none of them (docs/charts.md).
//
// # Use
//
//	tr := series.Trace{Name: "drive", Power: dec.Envelope()}
//	tr.IO = append(tr.IO, series.Interval{Start: 1.5, End: 1.8})
//	h, _ := series.NewHist(1e-3, 5, 300, true)
//	h.Add(0.4)
package series
