// Package capture writes and reads idlewatt capture files: an append-only,
// chunked, CRC-32C-checked record of everything a measurement saw — meter
// identity and configuration, per-channel sample blocks, gaps, clock marks,
// meter events, host I/O events and host state events — on one timeline.
//
// The format is specified in docs/capture-format.md. A capture cut short by a
// crash, kill -9 or a full disk reads back intact up to its last complete
// chunk; the Reader reports the damaged tail as ErrTruncated (wrapped, with
// the byte offset) after delivering everything before it.
//
// Writer implements meter.Sink, so a meter streams straight into a capture.
// Readers stream: nothing needs the whole file in memory.
package capture
