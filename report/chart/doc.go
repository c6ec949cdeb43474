// Package chart draws idlewatt's review-style charts with gonum.org/v1/plot,
// as PNG or SVG. It is part of the report layer (report/) and the only
// package that imports gonum/plot: analysis computes numbers and hands them
// over in plain types (float64 seconds and watts) defined in analysis/series
// and aliased here (Trace, Interval, StateSpan, Annotation, Hist,
// Distribution, DevSlpCycle), so the charts can be tested, and replaced, on
// their own. Package report decides which charts a report gets and writes
// them.
//
// # Charts
//
//   - PowerOverTime: power against time per drive, stacked panels or one
//     overlaid panel, with a min–max band from an Envelope, an I/O activity
//     strip ([]Interval), state shading ([]StateSpan), gaps as breaks and
//     annotations ([]Annotation).
//   - BarChart, ActiveIdlePower, AveragePower: horizontal bars across drives,
//     sorted, value printed at each bar's end.
//   - Histogram and CDF of power per drive, from a streaming Hist.
//   - DevSlpCycleChart: one DevSlp cycle in ms with pin edges, floor reached,
//     first I/O, floor and limit lines; optional log power axis.
//   - IOPSConsistency: IOPS per second against time, one colour per drive.
//
// Every chart function validates its input and returns (*Figure, error):
// ErrNoData when there is nothing to draw, otherwise an error naming the
// series and point at fault. Figure.Save picks the format from the path's
// extension (.png, .svg; ErrFormat otherwise) and writes atomically.
//
// # Long captures
//
// A chart needs about one row per horizontal pixel, not every sample. A
// Decimator (package analysis/decimate; aliased here) reduces a stream of
// samples (Add, or AddUniform for a meter block) or of capture summary
// points (AddSummary) to at most N min/max/mean buckets in memory fixed by
// N, without allocating per sample. An hour at
// 10 kS/s on two drives decimates in about 0.3 s and renders in about 0.3 s
// (BenchmarkPowerChart1h).
//
// # Determinism
//
// Text uses the Liberation fonts embedded in gonum/plot, never system fonts,
// so a PNG is the same on every machine. The golden tests compare against
// testdata/*_golden.png; `go test ./report/chart -update` rewrites them
// after an intended change (look at them before committing).
//
// See docs/charts.md for what each chart shows and how to feed it.
package chart
