package report

// The work of `idlewatt report` and `export --parquet` on a capture: read
// it (Analyze) and build or write what it gives, with a progress line, in
// memory first so that a signal at any moment leaves nothing under a final
// name (issue 26 item 1).

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"

	"github.com/idlewatt/idlewatt/analysis"
	"github.com/idlewatt/idlewatt/capture"
	"github.com/idlewatt/idlewatt/internal/ctxio"
	"github.com/idlewatt/idlewatt/internal/outfile"
	"github.com/idlewatt/idlewatt/internal/progress"
	"github.com/idlewatt/idlewatt/internal/settings"
	htmlreport "github.com/idlewatt/idlewatt/report/html"
	"github.com/idlewatt/idlewatt/report/pqexport"
)

// Session is one command's read of a capture: In is the capture (made of
// the file the user named, Path, when it is another meter's), Who the
// command ("idlewatt report"), Log its stderr. Run runs work that writes
// nothing so that a signal ends the command at once (the command line's
// cancellable); Progress says what it is doing.
type Session struct {
	Path, In, Who string
	Log           io.Writer
	Run           func(func() error) error
	Progress      *progress.Line
}

// analyze reads the capture pass by pass with opts; the progress line
// names it shown.
func (s Session) analyze(ctx context.Context, shown string, opts analysis.Options, open analysis.Opener, at *capture.Pos) (*analysis.Report, error) {
	s.Progress.Passes(shown, at.Pass, at.Frac)
	return Analyze(ctx, open, s.In, s.Who, opts)
}

// Build analyses the capture and builds every report file (report.html
// too, unless noHTML) in memory, out being where they will go. chartErr is
// a chart that failed when the rest was built.
func (s Session) Build(ctx context.Context, opts analysis.Options, out string, withHTML bool) (r *analysis.Report, outs []Output, chartErr, err error) {
	open, at, err := Opener(ctx, s.In, s.Who)
	if err != nil {
		return nil, nil, nil, err
	}
	stop := ctxio.Interrupted(ctx)
	err = s.Run(func() error {
		var pyr *htmlreport.Pyramid
		if withHTML {
			// Its events and DEVSLP pin edges come from the analysis' first
			// pass (analysis.RecordSink), not from reads of their own.
			pyr = htmlreport.NewPyramidFor(s.In, htmlreport.Budget{})
			opts.Samples = pyr
		}
		var err error
		if r, err = s.analyze(ctx, s.Path, opts, open, at); err != nil {
			return err
		}
		r.Capture.Path = s.Path
		if warn := AttachNotes(r, s.Path); warn != "" {
			fmt.Fprintf(s.Log, "%s: warning: %s\n", s.Who, warn)
		}
		s.Progress.Step("building the report files and charts", nil)
		// report.html is built while the other files and the charts are,
		// on the report as Build leaves it (both only read it then).
		var html func() ([]byte, error)
		if withHTML {
			noteChartDrives(r)
			html = goRender(func() ([]byte, error) {
				return htmlreport.Render(r, pyr, htmlreport.Options{Capture: s.In, Stop: stop}) // the capture made of another meter's file, not the file
			})
		}
		outs, chartErr = Build(r, WriteOptions{Stop: stop})
		var b []byte
		var htmlErr error
		if html != nil {
			b, htmlErr = html()
		}
		if outs == nil {
			return chartErr
		}
		if withHTML {
			s.Progress.Step("building "+htmlreport.FileName, nil)
			if htmlErr != nil {
				return fmt.Errorf("writing %s into %s: %w", htmlreport.FileName, out, htmlErr)
			}
			outs = append(outs, Output{Name: htmlreport.FileName, Data: b})
		}
		return nil
	})
	return r, outs, chartErr, err
}

// ExportParquet writes the capture and its report as Parquet into dir
// under oo, after CheckParquetOut: state detection as report runs it, so
// that state.parquet holds its intervals and summary.parquet's residencies
// are report.json's. A capture without samples, or in which no drive has
// a single power sample (each lacks a rail: Parquet files of nulls), is
// bad input and nothing is written; the report's notes go to the log.
// placed says the files are under their names.
func (s Session) ExportParquet(ctx context.Context, dir string, oo outfile.Options) (placed bool, err error) {
	if err := CheckParquetOut(dir, oo); err != nil {
		return false, err
	}
	if acc, err := capture.RequireSamples(ctx, s.In); err != nil {
		WriteNotes(s.Log, "export", acc.Notes())
		return false, err
	}
	opts := analysis.DefaultOptions()
	opts.States = &analysis.StateOptions{}
	open, at, err := Opener(ctx, s.In, s.Who)
	if err != nil {
		return false, err
	}
	var rep *analysis.Report
	if err := s.Run(func() error {
		var err error
		rep, err = s.analyze(ctx, s.In, opts, open, at)
		return err
	}); err != nil {
		return false, err
	}
	if NoPower(s.In, dir, rep) != nil {
		WriteNotes(s.Log, "export", rep.Notes)
		return false, settings.Input(fmt.Errorf("%s: no drive has a power sample (each lacks a rail; see the notes above); nothing written", s.In))
	}
	host, _ := os.Hostname()
	s.Progress.Step("writing the Parquet files into "+dir, nil)
	if err := pqexport.Write(s.In, rep, dir, pqexport.Options{Overwrite: oo.Overwrite, Host: host, Stop: ctxio.Interrupted(ctx)}); err != nil {
		if errors.Is(err, ctxio.ErrInterrupted) {
			return false, err
		}
		if errors.Is(err, outfile.ErrRefused) {
			return false, settings.Usagef("export: --parquet %v", err)
		}
		return false, fmt.Errorf("export: --parquet %v", err)
	}
	s.Progress.Stop()
	WriteNotes(s.Log, "export", rep.Notes)
	return true, nil
}

// goRender runs render on a goroutine of its own; the function returned
// waits for its result. A panic in render is raised again there, on the
// caller's goroutine, where the command's handler of internal errors
// sees it.
func goRender(render func() ([]byte, error)) func() ([]byte, error) {
	var b []byte
	var err error
	var caught any
	done := make(chan struct{})
	go func() {
		defer close(done)
		defer func() { caught = recover() }()
		b, err = render()
	}()
	return func() ([]byte, error) {
		<-done
		if caught != nil {
			panic(caught)
		}
		return b, err
	}
}
