// Package files reads other meters' files — the Nordic Power Profiler's CSV
// export (ppk2csv.go), Joulescope JLS v2 files (jlsfile.go, on the format
// reader meter/files/jls) and Otii CSV exports (otiicsv.go) — as streams of
// samples, gaps and digital-line events into a meter.Sink, so that
// capture/importer can make captures of them. docs/meters.md ("Other meters'
// files") has each format with an example and what is kept or lost.
//
// # Formats
//
// One format per file, registered in formats.go. A Format detects itself
// from a file's first bytes (DetectBytes) and opens an io.ReaderAt: Open
// reads what describes the file (headers, definitions, the rate from the
// first rows' timestamps) and checks the Options it needs (a voltage for a
// current-only file, a rate for one without timestamps); Replay then reads
// the file from its start, a row or a chunk at a time, so memory does not
// grow with the file.
//
// # What a replay delivers
//
// Samples in Blocks of one channel (channel 0), in increasing index order,
// the file's first sample at index 0; gaps exactly where the file says a
// sample is missing (a row left out, a NaN, a current without a voltage),
// never filled; meter.EventLogic events with the levels of the file's
// digital lines (bit k = Info.Lines[k]), one at the start and one per
// change. LineSink turns a named line's edges into DEVSLP pin events and
// another's high spans into I/O marker spans. Everything a format cannot
// carry, or that was assumed to read it, is in File.Notes.
//
// # Errors
//
// Malformed content is a *ParseError (ErrMalformed) naming the line and the
// byte offset of its start (CSV) or the byte offset (JLS); options that do
// not fit the file are ErrOptions; a file of no known format is
// ErrUnknownFormat. The fuzz targets (fuzz_test.go) hold every format to
// this on arbitrary bytes.
//
// # Where it sits
//
// The meter floor (rank 1): other meters' files, read as the drivers
// stream; capture/importer and cmd/idlewatt import it.
package files
