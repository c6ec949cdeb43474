// Package decimate reduces a power stream of any length to a bounded
// min/max/mean envelope, the way a scope draws a long record.
//
// Analysis feeds a Decimator while it reads a capture (one pass, bounded
// memory) and hands the resulting Envelope to whoever draws it; the package
// imports nothing but the standard library, so the numbers side of the code
// does not pull in plotting. report/chart draws Envelopes and keeps
// chart.Decimator, chart.DecimatorOpts and chart.NewDecimator as aliases of
// what is here.
//
// # Use
//
//	d, _ := decimate.New(decimate.Options{Buckets: 2000})
//	for each sample: d.Add(tSeconds, watts)   // or AddUniform for a block
//	env := d.Envelope()                       // ≤ Buckets rows; NaN rows are gaps
//
// See docs/charts.md for how the envelope is drawn.
//
// # Where it sits
//
// The analysis layer (rank 3 in scripts/import-edges.sh), standard library
// only: analysis fills its envelopes, analysis/series hands them on and
// report/chart draws them.
package decimate
