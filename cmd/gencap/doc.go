// Command gencap writes a synthetic review-like capture (synthcap.Review)
// for scripts/report-scale.sh and manual testing. With -scan it instead
// decodes every record of an existing capture and nothing else (the
// decode-only reference the report's speed is compared with); with -report
// it runs what `idlewatt report` runs (analysis.Analyze, then report.WriteFiles),
// for when the CLI cannot be built.
//
// Where it sits: a command (rank 7) over analysis/synthcap, analysis and
// report, for scripts/report-scale.sh and the benchmarks; nothing imports
// it.
package main
