// Package pqexport writes a capture and its report as Parquet files for
// query engines (DuckDB, Spark, Trino, pandas/Arrow): samples.parquet (one
// row per drive per sample index, per-rail V/A/W, gap marks), io.parquet
// (every I/O event), state.parquet (one row per detected state interval:
// drive, state, start, end, duration, mean power, energy — analysis's
// StateReport.Intervals) and summary.parquet (one row per drive: run
// metadata and the report's headline figures, the values report.json holds).
//
// # Schema
//
// docs/lab.md lists every column with its unit; units are suffixed in the
// column names as in report.json (_v, _a, _w, _s, _j, _ns). Files are zstd-
// compressed with row groups of 1 Mi rows (about a minute of one drive at
// 10 kS/s: big enough for scans, small enough that a time filter skips most
// of a long capture by row-group statistics).
//
// # Why parquet-go
//
// github.com/parquet-go/parquet-go is pure Go, maintained, writes typed
// rows from structs and zstd through klauspost/compress. The tests read the
// files back with an independent implementation, Apache Arrow Go's reader.
//
// state.parquet has rows only when the report ran state detection
// (analysis.Options.States, as export --parquet, measure and report do).
//
// # Where it sits
//
// The report layer (rank 4), over analysis and capture; cmd/idlewatt
// (`export --parquet`) imports it.
package pqexport
