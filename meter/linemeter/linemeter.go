package linemeter

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"sync"
	"time"

	"github.com/idlewatt/idlewatt/hostclock"
	"github.com/idlewatt/idlewatt/internal/serialport"
	"github.com/idlewatt/idlewatt/meter"
	"github.com/idlewatt/idlewatt/units"
)

// Options configure a line meter.
type Options struct {
	Columns Columns
	// Voltage is used when the map has no voltage column (e.g. CurrentRanger).
	Voltage units.Volts
	// Rate is the nominal lines per second, for Info only (lines are
	// numbered as they arrive; a line meter has no sample clock).
	Rate units.Hertz
	Baud uint32 // serial baud rate; default 115200
	Rail meter.Rail
}

// BadLines describes the lines Stream skipped.
type BadLines struct {
	Count     uint64
	FirstLine uint64 // 1-based line number of the first bad line
	First     string // its text (truncated) and why
	// Gaps is how many of them became one-sample "bad-line" gaps: every
	// bad line after the first reading (the ones before it are a preamble,
	// banners and headers, and hold no place on the timeline).
	Gaps uint64
	// Lines are the first MaxBadLines bad lines.
	Lines []BadLine
}

// BadLine locates one skipped line.
type BadLine struct {
	Line   uint64 // 1-based line number
	Offset uint64 // byte offset of its first byte in the stream
	Why    string // its text (truncated) and why it is not a reading
}

// MaxBadLines is how many bad lines BadLines.Lines keeps.
const MaxBadLines = 5

func (b BadLines) String() string {
	if b.Count == 0 {
		return "no bad lines"
	}
	s := fmt.Sprintf("%d lines skipped, %d of them one-sample gaps", b.Count, b.Gaps)
	for i, l := range b.Lines {
		sep := "; "
		if i == 0 {
			sep = " ("
		}
		s += fmt.Sprintf("%sline %d at byte %d: %s", sep, l.Line, l.Offset, l.Why)
	}
	if b.Count > uint64(len(b.Lines)) {
		s += "; …"
	}
	return s + ")"
}

// Meter reads a line-streaming meter from any io.Reader.
type Meter struct {
	r      io.Reader
	closer io.Closer
	name   string
	opts   Options

	mu    sync.Mutex
	stats meter.Stats
	bad   BadLines
}

var _ meter.Meter = (*Meter)(nil)

// maxLine bounds a line; longer ones are bad lines, not unbounded memory.
const maxLine = 4096

// New reads lines from r.
func New(r io.Reader, opts Options) *Meter {
	if opts.Columns.Sep == "" {
		opts.Columns.Sep = ","
	}
	return &Meter{r: r, opts: opts, name: "(reader)"}
}

// Open opens a serial device at opts.Baud (8N1, raw; default 115200; any
// rate the port's driver takes) or, for a regular file, reads a recorded
// log to its end.
//
// Without a voltage column, Options.Voltage must be a rail voltage in
// (0, MaxVolts] V: 0 would make every reading 0 W. Otherwise it is an error
// wrapping meter.ErrCalibration.
func Open(path string, opts Options) (*Meter, error) {
	if opts.Columns.Voltage < 0 && !(opts.Voltage > 0 && opts.Voltage <= MaxVolts) {
		return nil, fmt.Errorf("linemeter: %w: Options.Voltage %g V: the column map has no voltage column, so it is every reading's voltage and must be in (0, %g] V",
			meter.ErrCalibration, float64(opts.Voltage), MaxVolts)
	}
	fi, err := os.Stat(path)
	if err != nil {
		return nil, fmt.Errorf("linemeter: %w: %v", meter.ErrNoDevice, err)
	}
	var f io.ReadCloser
	if fi.Mode().IsRegular() {
		f, err = os.Open(path)
	} else {
		if opts.Baud == 0 {
			opts.Baud = 115200
		}
		f, err = serialport.Open(path, int(opts.Baud))
	}
	if errors.Is(err, serialport.ErrInUse) {
		return nil, fmt.Errorf("linemeter: %w", err)
	}
	if err != nil {
		return nil, fmt.Errorf("linemeter: %w: %v", meter.ErrNoDevice, err)
	}
	m := New(f, opts)
	m.closer, m.name = f, path
	return m, nil
}

// Info implements meter.Meter.
func (m *Meter) Info() meter.Info {
	var rates []units.Hertz
	if m.opts.Rate > 0 {
		rates = []units.Hertz{m.opts.Rate}
	}
	return meter.Info{Kind: "linemeter", Model: "line-streaming meter", Serial: m.name, Ports: 1,
		Channels: []meter.Channel{{Port: 1, Rail: m.opts.Rail}}, Rates: rates}
}

// Stats implements meter.Meter. Frames counts good lines; BytesDiscarded
// the bytes of bad lines.
func (m *Meter) Stats() meter.Stats {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.stats
}

// Bad returns what Stream skipped.
func (m *Meter) Bad() BadLines {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.bad
}

// Close implements meter.Meter.
func (m *Meter) Close() error {
	if m.closer != nil {
		return m.closer.Close()
	}
	return nil
}

type deadliner interface{ SetReadDeadline(time.Time) error }

// Stream implements meter.Meter: one sample per good line, numbered from 0.
// Lines that are not a reading (banners, headers, garbage, implausible
// values, over 4 KiB) are skipped and counted (Bad, Stats). After the first
// reading each one keeps its place on the timeline as a one-sample gap with
// reason "bad-line" (runs of them are one gap), so a dropped line never
// shifts the samples after it; before it they are a preamble, counted but
// not gaps. Empty lines are neither. A synthetic MarkEcho ties the line
// count to the host clock about once a second. Returns nil at EOF or when
// ctx is done.
func (m *Meter) Stream(ctx context.Context, cfg meter.StreamConfig, sink meter.Sink) error {
	for _, p := range cfg.Ports {
		if p != 1 {
			return fmt.Errorf("linemeter: port %d: %w", p, meter.ErrUnsupported)
		}
	}
	// A blocked read ends when ctx is done: by deadline where the reader
	// has one, else by closing it. A deadline left by an earlier Stream
	// would end this one at once.
	if d, ok := m.r.(deadliner); ok {
		_ = d.SetReadDeadline(time.Time{})
	}
	stop := context.AfterFunc(ctx, func() {
		if d, ok := m.r.(deadliner); ok {
			_ = d.SetReadDeadline(time.Now())
		} else if c, ok := m.r.(io.Closer); ok {
			c.Close()
		}
	})
	defer stop()
	br := bufio.NewReaderSize(m.r, maxLine)
	s := &lineStream{m: m, sink: sink}
	for {
		at := s.off
		line, err := br.ReadSlice('\n')
		s.off += uint64(len(line))
		now := hostclock.Now()
		if errors.Is(err, bufio.ErrBufferFull) {
			if !s.long {
				s.lineNo++
				if berr := s.bad(at, len(line), "longer than 4096 bytes"); berr != nil {
					return berr
				}
			} else {
				m.discarded(len(line))
			}
			s.long = true
			continue
		}
		if len(line) > 0 && (err == nil || err == io.EOF) {
			if lerr := s.line(at, line); lerr != nil {
				return lerr
			}
		}
		if err != nil || len(s.ib) >= 256 || br.Buffered() == 0 {
			if terr := s.tick(now); terr != nil {
				return terr
			}
		}
		if err != nil {
			if err == io.EOF || ctx.Err() != nil {
				return nil
			}
			return fmt.Errorf("linemeter: %s: %w: %v", m.name, meter.ErrDisconnected, err)
		}
	}
}

// lineStream is one Stream's position: the timeline index, the block of
// readings or the run of bad lines pending (at most one of the two at a
// time), and the synthetic marks.
type lineStream struct {
	m           *Meter
	sink        meter.Sink
	idx, lineNo uint64
	off         uint64 // byte offset of the next line's first byte
	blk         meter.Block
	vb          []units.Volts
	ib          []units.Amps
	gapN        uint64 // bad lines pending as one gap ending at idx
	lastMark    hostclock.Time
	markID      uint32
	long        bool // inside a line longer than the buffer
}

// line takes one whole line read at byte offset at (not an over-long
// line's head).
func (s *lineStream) line(at uint64, line []byte) error {
	m := s.m
	if !s.long {
		s.lineNo++
	}
	switch {
	case s.long: // the tail of an over-long line
		s.long = false
		m.discarded(len(line))
		return nil
	case len(bytesTrim(line)) == 0: // an empty line: no reading, no place
		return nil
	}
	r, err := m.opts.Columns.Parse(line)
	if err == nil {
		err = plausible(r)
	}
	if err != nil {
		return s.bad(at, len(line), fmt.Sprintf("%q: %v", trunc(line), err))
	}
	if s.gapN > 0 {
		if err := s.flush(); err != nil {
			return err
		}
	}
	v := r.V
	if !r.HasVolt {
		v = float64(m.opts.Voltage)
	}
	if len(s.ib) == 0 {
		s.blk.Start = s.idx
	}
	s.vb, s.ib = append(s.vb, units.Volts(v)), append(s.ib, units.Amps(r.I))
	s.idx++
	m.mu.Lock()
	m.stats.Frames++
	m.mu.Unlock()
	return nil
}

// bad counts a line that is not a reading; after the first reading it
// takes its place on the timeline as part of a gap.
func (s *lineStream) bad(at uint64, size int, why string) error {
	gap := s.idx > 0 || s.gapN > 0 // after the first reading
	s.m.badLine(s.lineNo, at, size, why, gap)
	if !gap {
		return nil
	}
	if len(s.ib) > 0 {
		if err := s.flush(); err != nil {
			return err
		}
	}
	s.gapN++
	s.idx++
	return nil
}

// flush hands the pending gap or block to the sink.
func (s *lineStream) flush() error {
	if s.gapN > 0 {
		g := meter.Gap{Channel: 0, Start: s.idx - s.gapN, Count: s.gapN, Reason: "bad-line"}
		s.gapN = 0
		s.m.mu.Lock()
		s.m.stats.SamplesLost += g.Count
		s.m.mu.Unlock()
		return s.sink.Gap(g)
	}
	if len(s.ib) == 0 {
		return nil
	}
	s.blk.V, s.blk.I = s.vb, s.ib
	err := s.sink.Samples(&s.blk)
	s.vb, s.ib = s.vb[:0], s.ib[:0]
	return err
}

// tick flushes, and about once a second ties the line count to the host
// clock with a synthetic mark.
func (s *lineStream) tick(now hostclock.Time) error {
	if err := s.flush(); err != nil {
		return err
	}
	if s.idx > 0 && now.Sub(s.lastMark) >= time.Second {
		s.lastMark = now
		s.markID++
		return s.sink.Mark(meter.MarkEcho{ID: s.markID, HostSent: now, HostRecv: now, MeterIndex: s.idx - 1, Synthetic: true})
	}
	return nil
}

// Physical bounds of a reading: no line meter on a drive rail reads more
// (an INA2xx sketch tops out near 10 A and 36 V, a CurrentRanger at 10 A).
// A line beyond them is a corrupted line, not a reading.
const (
	MaxAmps  = 100.0
	MaxVolts = 100.0
)

func plausible(s Sample) error {
	switch {
	case math.Abs(s.I) > MaxAmps:
		return fmt.Errorf("current %g A outside ±%g A", s.I, MaxAmps)
	case s.HasVolt && math.Abs(s.V) > MaxVolts:
		return fmt.Errorf("voltage %g V outside ±%g V", s.V, MaxVolts)
	}
	return nil
}

func (m *Meter) badLine(n, at uint64, size int, why string, gap bool) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.bad.Count == 0 {
		m.bad.FirstLine, m.bad.First = n, why
		m.stats.FirstBadLine, m.stats.FirstBadByte = n, at
	}
	if len(m.bad.Lines) < MaxBadLines {
		m.bad.Lines = append(m.bad.Lines, BadLine{Line: n, Offset: at, Why: why})
	}
	m.bad.Count++
	if gap {
		m.bad.Gaps++
	}
	m.stats.BadLines++
	m.stats.BytesDiscarded += uint64(size)
}

// discarded counts bytes of a bad line's continuation.
func (m *Meter) discarded(n int) {
	m.mu.Lock()
	m.stats.BytesDiscarded += uint64(n)
	m.mu.Unlock()
}

func trunc(b []byte) string {
	b = bytesTrim(b)
	if len(b) > 60 {
		return string(b[:60]) + "…"
	}
	return string(b)
}

func bytesTrim(b []byte) []byte {
	for len(b) > 0 && (b[len(b)-1] == '\n' || b[len(b)-1] == '\r' || b[len(b)-1] == ' ') {
		b = b[:len(b)-1]
	}
	return b
}

// ResolveConfig sets cfg's rate to the nominal one (Options.Rate, listed in
// info.Rates): a line meter has no sample clock, so a capture needs it to be
// stated; none is an error. Only port 1 exists.
func ResolveConfig(info meter.Info, cfg meter.StreamConfig) (meter.StreamConfig, error) {
	if cfg.Rate == 0 && len(info.Rates) > 0 {
		cfg.Rate = info.Rates[0]
	}
	if cfg.Rate <= 0 {
		return cfg, fmt.Errorf("linemeter: %w: a line meter has no sample clock; state its nominal lines per second", meter.ErrUnsupported)
	}
	for _, p := range cfg.Ports {
		if p != 1 {
			return cfg, fmt.Errorf("linemeter: port %d: %w (one port)", p, meter.ErrUnsupported)
		}
	}
	return cfg, nil
}

// ResolveConfig is meter.Resolver: ResolveConfig against the meter's Info.
func (m *Meter) ResolveConfig(cfg meter.StreamConfig) (meter.StreamConfig, error) {
	return ResolveConfig(m.Info(), cfg)
}
