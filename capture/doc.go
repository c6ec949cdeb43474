// Package capture writes and reads idlewatt capture files: an append-only,
// chunked, CRC-32C-checked record of everything a measurement saw — meter
// identity and configuration, per-channel sample blocks, gaps, clock marks,
// meter events, host I/O events, host state events, link statistics and
// power summaries — on one timeline.
//
// # Format
//
// The format is specified byte for byte in docs/capture-format.md, with a
// hexdumped example (format 1.1) that fixtures/capture/tiny.iwcap holds and
// the tests check. Format 2, the default, stores samples as the meter's i32
// counts with the calibration that converts them (per-range gain and offset,
// so a per-sample range id fits), Rice-coded per chunk (codec.go: ~0.2–0.7
// bytes per channel-sample on the emulator's drives, against 4.5 in format
// 1), and summary levels (v2.go: min/max/mean/σ/count per window of
// SummaryPer·16^l samples, l = 0…3). Values that are no exact count are
// stored as float32. The Reader reads formats 1 and 2 (Reader.Version);
// Options.Version = 1 writes 1.1 for older readers.
//
// # Writing
//
// Create (or NewWriter over any io.Writer) returns a Writer, which
// implements meter.Sink so a meter streams straight into a capture. All its
// methods are safe for concurrent use: the meter goroutine and workload
// goroutines share one Writer. It buffers in memory and a background
// goroutine writes a chunk group every Options.FlushEvery (250 ms) and
// fsyncs every Options.SyncEvery (1 s): kill -9 loses at most about 0.25 s,
// a power cut about 1 s. Samples does not allocate in steady state. A full
// disk returns an error matching ErrDiskFull (and syscall.ENOSPC); what was
// written before stays readable. Create refuses to replace an existing file
// unless Options.Overwrite is set, never writes through a symbolic link and
// never over one of Options.Inputs (internal/outfile). A capture is written
// in place, not through a temporary file renamed at the end as other
// outputs are: what was flushed must be on disk under its name if the
// recorder is killed (kill -9, power cut). With Overwrite an old capture is
// unlinked, not truncated.
//
// # Reading
//
// Open or NewReader, then Next until io.EOF. Readers stream chunk by chunk
// in memory bounded by the largest chunk, reusing their buffers: a Record's
// slices are valid until the next call to Next. Open refuses an impossible
// header (ErrInvalid: rate, channels, ports, rails, LSBs; the field and its
// byte offset). A damaged chunk costs that chunk only: a single flipped bit
// is mended from the CRC; otherwise the reader hunts for the next intact
// chunk and makes the hole a gap with reason GapDamaged. Samples chunks whose
// indices overlap, run backwards or restart are handed out as KindRejected,
// not as samples. Account says all of it (Account.Notes in sentences), and
// bytes after the end chunk. Next returns a *DamageError matching
// ErrTruncated (and ErrCorrupt when bytes are present but wrong) only where
// nothing intact follows — a crash's cut, or damage to the end of the file.
// Complete reports whether the end chunk was seen. SkipSamples makes
// summary-only scans (charts) skip decoding sample values; they still check
// every chunk, so they find the same damage. A sample-decoding Reader checks
// every summary against the samples (verify.go); the readers of one Passes
// do it once for all passes (memo.go). (reader.go the Reader and Next;
// chunk.go a chunk's framing, CRC mending and the hunt after damage;
// decode.go a chunk's records.) Salvage copies what a damaged
// capture holds into a clean one; Repair does it from file to file (the
// input's format and summary resolution, the damage noted in the new
// capture, written through internal/outfile): idlewatt repair.
//
// # Index
//
// Format 2.1 adds index chunks (index.go): every Options.IndexEvery (4 MiB)
// and at close the Writer lists the chunks since the last one except samples
// chunks and summary levels 0–1, chained backwards from the last index chunk
// near the end of the file. Reader.UseIndex (UseIndexOf for some kinds only)
// seeks to the listed chunks instead of reading the file — an overview of a
// day reads a few MB — and then reads the chunks after the last index in
// sequence. It checks every link, entry and listed chunk; anything that does
// not match is ErrIndex (no index at all: ErrNoIndex), and the caller scans.
// An indexed Reader never reads samples chunks, so it cannot see damage in
// them: it is for charts, never for figures.
//
// Rows merges the channels into one row per sample index, as the CSV export
// needs; its NextRun hands out the same rows a block's worth at a time
// (state detection's pass over every sample).
//
// # Where it sits
//
// The capture floor (rank 2), between the meters and analysis: it imports
// meter, workload and the leaves; capture/record writes through it, and
// analysis, report, the application layer and the commands read it.
package capture
