package capture

// What a command needs to read a capture under a context: passes that stop
// when a signal cancels it and say how far they have read (for a progress
// line), a stream of one pass (a FIFO too), and the one account of a
// capture that holds no samples.

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"sync/atomic"

	"github.com/idlewatt/idlewatt/internal/ctxio"
	"github.com/idlewatt/idlewatt/internal/settings"
)

// Pos is how far the current pass over a capture has read: which pass,
// at which byte of how many.
type Pos struct {
	pass atomic.Int32
	off  atomic.Int64
	size int64
}

// NewPos is the position of passes over size bytes (a test's, or a
// caller's own passes).
func NewPos(size int64) *Pos { return &Pos{size: size} }

// Pass is the current pass, from 1 (0 before the first).
func (p *Pos) Pass() int32 { return p.pass.Load() }

// Frac is the current pass's fraction read (negative: unknown).
func (p *Pos) Frac() float64 {
	if p.size <= 0 {
		return -1
	}
	return min(1, float64(p.off.Load())/float64(p.size))
}

// Seek sets the pass and offset (a test's).
func (p *Pos) Seek(pass int32, off int64) { p.pass.Store(pass); p.off.Store(off) }

// CtxReader is a Reader that stops when its context is done (every
// record checks ctxio.Stopped) and moves its Pos.
type CtxReader struct {
	ctx context.Context
	*Reader
	at *Pos
}

func (s CtxReader) Next() (Record, error) {
	if err := ctxio.Stopped(s.ctx); err != nil {
		return Record{}, err
	}
	rec, err := s.Reader.Next()
	if s.at != nil {
		s.at.off.Store(s.Reader.Offset())
	}
	return rec, err
}

// CaptureReader hands the reader to the analysis passes that read a
// capture run by run (NewRows).
func (s CtxReader) CaptureReader() *Reader { return s.Reader }

// Passes checks that path is a regular file (a pass is read more than
// once: a FIFO would block the second open) and returns the opener of its
// passes, each a CtxReader under ctx, and their position. who is the
// command that reads it ("idlewatt report"), for messages. The passes
// check the capture's summaries against its samples once, not each pass
// (memo.go): a pass after the first that decoded every sample takes its
// verdicts, while the file is unchanged.
func Passes(ctx context.Context, path, who string) (func() (CtxReader, error), *Pos, error) {
	fi, err := os.Stat(path)
	if err != nil {
		return nil, nil, settings.Input(fmt.Errorf("capture: %w", err))
	}
	if !fi.Mode().IsRegular() {
		if fi.IsDir() {
			return nil, nil, settings.Usagef("%s: %s is a directory, not a regular file (a capture)", who, path)
		}
		return nil, nil, settings.Usagef("%s: %s is not a regular file (%s); %s reads a capture twice: copy it to a file first",
			who, path, ctxio.FileKind(fi.Mode()), lastWord(who))
	}
	at := &Pos{size: fi.Size()}
	memo := &verifyMemo{} // the summaries are checked once, not once per pass (memo.go)
	return func() (CtxReader, error) {
		if err := ctxio.Stopped(ctx); err != nil {
			return CtxReader{}, err
		}
		r, err := Open(path)
		if err != nil {
			return CtxReader{}, err
		}
		r.useMemo(memo)
		at.pass.Add(1)
		at.off.Store(0)
		return CtxReader{ctx, r, at}, nil
	}, at, nil
}

func lastWord(s string) string {
	for i := len(s) - 1; i >= 0; i-- {
		if s[i] == ' ' {
			return s[i+1:]
		}
	}
	return s
}

// OpenStream opens a capture for one pass from its start: any file that
// can be read (a FIFO too), stopping when ctx is done. Close the returned
// closer after the reader.
func OpenStream(ctx context.Context, path string) (*Reader, io.Closer, error) {
	f, err := ctxio.Open(ctx, path)
	if err != nil {
		return nil, nil, fmt.Errorf("capture: %w", err)
	}
	cr := ctxio.NewReader(ctx, f)
	r, err := NewReader(ctxio.StopReader{Ctx: ctx, R: cr})
	if err != nil {
		cr.Close()
		return nil, nil, fmt.Errorf("%s: %w", path, err)
	}
	return r, cr, nil
}

// ErrNoSamples is the one account every command that reads a capture
// gives of a capture that holds no samples — a header only, or a header
// and marks, events or statistics, cut before its first samples chunk
// (docs/cli.md, "Damaged captures"): bad input, from report, plot, export
// and repair alike.
var ErrNoSamples = errors.New("the capture holds no samples")

// NoSamplesError is ErrNoSamples for path, with where reading stopped
// (stop: the reader's error, nil when the capture ended with its end
// chunk), as bad input (settings.ErrUsage).
func NoSamplesError(path string, stop error) error {
	why := "it ends with its end chunk"
	if stop != nil && !errors.Is(stop, io.EOF) {
		why = stop.Error()
	}
	return settings.Input(fmt.Errorf("%s: %w (%s); there is nothing to read", path, ErrNoSamples, why))
}

// RequireSamples reads the regular file path up to its first sample and,
// when it holds none, returns the reader's account and NoSamplesError. A
// capture that cannot be opened, or that is damaged rather than cut
// short, or a read ctx interrupts, passes (nil, nil): the caller's own
// read reports it; so does anything but a regular file (a FIFO would
// block the open).
func RequireSamples(ctx context.Context, path string) (*Account, error) {
	if fi, err := os.Stat(path); err != nil || !fi.Mode().IsRegular() {
		return nil, nil
	}
	r, err := Open(path)
	if err != nil {
		return nil, nil
	}
	defer r.Close()
	var stop error
	for {
		if err := context.Cause(ctx); err != nil {
			return nil, nil
		}
		rec, err := r.Next()
		if err != nil {
			if !errors.Is(err, io.EOF) && !errors.Is(err, ErrTruncated) {
				return nil, nil
			}
			stop = err
			break
		}
		if rec.Kind == KindSamples && rec.Block != nil && rec.Block.Len() > 0 {
			return nil, nil
		}
	}
	acc := r.Account()
	return &acc, NoSamplesError(path, stop)
}

// IsCapture reports whether the file at path starts as a capture does
// (its magic's first bytes): a regular file that is not one may be another
// meter's (capture/importer).
func IsCapture(path string) bool {
	f, err := os.Open(path)
	if err != nil {
		return false
	}
	defer f.Close()
	var b [8]byte
	n, _ := io.ReadFull(f, b[:])
	return n == 8 && string(b[:4]) == "\x89IWC"
}
