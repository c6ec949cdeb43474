package drivesim

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"sort"
	"strconv"
	"time"

	"github.com/idlewatt/idlewatt/states/powerstate"
	"github.com/idlewatt/idlewatt/units"
)

// TruthSchema is the schema line's value in a truth file.
const TruthSchema = "idlewatt.drivesim.truth/v1"

// TruthHeader is the first line of a truth file.
type TruthHeader struct {
	Schema  string `json:"schema"`
	Profile string `json:"profile"`
	Seed    int64  `json:"seed"`
	Port    int    `json:"port,omitempty"`
}

// truthLine is one segment as written: times in seconds on the emulator
// clock, powers in W.
type truthLine struct {
	State  string  `json:"state"`
	StartS float64 `json:"start_s"`
	EndS   float64 `json:"end_s"`
	P5W    float64 `json:"p5_w"`
	P12W   float64 `json:"p12_w"`
	PowerW float64 `json:"power_w"`
	GC     bool    `json:"gc,omitempty"`
	IO     bool    `json:"io,omitempty"`
}

// TruthWriter writes a truth file: a header line, then one JSON object per
// segment (see docs/drive-profiles.md). Errors are sticky and returned by
// Flush.
type TruthWriter struct {
	w   *bufio.Writer
	buf []byte
	err error
}

// NewTruthWriter writes h (with the schema filled in) and returns a writer
// for the segments.
func NewTruthWriter(w io.Writer, h TruthHeader) *TruthWriter {
	tw := &TruthWriter{w: bufio.NewWriterSize(w, 64<<10)}
	h.Schema = TruthSchema
	b, err := json.Marshal(h)
	if err == nil {
		b = append(b, '\n')
		_, err = tw.w.Write(b)
	}
	tw.err = err
	return tw
}

// Write appends one segment. It formats by hand: a busy drive finishes a
// segment per transfer, so this runs at I/O rate.
func (tw *TruthWriter) Write(s Segment) {
	if tw.err != nil {
		return
	}
	b := tw.buf[:0]
	b = append(b, `{"state":"`...)
	b = append(b, s.State.String()...)
	b = append(b, `","start_s":`...)
	b = strconv.AppendFloat(b, s.Start.Seconds(), 'f', 9, 64)
	b = append(b, `,"end_s":`...)
	b = strconv.AppendFloat(b, s.End.Seconds(), 'f', 9, 64)
	b = append(b, `,"p5_w":`...)
	b = strconv.AppendFloat(b, float64(s.P5), 'g', -1, 64)
	b = append(b, `,"p12_w":`...)
	b = strconv.AppendFloat(b, float64(s.P12), 'g', -1, 64)
	b = append(b, `,"power_w":`...)
	b = strconv.AppendFloat(b, float64(s.P5+s.P12), 'g', -1, 64)
	if s.GC {
		b = append(b, `,"gc":true`...)
	}
	if s.IO {
		b = append(b, `,"io":true`...)
	}
	b = append(b, "}\n"...)
	tw.buf = b
	_, tw.err = tw.w.Write(b)
}

// IOSpan is a time the host had a request outstanding at the drive,
// [Start, End) on the emulator clock, at the times the host gave the model
// (Target.Before's and AfterAt's): the report's active state. The model
// may learn of a completion late (a host thread preempted between reaping
// it and telling the model); these times are the host's own.
type IOSpan struct{ Start, End time.Duration }

// WriteIO appends one outstanding-request span as a line
// {"io_start_s":…,"io_end_s":…}.
func (tw *TruthWriter) WriteIO(s IOSpan) {
	if tw.err != nil {
		return
	}
	b := tw.buf[:0]
	b = append(b, `{"io_start_s":`...)
	b = strconv.AppendFloat(b, s.Start.Seconds(), 'f', 9, 64)
	b = append(b, `,"io_end_s":`...)
	b = strconv.AppendFloat(b, s.End.Seconds(), 'f', 9, 64)
	b = append(b, "}\n"...)
	tw.buf = b
	_, tw.err = tw.w.Write(b)
}

// Flush writes buffered lines and returns the first error seen.
func (tw *TruthWriter) Flush() error {
	if tw.err != nil {
		return tw.err
	}
	return tw.w.Flush()
}

// ErrTruthFormat is wrapped by ReadTruth's errors.
var ErrTruthFormat = errors.New("bad truth file")

// ReadTruth reads a file written by TruthWriter. Errors name the line.
func ReadTruth(r io.Reader) (TruthHeader, []Segment, error) {
	h, segs, _, err := ReadTruthIO(r)
	return h, segs, err
}

// ReadTruthIO is ReadTruth with the outstanding-request spans (WriteIO
// lines, in the order written: by end time).
func ReadTruthIO(r io.Reader) (TruthHeader, []Segment, []IOSpan, error) {
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 0, 4096), 1<<20)
	var h TruthHeader
	var segs []Segment
	var ios []IOSpan
	line := 0
	for sc.Scan() {
		line++
		b := sc.Bytes()
		if line == 1 {
			if err := json.Unmarshal(b, &h); err != nil {
				return h, nil, nil, fmt.Errorf("%w: line 1: header: %v", ErrTruthFormat, err)
			}
			if h.Schema != TruthSchema {
				return h, nil, nil, fmt.Errorf("%w: line 1: schema %q, want %q", ErrTruthFormat, h.Schema, TruthSchema)
			}
			continue
		}
		if len(b) == 0 {
			continue
		}
		if bytes.HasPrefix(b, []byte(`{"io_start_s"`)) {
			var x struct {
				StartS float64 `json:"io_start_s"`
				EndS   float64 `json:"io_end_s"`
			}
			if err := json.Unmarshal(b, &x); err != nil {
				return h, segs, ios, fmt.Errorf("%w: line %d: %v", ErrTruthFormat, line, err)
			}
			if math.IsNaN(x.StartS) || math.IsNaN(x.EndS) || math.Abs(x.StartS) > 1e9 || math.Abs(x.EndS) > 1e9 || x.EndS < x.StartS {
				return h, segs, ios, fmt.Errorf("%w: line %d: io span %v–%v out of range", ErrTruthFormat, line, x.StartS, x.EndS)
			}
			ios = append(ios, IOSpan{Start: secs(x.StartS), End: secs(x.EndS)})
			continue
		}
		var l truthLine
		if err := json.Unmarshal(b, &l); err != nil {
			return h, segs, ios, fmt.Errorf("%w: line %d: %v", ErrTruthFormat, line, err)
		}
		st, err := ParseState(l.State)
		if err != nil {
			return h, segs, ios, fmt.Errorf("%w: line %d: %v", ErrTruthFormat, line, err)
		}
		for _, x := range []float64{l.StartS, l.EndS, l.P5W, l.P12W} {
			if math.IsNaN(x) || math.IsInf(x, 0) || math.Abs(x) > 1e9 {
				return h, segs, ios, fmt.Errorf("%w: line %d: value %v out of range", ErrTruthFormat, line, x)
			}
		}
		s := Segment{Start: secs(l.StartS), End: secs(l.EndS), State: st, GC: l.GC, IO: l.IO, P5: units.Watts(l.P5W), P12: units.Watts(l.P12W)}
		if s.End < s.Start {
			return h, segs, ios, fmt.Errorf("%w: line %d: end_s %v before start_s %v", ErrTruthFormat, line, l.EndS, l.StartS)
		}
		if n := len(segs); n > 0 && s.Start < segs[n-1].End-time.Microsecond {
			return h, segs, ios, fmt.Errorf("%w: line %d: start_s %v before the previous segment's end", ErrTruthFormat, line, l.StartS)
		}
		segs = append(segs, s)
	}
	if err := sc.Err(); err != nil {
		return h, segs, ios, fmt.Errorf("%w: line %d: %v", ErrTruthFormat, line+1, err)
	}
	if line == 0 {
		return h, nil, nil, fmt.Errorf("%w: empty", ErrTruthFormat)
	}
	return h, segs, ios, nil
}

func secs(s float64) time.Duration { return time.Duration(math.Round(s * 1e9)) }

// Truth returns the true timeline up to the time the model has advanced
// to: every segment if Options.KeepTruth, else the short history still
// held for Render.
func (m *Model) Truth() []Segment {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.history()
}

func (m *Model) history() []Segment {
	var out []Segment
	if m.keepTruth {
		out = append(out, m.truth...)
		last := m.live[len(m.live)-1]
		if last.end > last.start {
			out = append(out, last.export())
		}
		return out
	}
	for _, s := range m.live[m.lh:] {
		if s.end > s.start {
			out = append(out, s.export())
		}
	}
	return out
}

// StateAt returns the true state at t, and false if t is outside the
// history held (see Truth) or beyond the time the model has advanced to.
func (m *Model) StateAt(t time.Duration) (powerstate.State, bool) {
	m.mu.Lock()
	defer m.mu.Unlock()
	h := m.history()
	i := sort.Search(len(h), func(i int) bool { return h[i].End > t })
	if i == len(h) || h[i].Start > t {
		return 0, false
	}
	return h[i].State, true
}

// MeanPower returns the true (noise-free) mean power per rail over
// [from, to), and false if the history held does not cover it.
func (m *Model) MeanPower(from, to time.Duration) (p5, p12 units.Watts, ok bool) {
	m.mu.Lock()
	defer m.mu.Unlock()
	return meanPower(m.history(), from, to)
}

func meanPower(h []Segment, from, to time.Duration) (p5, p12 units.Watts, ok bool) {
	if to <= from || len(h) == 0 || h[0].Start > from || h[len(h)-1].End < to {
		return 0, 0, false
	}
	var e5, e12 float64
	i := sort.Search(len(h), func(i int) bool { return h[i].End > from })
	for ; i < len(h) && h[i].Start < to; i++ {
		d := (min(to, h[i].End) - max(from, h[i].Start)).Seconds()
		e5 += float64(h[i].P5) * d
		e12 += float64(h[i].P12) * d
	}
	T := (to - from).Seconds()
	return units.Watts(e5 / T), units.Watts(e12 / T), true
}

// Finish advances the model to at, writes the open segment (up to at) to
// Options.TruthOut and flushes it. The model keeps running; a later Finish
// writes only what came after.
func (m *Model) Finish(at time.Duration) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.catchUp(at)
	if m.tw == nil {
		return nil
	}
	m.writeTruth(m.live[len(m.live)-1])
	m.truthFrom = m.t
	return m.tw.Flush()
}
