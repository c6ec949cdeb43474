package record

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/idlewatt/idlewatt/capture"
	"github.com/idlewatt/idlewatt/hostclock"
	"github.com/idlewatt/idlewatt/meter"
)

// MarkInterval is how often a clock mark is sent and the link's Stats are
// recorded: twice a second, enough marks for a clock fit whose residual
// stays well under a DevSlp exit latency.
const MarkInterval = 500 * time.Millisecond

// Observer sees what is recorded, as it is written. Start comes first,
// with the capture's header; the other calls come from the stream and the
// caller's goroutines and must not block.
type Observer interface {
	Start(h capture.Header)
	Samples(b *meter.Block)
	Gap(g meter.Gap)
	Stats(st meter.Stats)
	State(e capture.StateEvent)
	// Event is a meter event (a DEVSLP pin edge with its sample index, a
	// disconnect, …) as the meter reported it.
	Event(e meter.Event)
}

// IOObserver is an Observer that also sees the I/O events recorded
// (Recorder.IO), in the order they are written. Optional: the recorder
// checks for it.
type IOObserver interface {
	IO(evs []capture.IOEvent)
}

// MarkObserver is an Observer that also sees the clock marks' echoes as
// they are recorded (a live view places host events on the meter's clock
// with them). Optional: the recorder checks for it.
type MarkObserver interface {
	Mark(m meter.MarkEcho)
}

// Options are one recording.
type Options struct {
	Path   string             // the capture to create
	Stream meter.StreamConfig // as asked; Start resolves it
	// Header is the template of the capture's header: Tool, Drives and
	// Config are kept; Created, Meter, Channels, RateHz and StartHost are
	// set by Start.
	Header capture.Header
	// Describe, if set, gives the header's Config from the resolved stream.
	Describe func(resolved meter.StreamConfig) json.RawMessage
	Capture  capture.Options
	Observer Observer // nil: none
	// Replayed: the meter decodes a recorded stream unpaced (no marks, no
	// Stats until the end).
	Replayed bool
}

// RefusalCounter is a meter that counts the frames it refused, by kind
// (the hub driver: a good CRC, a payload it cannot use). The recording
// writes the counts into the capture as a note, "meter-refused" and their
// JSON ({"event":1,"mark_echo":2}), whenever they change (at each
// MarkInterval, and at Close), and Result.RefusedBy has the last.
type RefusalCounter interface {
	RefusedBy() map[string]uint64
}

// RefusedNote is the prefix of the capture note holding a meter's refused
// frames by kind (docs/capture-format.md § State).
const RefusedNote = "meter-refused"

// Errors of Start, for callers that word them their own way (errors.Is).
var (
	// ErrResolve wraps the meter's refusal of the stream (meter.Resolve).
	ErrResolve = errors.New("stream not possible")
	// ErrNoChannels: the stream selects no channel of the meter.
	ErrNoChannels = errors.New("no channels selected")
	// ErrNoRate: the resolved stream has no sample rate.
	ErrNoRate = errors.New("the meter reports no sample rate")
	// ErrCreate wraps capture.Create's failure.
	ErrCreate = errors.New("capture not created")
)

// stageError carries a stage sentinel without changing the cause's text.
type stageError struct {
	stage error
	err   error
}

func (e *stageError) Error() string        { return e.err.Error() }
func (e *stageError) Unwrap() []error      { return []error{e.stage, e.err} }
func (e *stageError) Is(target error) bool { return target == e.stage }

// ResolveError is the meter's refusal of the stream (errors.Is ErrResolve);
// Stream is the config as far as the meter resolved it.
type ResolveError struct {
	Stream meter.StreamConfig
	Err    error
}

func (e *ResolveError) Error() string        { return e.Err.Error() }
func (e *ResolveError) Unwrap() error        { return e.Err }
func (e *ResolveError) Is(target error) bool { return target == ErrResolve }

// Recorder is a recording in progress.
type Recorder struct {
	m      meter.Meter
	w      *capture.Writer
	sink   *sink
	obs    Observer
	h      capture.Header
	path   string
	cfg    meter.StreamConfig
	replay bool

	ctx    context.Context
	cancel context.CancelFunc
	done   chan struct{}
	err    error // the stream's, valid after done
	wg     sync.WaitGroup

	mu       sync.Mutex
	stats    meter.Stats // as of the last tick
	markErrs uint64
	closed   bool
	refused  string // the last meter-refused note written ("" none)
}

// Start resolves, creates the capture and starts streaming m into it until
// ctx is done, the stream ends, or Close.
func Start(ctx context.Context, m meter.Meter, o Options) (*Recorder, error) {
	info := m.Info()
	cfg, err := meter.Resolve(m, o.Stream)
	if err != nil {
		return nil, &ResolveError{Stream: cfg, Err: err}
	}
	chans := meter.Channels(info, cfg)
	if len(chans) == 0 {
		return nil, &stageError{ErrNoChannels, fmt.Errorf("no channels selected (ports %v of a %d-port meter)", o.Stream.Ports, info.Ports)}
	}
	if cfg.Rate <= 0 {
		return nil, &stageError{ErrNoRate, fmt.Errorf("the %s meter reports no sample rate; set one", info.Kind)}
	}
	h := o.Header
	h.Created = time.Now().UTC().Format(time.RFC3339)
	h.Meter, h.Channels, h.RateHz, h.StartHost = info, chans, cfg.Rate, hostclock.Now()
	if o.Describe != nil {
		h.Config = o.Describe(cfg)
	}
	w, err := capture.Create(o.Path, h, o.Capture)
	if err != nil {
		return nil, &stageError{ErrCreate, err}
	}
	r := &Recorder{m: m, w: w, obs: o.Observer, h: h, path: o.Path, cfg: cfg, replay: o.Replayed, done: make(chan struct{})}
	r.sink = newSink(w, chans, o.Observer)
	if r.obs != nil {
		r.obs.Start(h)
	}
	r.ctx, r.cancel = context.WithCancel(ctx)
	go func() {
		defer close(r.done)
		r.err = m.Stream(r.ctx, cfg, r.sink)
	}()
	if !o.Replayed {
		r.wg.Go(r.tick)
	}
	return r, nil
}

// tick marks the meter clock and records the link's Stats every
// MarkInterval until the stream ends.
func (r *Recorder) tick() {
	t := time.NewTicker(MarkInterval)
	defer t.Stop()
	marker, canMark := r.m.(meter.Marker)
	var id uint32
	for {
		select {
		case <-r.done:
			return
		case <-t.C:
		}
		if canMark {
			id++
			mctx, cancel := context.WithTimeout(r.ctx, time.Second)
			if err := marker.Mark(mctx, id); err != nil && r.ctx.Err() == nil {
				r.mu.Lock()
				r.markErrs++ // a lost mark only thins the clock fit
				r.mu.Unlock()
			}
			cancel()
		}
		st := r.m.Stats()
		r.mu.Lock()
		r.stats = st
		r.mu.Unlock()
		if err := r.w.Stats(st); err != nil {
			return // the sink reports the writer's failure to Stream
		}
		if r.obs != nil {
			r.obs.Stats(st)
		}
		if _, err := r.noteRefused(); err != nil {
			return
		}
	}
}

// noteRefused writes the meter's refused frames by kind as a capture note
// when they changed since the last one, and returns them.
func (r *Recorder) noteRefused() (map[string]uint64, error) {
	rc, ok := r.m.(RefusalCounter)
	if !ok {
		return nil, nil
	}
	by := rc.RefusedBy()
	if len(by) == 0 {
		return nil, nil
	}
	b, err := json.Marshal(by) // keys sorted: equal counts, equal text
	if err != nil {
		return by, err
	}
	note := RefusedNote + " " + string(b)
	r.mu.Lock()
	same := note == r.refused
	r.refused = note
	r.mu.Unlock()
	if same {
		return by, nil
	}
	return by, r.State(capture.StateEvent{Host: hostclock.Now(), Kind: capture.StateNote, Value: note})
}

// Header is the capture's header as written.
func (r *Recorder) Header() capture.Header { return r.h }

// Stream is the stream as resolved.
func (r *Recorder) Stream() meter.StreamConfig { return r.cfg }

// Path is the capture's path.
func (r *Recorder) Path() string { return r.path }

// Done is closed when the stream has ended (ctx done, end of a recorded
// stream, failure).
func (r *Recorder) Done() <-chan struct{} { return r.done }

// Err is the stream's error once Done is closed (nil before).
func (r *Recorder) Err() error {
	select {
	case <-r.done:
		return r.err
	default:
		return nil
	}
}

// State writes a host state event and tells the observer.
func (r *Recorder) State(e capture.StateEvent) error {
	err := r.w.State(e)
	if r.obs != nil {
		r.obs.State(e)
	}
	return err
}

// IO writes I/O events and tells the observer, if it is an IOObserver.
func (r *Recorder) IO(evs ...capture.IOEvent) error {
	err := r.w.IO(evs...)
	if o, ok := r.obs.(IOObserver); ok {
		o.IO(evs)
	}
	return err
}

// Result is how a recording went.
type Result struct {
	Totals
	Stats meter.Stats // the meter's final counters
	// RefusedBy splits Stats.Refused by kind (a RefusalCounter meter's;
	// nil when none was refused or the meter does not say).
	RefusedBy map[string]uint64
	StreamErr error // the stream's failure (nil when it ended on ctx or at the end of a recording)
	WriteErr  error // the final Stats record's or the capture's Close failure
}

// Close stops the stream (if it still runs), records the final Stats and
// closes the capture. Calling it again returns the zero Result.
func (r *Recorder) Close() Result {
	r.mu.Lock()
	if r.closed {
		r.mu.Unlock()
		return Result{}
	}
	r.closed = true
	r.mu.Unlock()
	r.cancel()
	<-r.done
	r.wg.Wait()
	res := Result{Totals: r.sink.totals(), Stats: r.m.Stats(), StreamErr: r.err}
	if r.obs != nil {
		r.obs.Stats(res.Stats)
	}
	res.WriteErr = r.w.Stats(res.Stats)
	by, err := r.noteRefused()
	if res.RefusedBy = by; res.WriteErr == nil {
		res.WriteErr = err
	}
	if err := r.w.Close(); res.WriteErr == nil {
		res.WriteErr = err
	}
	return res
}
