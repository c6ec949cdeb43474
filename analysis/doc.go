// Package analysis turns a capture into the numbers a reviewer would print:
// per drive, active-idle power, average and peak power, energy, percentiles,
// state residency, DevSlp entry and exit, I/O totals and efficiency, per
// measurement phase, with every missing sample accounted for.
//
// The methods are described in docs/analysis.md and every report key in
// docs/report-format.md.
//
// # Computes, never draws
//
// This package computes; it writes no report file and draws nothing, and
// imports neither gonum/plot nor the report layer. Package report writes
// report.json, report.md, summary.csv, states.json, the charts and the
// comparison files from a Report; report/chart draws; report/html builds
// the viewer. What is shared with the outputs is numbers (the Report, its
// series, CompareDeltas) and the number formats every output uses (FormatV,
// FormatPM, Dash), so one value reads the same everywhere.
//
// # One timeline
//
// Samples are timed by the meter's sample index; I/O and state events by the
// host's monotonic clock. ClockFitter maps one onto the other from mark
// echoes, NTP-style: per window it keeps the mark with the smallest round
// trip, rejects marks further from a robust (repeated-median) line than their
// own round trip allows, fits offset and drift by least squares through the
// rest, and refuses a drift beyond ±1000 ppm (the nominal rate is used).
// Without marks it falls back to the header's start time and the nominal
// rate. The report counts and notes each of these.
//
// # Distrusting the data
//
// The capture reader's account (damage, rejected indices, trailing bytes) is
// in report.json's capture.integrity and notes; samples with NaN, ±Inf or
// |V·I| > MaxPlausibleW are treated as missing and counted. No figure is
// computed from a value that was not checked.
//
// # Two streaming passes
//
// Analyze reads a capture front to back in two passes (and the hum and
// learning passes between them, below). The first pass
// keeps what is small: mark echoes (thinned to one per window), I/O turned
// into merged busy intervals per drive, phase and DEVSLP pin events, link
// statistics. The second pass streams the samples through per-drive
// accumulators whose size does not depend on the capture's length: running
// sums, log-binned histograms for percentiles and the idle floor, a prefix
// buffer for the peak windows, and a fixed number of chart envelope buckets
// (analysis/decimate; the series for the charts are analysis/series types,
// Report.Traces, Distributions and DevSlpCharts).
// The second pass decodes in one goroutine, pairs the rails in another and
// accumulates the drives on workers (about one per core, each drive's
// samples in order on one of them; pipe.go), and accumulates run by run
// (samples sharing activity, phase and pin state), not sample by sample;
// the learning pass learns the drives on workers too (learnpass.go). Every
// figure is what one goroutine would compute: see docs/analysis.md,
// "Performance".
//
// # Mains hum
//
// Between the two, a hum pass (hum.go) reads each drive's quiet samples
// in windows of whole mains periods and finds the hum the meter picked up
// — 50 or 60 Hz, its offset, its harmonics — from the capture alone; the
// later passes subtract it from the drive's power before any figure
// (Report's drives[].hum says what was removed). A capture without hum
// finds none and is analysed as if there were no such pass.
//
// # States
//
// With Options.States, every SATA drive's levels are learned from the
// capture alone — its quiet power, I/O, ALPM policy and DEVSLP pin events
// (learn.go, levels.go, mixture.go, postio.go) — in a pass before the
// sample pass (the hum pass's read: learnpass.go), and its samples are classified by states/detect (its State
// is analysis's State: one enum) against them inside it; residency,
// per-state power, active idle's band and states.json (Report.States) come
// from that one classification. No simulator profile is read: the package
// imports neither states/drivesim nor host control. A drive whose levels
// cannot be learned gets null state figures and a note; one whose DEVSLP
// pin was asserted but whose DevSlp level was not learned gets residency
// intervals that hold the pin-asserted time for both DevSlp and the level
// its floor reads as, and a note (devslp_unresolved.go). Without
// Options.States, a StateClassifier may be given, else residency is active
// (busy) versus idle from I/O segmentation; the report notes it. Figures
// declared beforehand (drives[].expect, recorded in the capture) are
// compared with the measured ones after every estimate (declared.go).
//
// # DevSlp
//
// Each devslp-cycle phase in the capture is judged in the sample pass, on
// this package's clock fit (estimators and verdicts in analysis/judge):
// the report's devslp block, which measure.json, states.json, report.md,
// the terminal and the cycle chart all show. See docs/analysis.md, "DevSlp
// quantities".
//
// # Where it sits
//
// The analysis layer (rank 3 in scripts/import-edges.sh), over capture and
// the pure parts of states (detect, devslp) and its own sub-packages;
// report and its sub-packages, the application layer and the commands
// import it.
package analysis
