// Package importer turns another meter's file (meter/files: a Nordic Power
// Profiler CSV export, a Joulescope JLS v2 file, an Otii CSV export) into an
// idlewatt capture, so report, plot and export read it like a recording of
// their own. `idlewatt import` calls Import; report, plot and export, given
// such a file, import it into a temporary capture first (docs/meters.md,
// "Other meters' files").
//
// # What the capture holds
//
// The header takes the file's meter identity, its one channel (port 1 unless
// Options.Port says otherwise; the rail named from the voltage when it is
// 3.3, 5 or 12 V), its rate, and the file's wall-clock start when it states
// one (Header.Created). Samples, gaps and digital-line events (EventLogic)
// are the file's, on its own index (the first sample is index 0). A file
// has no host clock: host times are the sample index at the file's rate,
// carried by synthetic marks once a second (and at the last sample), so the
// clock fit is exact and durations and energies are the file's. The
// DEVSLP line's edges become EventDevSlp on the drive's port; the marker
// line's high spans become I/O events (operation unknown, size 0) that
// analysis treats as busy time. Everything the format cannot carry, or that
// was assumed to read it, is a host note starting with NotePrefix, which
// the report repeats.
//
// Memory is bounded: the file is read a row or a chunk at a time and the
// capture writer flushes at least every MiB.
//
// flags.go is the command line's side: the settings a meter file may
// need (Flags, FileOptions), the classes of an import's errors, and Input,
// a temporary capture of a meter file for the commands that read
// captures.
//
// # Where it sits
//
// The capture floor (rank 2), over capture and meter/files; report (plot
// from a meter file's own summaries) and cmd/idlewatt (`import`, and
// report, plot and export given another meter's file) import it.
package importer
