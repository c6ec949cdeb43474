package csvexport

// `idlewatt export --csv`: the capture streamed once (a FIFO too) into a
// file written through a temporary name, or standard output.

import (
	"context"
	"errors"
	"fmt"
	"io"

	"github.com/idlewatt/idlewatt/capture"
	"github.com/idlewatt/idlewatt/internal/ctxio"
	"github.com/idlewatt/idlewatt/internal/outfile"
	"github.com/idlewatt/idlewatt/internal/progress"
	"github.com/idlewatt/idlewatt/internal/settings"
	"github.com/idlewatt/idlewatt/internal/textsafe"
)

// Export is one export: the capture read (In, a capture of the file the
// user named, Named), the CSV written (Out, "-" for Stdout) under Rules,
// the rows within Window. Notes (stderr) get what the reader lost and how
// the capture ended; Progress says how far the write is.
type Export struct {
	Named, In, Out string
	Window         Window
	Rules          outfile.Options
	Stdout, Notes  io.Writer
	Progress       *progress.Line
}

// Run writes the CSV. A capture without samples leaves no CSV and is bad
// input (capture.ErrNoSamples), as is a window past its last sample; a
// damaged capture gives every intact row, what was lost said in notes.
// placed says the file is under its name.
func (e Export) Run(ctx context.Context) (placed bool, err error) {
	defer e.Progress.Stop()
	r, rc, err := capture.OpenStream(ctx, e.In)
	if err != nil {
		return false, settings.Input(err)
	}
	defer rc.Close()
	defer r.Close()
	r.SkipSamples(false)
	w := e.Stdout
	var f *outfile.File
	if e.Out != "-" {
		if f, err = outfile.Create(e.Out, e.Rules); err != nil {
			if errors.Is(err, outfile.ErrRefused) {
				return false, settings.Usagef("export: --csv %w", err)
			}
			return false, fmt.Errorf("export: --csv %w", err)
		}
		defer f.Abort() // no-op after Commit
		w = f
	}
	e.Progress.Step("writing "+e.Out, nil)
	res, err := Write(w, r, e.Window)
	e.Progress.Stop()
	if err != nil && !errors.Is(err, capture.ErrTruncated) {
		return false, fmt.Errorf("export %s: %v", e.Out, err)
	}
	if !res.Samples { // the account report, plot and repair give; no CSV is left
		e.notes(r.Account())
		return false, capture.NoSamplesError(e.Named, err)
	}
	if res.Rows == 0 { // a window past the last sample: no header-only CSV
		return false, settings.Usagef("export: --from %g s: the capture's last sample is at %g s; no rows to write", e.Window.From.Seconds(), res.LastS)
	}
	// A damaged capture still gives every intact row (below). A signal
	// that came with the last read: nothing goes under the name.
	if err := ctxio.Stopped(ctx); err != nil {
		return false, err
	}
	if f != nil {
		if err := f.Commit(); err != nil {
			return false, fmt.Errorf("export %s: %w", e.Out, err)
		}
		placed = true
	}
	// The same account report and plot give (docs/cli.md, "Damaged
	// captures"): what was lost said on stderr.
	if err != nil { // nothing intact follows: everything before is exported
		fmt.Fprintf(e.Notes, "export: %d rows written; %s\n", res.Rows, textsafe.Terminal(fmt.Sprintf("%s: %v", e.Named, err)))
	}
	e.notes(r.Account())
	return placed, nil
}

func (e Export) notes(acc capture.Account) {
	for _, n := range acc.Notes() {
		fmt.Fprintf(e.Notes, "export: note: %s\n", textsafe.Terminal(n))
	}
}
