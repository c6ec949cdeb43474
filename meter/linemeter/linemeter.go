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

	"github.com/idlewatt/idlewatt/internal/hostclock"
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
	var (
		idx, lineNo uint64
		off         uint64 // byte offset of the next line's first byte
		blk         = meter.Block{}
		vb          []units.Volts
		ib          []units.Amps
		gapN        uint64 // bad lines pending as one gap ending at idx
		lastMark    int64
		markID      uint32
		long        bool
	)
	// At most one of the block and the gap is pending at a time.
	flush := func() error {
		if gapN > 0 {
			g := meter.Gap{Channel: 0, Start: idx - gapN, Count: gapN, Reason: "bad-line"}
			gapN = 0
			m.mu.Lock()
			m.stats.SamplesLost += g.Count
			m.mu.Unlock()
			return sink.Gap(g)
		}
		if len(ib) == 0 {
			return nil
		}
		blk.V, blk.I = vb, ib
		err := sink.Samples(&blk)
		vb, ib = vb[:0], ib[:0]
		return err
	}
	bad := func(at uint64, size int, why string) error {
		gap := idx > 0 || gapN > 0 // after the first reading
		m.badLine(lineNo, at, size, why, gap)
		if !gap {
			return nil
		}
		if len(ib) > 0 {
			if err := flush(); err != nil {
				return err
			}
		}
		gapN++
		idx++
		return nil
	}
	for {
		at := off
		line, err := br.ReadSlice('\n')
		off += uint64(len(line))
		now := hostclock.Now()
		if errors.Is(err, bufio.ErrBufferFull) {
			if !long {
				lineNo++
				if berr := bad(at, len(line), "longer than 4096 bytes"); berr != nil {
					return berr
				}
			} else {
				m.discarded(len(line))
			}
			long = true
			continue
		}
		if len(line) > 0 && (err == nil || err == io.EOF) {
			if !long {
				lineNo++
			}
			switch {
			case long: // the tail of an over-long line
				long = false
				m.discarded(len(line))
			case len(bytesTrim(line)) == 0: // an empty line: no reading, no place
			default:
				s, perr := m.opts.Columns.Parse(line)
				if perr == nil {
					perr = plausible(s)
				}
				if perr != nil {
					if berr := bad(at, len(line), fmt.Sprintf("%q: %v", trunc(line), perr)); berr != nil {
						return berr
					}
					break
				}
				if gapN > 0 {
					if ferr := flush(); ferr != nil {
						return ferr
					}
				}
				v := s.V
				if !s.HasVolt {
					v = float64(m.opts.Voltage)
				}
				if len(ib) == 0 {
					blk.Start = idx
				}
				vb, ib = append(vb, units.Volts(v)), append(ib, units.Amps(s.I))
				idx++
				m.mu.Lock()
				m.stats.Frames++
				m.mu.Unlock()
			}
		}
		if err != nil || len(ib) >= 256 || br.Buffered() == 0 {
			if ferr := flush(); ferr != nil {
				return ferr
			}
			if idx > 0 && now-lastMark >= int64(time.Second) {
				lastMark = now
				markID++
				if merr := sink.Mark(meter.MarkEcho{ID: markID, HostSent: now, HostRecv: now, MeterIndex: idx - 1, Synthetic: true}); merr != nil {
					return merr
				}
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
