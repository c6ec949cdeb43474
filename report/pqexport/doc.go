// Package pqexport writes a capture and its report as Parquet files for
// query engines (DuckDB, Spark, Trino, pandas/Arrow): samples.parquet (one
// row per drive per sample index: per-rail V and A, the drive's power, gap
// marks), io.parquet (every I/O event), state.parquet (one row per
// detected state interval: drive, state, start, end, duration, mean power,
// energy — analysis's StateReport.Intervals) and summary.parquet (one row
// per drive: run metadata and the report's headline figures, the values
// report.json holds).
//
// # Schema
//
// docs/lab.md lists every column with its unit; units are suffixed in the
// column names as in report.json (_v, _a, _w, _s, _j, _ns). Files are zstd-
// compressed (its fastest level; in samples.parquet a block without a
// match still has its literals Huffman-coded).
//
// # samples.parquet
//
// Nearly all of an export's bytes and, before, most of its CPU:
// parquet-go's row writer spent it in dictionary insertions. The file is
// framed here instead (samples.go, colenc.go) with parquet-go's encoders,
// thrift structures and the schema it derives from SampleRow. With up to
// 32 drives a row group holds one drive's rows for a span of sample
// indices (1 Mi rows, about 105 s at 10 kS/s, with up to 4 drives): a port
// filter skips the other drives by row-group statistics, a time filter the
// other spans, and a chunk's dictionary holds one drive's readings; with
// more, every drive's rows are interleaved at each index as before.
// Readings are FLOAT (a capture's V and A are float32s; power_w is
// rounded once from its double), dictionary coded (BYTE_STREAM_SPLIT
// past 128 Ki values in a chunk), the dictionary ordered when its chunk
// is complete by its entries' counts: up to 256 entries index 0 is the
// most frequent and so on, up to 64 Ki the indices are two bytes placed so
// that both bytes have about the same distribution, which zstd's one
// Huffman table then codes near the readings' entropy (colenc.go: finish,
// pairCells); sample_index, port and gap_samples are
// DELTA_BINARY_PACKED, time_s a BYTE_STREAM_SPLIT double in pages of
// 256 Ki rows (its low bytes repeat every few hundred rows, a cost paid
// once a page). A rail's watts
// are not stored (SamplesSchema v2): the reader's V × A in FLOAT is the
// value bit for bit, and on a noisy capture the column was a third copy of
// the current's noise, a third of the file. The footer's key-value
// metadata names the schema (SchemaKey) and lists the channels' LSBs
// (ChannelsKey). The capture is decoded a run at a time into page sets,
// and each set's pages are encoded one (drive, column) a task on
// GOMAXPROCS goroutines while the next set is decoded.
//
// # Why parquet-go
//
// github.com/parquet-go/parquet-go is pure Go, maintained, writes typed
// rows from structs (io, state and summary tables) and provides the page
// encoders and file structures samples.parquet is built from. The tests
// read every file back with independent implementations: Apache Arrow
// Go's reader, and parquet-go's reader for samples.parquet's rows.
//
// state.parquet has rows only when the report ran state detection
// (analysis.Options.States, as export --parquet, measure and report do).
//
// # Where it sits
//
// The report layer (rank 4), over analysis and capture; cmd/idlewatt
// (`export --parquet`) imports it.
package pqexport
