// Package html writes report.html: one self-contained file (no network
// access, no external files) that shows a capture's power over time for
// every drive, zoomable from the whole run down to the embedded depth, with
// the report's tables beside it. It is part of the report layer: analysis
// computes every number (report.json) and hands this package its samples
// through analysis.SampleSink; this package only reduces them for the page
// and draws nothing itself. The charts are drawn in the browser by uPlot.
//
// # Data
//
// A Pyramid (an analysis.SampleSink) keeps per drive one level of time
// buckets [k·w, (k+1)·w) on the report's timeline: min and max power, the
// sum of power (so a bucket's energy is sum·dt, exactly the terms
// report.json's energy_j adds up) and the sample count; per rail the same
// plus the sum of current (charge), at 4·w. The width w starts at one sample
// period and doubles whenever the buckets would outgrow Budget for the run's
// length so far. The page builds the coarser levels (pairs merged) and, per
// pixel column, draws the min–max envelope and mean from the finest level no
// wider than the column. A selection adds the bucket energies, pro-rating
// the two edge buckets by overlap, so its energy matches report.json for the
// same interval (the browser test holds it to 0.1 %).
//
// Deeper than the buckets, the page has every sample where it matters:
// from 20 ms before to 120 ms after each DEVSLP pin edge (a NewPyramidFor
// pyramid's) and each drive's peak sample (followed while streaming),
// within 15 % of the budget.
//
// Events (I/O, DEVSLP pin, phases, notes, policy changes, meter events)
// and the pin edges come from the records of analysis' first pass, which
// a Pyramid is handed as an analysis.RecordSink (firstpass.go): the
// capture is not read again for them. Only if that pass handed it none
// (a sink wrapped so that the analysis does not see it as one), or the
// capture has more events than a Pyramid keeps (maxKeptIO,
// maxKeptEvents), are they read from the capture again, samples skipped,
// and only from a regular file.
//
// # Viewer
//
// The selection panel sits beside the charts; cursors A and B (click,
// shift+click, typed) make the selection, which gives Δt, mean, min/max,
// energy, charge per rail, I/O and residency (core.js's stats, the same on
// every page) and exports as CSV built in the page. The readout gives
// time in s and every series (rails too) in W; annotations
// (report.json's annotations) are drawn and listed; an NVMe drive's third
// strip is its APST setting; a report of an interval says so.
//
// # compare.html
//
// WriteCompare draws several runs (each its report, the pyramid of its
// capture and the capture's events) overlaid or stacked on one time axis
// (seconds from each run's start, or from a phase every run has): each
// drive's mean line and min–max envelope, its I/O, state and DEVSLP strips,
// a selection that measures every run over the same seconds of its own
// timeline (with deltas against the baseline run's drive), and tables
// linked to the axis: runs, the delta table analysis.CompareDeltas gives
// (formatted as compare.md shows it), phases and DevSlp cycles. The runs
// share one report's budget (CompareBudget).
//
// # Assets
//
// assets/ holds the page templates, the viewers (core.js, the decoding,
// aggregation and selection math and the time-axis controls every page
// shares — report/live's live view too, through SharedAssets; app.js; compare.js; app.css) and the vendored uPlot build (uPlot.iife.min.js, uPlot.min.css,
// uPlot.LICENSE, MIT), all embedded with go:embed. To update uPlot, see docs/report-html.md
// ("Updating uPlot"): npm pack at a pinned version, copy the two dist files
// and LICENSE, record the version and checksums in assets/VERSIONS.
//
// # Tests
//
// browser_test.go opens a generated report in headless Chromium
// (chromedp) and checks it loads without console errors or network
// requests, draws, and that its selection energy matches report.json;
// compare_browser_test.go does the same for compare.html, for every run,
// and checks its envelopes, strips, alignment and keyboard use.
package html
