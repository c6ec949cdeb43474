// Package record streams a meter into a capture file: the one recording
// pipeline behind `idlewatt record`, `measure`, `idle`, `devslp verify` and
// `demo` (through app/rig).
//
// # Pipeline
//
// Start resolves the stream (meter.Resolve: rate and ports as the driver
// will stream them), builds the capture header from the meter's Info and
// the caller's template, creates the capture (capture.Create), and streams
// into a counting sink that writes every block, gap, mark and event to it.
// Beside the stream a ticker sends a clock mark every MarkInterval when the
// meter is a meter.Marker and records the link's Stats into the capture.
// A meter replaying a recorded stream (Options.Replayed) gets neither: it
// has no host clock to mark, and its Stats are read once, at the end.
// Close stops the stream, writes the final Stats and closes the capture.
// A meter that counts the frames it refused by kind (RefusalCounter: the
// hub) has them written into the capture as a "meter-refused" note
// whenever they change, and in Result.RefusedBy; Totals.Span is the
// stream's length on the meter's clock.
//
// # Progress
//
// Progress returns one snapshot of the recording: totals (samples, gaps,
// samples lost by reason, marks, outages of a meter that vanished and came
// back), the link's Stats as of the last tick, and each port's mean power
// since the previous snapshot (meter.Block.PowerSum per rail, summed over
// the port's rails). ProgressLine formats a snapshot as the one progress
// line every recording command prints (command, elapsed time, phase,
// samples, each port's power, CRC errors, gaps, outages, failed marks),
// and ReportProgress writes one to a writer once a second (ProgressInterval),
// rewritten in place on a terminal when asked; app/rig's runs and
// `idlewatt record` use it, and nothing else in the recorder prints.
//
// # Observers
//
// An Observer (live metrics) sees the header first, then every block, gap,
// Stats and host state event as it is written; its calls must not block.
// One that is also an IOObserver sees the I/O events, a MarkObserver the
// clock marks' echoes (the live view, report/live, takes both). Tee makes
// several observers one.
//
// summary.go is `idlewatt record`'s side: Flags (its settings), the
// Request they make, checked before the meter opens, and the Summary
// printed when it is done.
//
// # Where it sits
//
// The capture floor (rank 2), over capture, meter and the leaves: the one
// recording pipeline; app/rig, app/config, report/live and cmd/idlewatt
// (`record`) import it.
package record
