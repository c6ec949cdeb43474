// Package notes keeps a capture's annotations: free-text notes a user
// puts on its time axis (`idlewatt annotate`, or the live view), each at a
// time or over an interval, in seconds on the report's timeline (meter
// sample 0 is 0 s, as report.json's times are). They live beside the
// capture, in CAPTURE.notes.jsonl (PathFor), one JSON object a line, so a
// capture is never rewritten to annotate it: Add reads the file, appends
// the note and writes the file again through internal/outfile (a temporary
// file renamed into place, never through a symbolic link, never over the
// capture).
//
// # Format
//
//	{"at_s": 61.5, "text": "fan came on"}
//	{"at_s": 60, "to_s": 65, "text": "DevSlp held", "created": "2026-12-02T14:00:00Z", "source": "cli"}
//
// at_s is required; to_s, when present, is after at_s; text is 1 to
// MaxText bytes of UTF-8 without control characters other than tab and
// newline. Blank lines are skipped; anything else is an error naming the
// file and line. The text is the user's: every output escapes it for its
// medium (HTML, Markdown, the chart's labels are drawn as text).
//
// docs/cli.md ("annotate") and docs/report-html.md describe where notes are
// shown: report.json's annotations key, report.md, report.html, the power
// chart, compare.md/compare.html, and the live view.
//
// # Where it sits
//
// The capture floor (rank 2), with internal/outfile its only project
// import; analysis and report/live read notes, app/rig and cmd/idlewatt
// write them.
package notes
