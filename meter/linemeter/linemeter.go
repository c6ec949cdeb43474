package linemeter

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
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
}

func (b BadLines) String() string {
	if b.Count == 0 {
		return "no bad lines"
	}
	return fmt.Sprintf("%d lines skipped (first: line %d: %s)", b.Count, b.FirstLine, b.First)
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
func Open(path string, opts Options) (*Meter, error) {
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
// Lines that do not fit the map (banners, headers, garbage, over 4 KiB) are
// skipped and counted (Bad, Stats); they are not gaps, since nothing says
// they were samples. A synthetic MarkEcho ties the line count to the host
// clock about once a second. Returns nil at EOF or when ctx is done.
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
		blk         = meter.Block{}
		vb          []units.Volts
		ib          []units.Amps
		lastMark    int64
		markID      uint32
		long        bool
	)
	flush := func() error {
		if len(ib) == 0 {
			return nil
		}
		blk.V, blk.I = vb, ib
		err := sink.Samples(&blk)
		vb, ib = vb[:0], ib[:0]
		return err
	}
	for {
		line, err := br.ReadSlice('\n')
		now := hostclock.Now()
		if errors.Is(err, bufio.ErrBufferFull) {
			if !long {
				lineNo++
				m.badLine(lineNo, len(line), "longer than 4096 bytes")
			}
			long = true
			continue
		}
		if len(line) > 0 && (err == nil || err == io.EOF) {
			if long { // the tail of an over-long line
				long = false
			} else {
				lineNo++
				s, perr := m.opts.Columns.Parse(line)
				if perr != nil {
					if len(bytesTrim(line)) > 0 {
						m.badLine(lineNo, len(line), fmt.Sprintf("%q: %v", trunc(line), perr))
					}
				} else {
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

func (m *Meter) badLine(n uint64, size int, why string) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.bad.Count == 0 {
		m.bad.FirstLine, m.bad.First = n, why
	}
	m.bad.Count++
	m.stats.BytesDiscarded += uint64(size)
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
