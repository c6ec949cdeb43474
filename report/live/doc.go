// Package live serves a recording's live view: the report viewer's charts
// (report/html's core.js and uPlot, embedded; no outside URL) drawn while
// the capture is being written, over a local HTTP stream.
//
// # Data path
//
// A View is a capture/record Observer (and IOObserver and MarkObserver):
// the recorder hands it every block, gap, meter event, host state event,
// I/O batch and mark echo as it writes them. Each call copies what it needs
// into a bounded queue and returns; when the queue is full the call skips
// (the samples are counted, and missing on the page — never in the
// capture): the recording never waits for the view. A goroutine of the
// View's own sums each drive's rails sample by sample (by meter index;
// an index a rail lacks is missing for the drive) and fills, per drive and
// per rail, two rings of envelope buckets: fine (1 ms, or each sample at
// 1 kS/s and below; Options.Fine back, 2 min by default) and coarse (64
// fine buckets; Options.Long back, 1 h). Each bucket holds min, max, sum of
// power, sum of current and count, so memory is fixed whatever the length
// of the recording (about 3.7 MB per series for the fine ring and 1.8 MB
// for the coarse one, at any rate).
//
// # Timeline
//
// Seconds from meter sample 0, as in the report: a sample's time is its
// index over the meter's nominal rate; host events (phases, DEVSLP
// requests, notes, I/O) are placed with the lowest-round-trip one of the
// last 32 clock marks (the header's start time before the first mark).
// Energies are Σ power / nominal rate: live figures. The report, fitted to
// the marks, is the figure of record.
//
// # HTTP
//
// Handler serves GET / (the page), GET /api/data (the buckets completed
// since the page's last request, at most 2^17 per series, base64 float32
// as in report.html, and the events after the last one it saw) and POST
// /api/note (an annotation, added to the capture's notes file through
// capture/notes). The page asks again only when it has drawn what it got,
// so a slow page skips ahead instead of queueing. Listen binds loopback
// unless told otherwise; requests naming a host other than an address or
// localhost are refused (DNS rebinding), and so are cross-origin POSTs.
//
// docs/report-html.md ("The live view") describes the page.
//
// # Where it sits
//
// The report layer (rank 4): a capture/record observer serving
// report/html's viewer; cmd/idlewatt (`record --view`) imports it.
package live
