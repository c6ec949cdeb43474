package capture

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"path/filepath"
	"syscall"

	"github.com/idlewatt/idlewatt/internal/outfile"
	"github.com/idlewatt/idlewatt/internal/settings"
	"github.com/idlewatt/idlewatt/internal/textsafe"
)

// RepairResult is what Repair copied and what the input's reader found.
type RepairResult struct {
	SalvageResult
	// Account is the input reader's account: damage skipped, bits mended,
	// samples lost or rejected.
	Account Account
}

// Stages of a failed Repair (errors.Is; the error's text is the cause's).
var (
	// ErrRepairInput: the input does not open as a capture.
	ErrRepairInput = errors.New("repair input unreadable")
	// ErrRepairCreate: the output could not be created (errors.Is
	// outfile.ErrRefused as well when the output rules refused it).
	ErrRepairCreate = errors.New("repair output not created")
	// ErrRepairHeader: the input's header could not start the new capture.
	ErrRepairHeader = errors.New("repair header not written")
)

// Repair writes a clean capture of what the capture at in still holds to
// out (Salvage), in the input's format version and with its summaries'
// resolution, so the new summaries match. The input's damage (its
// Account's notes, an early end) is recorded in the new capture as host
// state notes "repaired from IN: …". out goes through internal/outfile
// under o: a temporary file renamed into place, so a failure leaves no half
// capture and an old out (with o.Overwrite) whole. A failure before the
// copy is one of ErrRepairInput, ErrRepairCreate or ErrRepairHeader; any
// later one is the copy's or the write's.
func Repair(ctx context.Context, in, out string, o outfile.Options) (RepairResult, error) {
	return repair(ctx, in, out, func() (repairOut, error) { return outfile.Create(out, o) })
}

// repairOut is where repair writes: an *outfile.File (a test's full disk).
type repairOut interface {
	io.Writer
	Commit() error
	Abort() error
}

func repair(ctx context.Context, in, out string, create func() (repairOut, error)) (res RepairResult, err error) {
	var written countWriter
	defer func() {
		// The writer says a capture cut by a full disk is readable up to
		// where it stopped — true of a capture recorded in place, not of
		// this copy, whose temporary file is removed: say what is left.
		if err != nil && errors.Is(err, ErrDiskFull) {
			var pe *fs.PathError
			cause := error(syscall.ENOSPC)
			if errors.As(err, &pe) {
				cause = pe
			}
			err = fmt.Errorf("%w after %d bytes of the repaired capture: %w; nothing is written (the partial copy was removed, %s is unchanged)", ErrDiskFull, written.n, cause, in)
		}
	}()
	per, err := summaryPer(in)
	if err != nil {
		return res, &stageError{ErrRepairInput, err}
	}
	r, err := Open(in)
	if err != nil {
		return res, &stageError{ErrRepairInput, err}
	}
	defer r.Close()
	h := r.Header()
	f, err := create()
	if err != nil {
		return res, &stageError{ErrRepairCreate, err}
	}
	defer f.Abort() // no-op after Commit
	written.w = f
	// The repaired capture keeps the input's format: a format 1 capture
	// stays readable by the idlewatt that wrote it.
	w, err := NewWriter(&written, h, Options{SummaryPer: per, Version: r.Version()})
	if err != nil {
		return res, &stageError{ErrRepairHeader, err}
	}
	res.SalvageResult, err = Salvage(ctx, w, r)
	res.Account = r.Account()
	if err != nil {
		w.Close()
		return res, err
	}
	notes := res.Account.Notes()
	if res.End != nil {
		notes = append(notes, fmt.Sprintf("the input ends early: %v", res.End))
	}
	for _, n := range notes {
		if err := w.State(StateEvent{Host: h.StartHost, Kind: StateNote, Value: "repaired from " + filepath.Base(in) + ": " + n}); err != nil {
			w.Close()
			return res, err
		}
	}
	if err := w.Close(); err != nil {
		return res, err
	}
	// A signal during the close: nothing goes under the output's name.
	if err := context.Cause(ctx); err != nil {
		return res, err
	}
	return res, f.Commit()
}

// countWriter counts the bytes written through it.
type countWriter struct {
	w io.Writer
	n int64
}

func (c *countWriter) Write(p []byte) (int, error) {
	n, err := c.w.Write(p)
	c.n += int64(n)
	return n, err
}

// summaryPer is the samples-per-point of in's first summary, or 0 (the
// writer's default) if it has none before its end or damage.
func summaryPer(in string) (uint32, error) {
	r, err := Open(in)
	if err != nil {
		return 0, err
	}
	defer r.Close()
	r.SkipSamples(true)
	for {
		rec, err := r.Next()
		if err != nil {
			return 0, nil
		}
		if rec.Kind == KindSummary && rec.Summary.Level == 0 && rec.Summary.Per > 0 {
			return rec.Summary.Per, nil
		}
	}
}

// stageError carries a stage sentinel without changing the cause's text.
type stageError struct {
	stage error
	err   error
}

func (e *stageError) Error() string   { return e.err.Error() }
func (e *stageError) Unwrap() []error { return []error{e.stage, e.err} }

// ClassifyRepair gives a failed Repair of in into out its class for the
// command line: an input that does not open, or an output the rules
// refuse, is bad usage or input (settings.ErrUsage); anything else a
// failure.
func ClassifyRepair(out string, err error) error {
	switch {
	case errors.Is(err, ErrRepairInput):
		return settings.Input(err)
	case errors.Is(err, ErrRepairCreate) && errors.Is(err, outfile.ErrRefused):
		return settings.Usagef("repair: --out %w", err)
	case errors.Is(err, ErrRepairCreate):
		return fmt.Errorf("repair: --out %w", err)
	case errors.Is(err, ErrRepairHeader):
		return fmt.Errorf("repair: %v", err)
	}
	return fmt.Errorf("repair %s: %v", out, err)
}

// Summary is the line that says what the repair of in into out kept.
func (res RepairResult) Summary(in, out string) string {
	acc := res.Account
	held := res.Samples + acc.SamplesLost
	if u, ok := acc.Unaccounted(); ok {
		held = res.Samples + u
	}
	kept := 100.0
	if held > 0 {
		kept = 100 * float64(res.Samples) / float64(held)
	}
	return fmt.Sprintf("%s: %d records, %d channel samples (%.3f %% of what %s held), %d damaged stretch(es) as gaps, %d flipped bit(s) mended, %d samples with covered indices left out",
		textsafe.Terminal(out), res.Records, res.Samples, kept, textsafe.Terminal(in), acc.DamageRegions, len(acc.Corrected), res.Rejected)
}
