// Package testlong says whether the long tests run, for the tests alone
// (nothing else imports it).
//
// # Three sizes
//
//   - go test -short ./...: unit tests only; every test that runs the
//     emulators in real time or drives a process skips itself.
//   - go test ./...: the README's command: everything at a size that fits
//     in 5 minutes on a loaded 2-core machine (docs/testing.md).
//   - IDLEWATT_LONG=1 go test -run Long ./...: the long versions — more
//     draws, more seeds, a whole demo — each named Test…Long and skipped
//     without the variable. .ci/run runs them once after the README's
//     command.
//
// A long version repeats its test with more of the same inputs (a superset
// of what the default version checks), so it can only find more.
// CoverageDrives sizes the noise-coverage tests the same three ways, with
// IDLEWATT_COVERAGE_DRIVES for the long runs docs/analysis.md reports.
package testlong
