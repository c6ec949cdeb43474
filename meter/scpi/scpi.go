package scpi

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"
	"sync"
	"time"

	"github.com/idlewatt/idlewatt/internal/hostclock"
	"github.com/idlewatt/idlewatt/internal/serialport"
	"github.com/idlewatt/idlewatt/meter"
	"github.com/idlewatt/idlewatt/units"
)

// Options configure Open and New.
type Options struct {
	Family   string        // "" = detect from *IDN?
	Override *Family       // replaces the family's command strings when set
	Channel  int           // instrument output channel; default 1
	Baud     uint32        // default 115200
	Timeout  time.Duration // per query; default 1 s
	Voltage  units.Volts   // used when the family measures current only
}

// Instrument is a SCPI instrument polled as a meter.
type Instrument struct {
	rw     io.ReadWriter
	br     *bufio.Reader
	closer io.Closer
	name   string
	idn    string
	fam    Family
	opts   Options

	mu    sync.Mutex
	stats meter.Stats
}

var _ meter.Meter = (*Instrument)(nil)

// ErrInstrument wraps errors the instrument reported in its error queue.
var ErrInstrument = errors.New("instrument error")

// Open opens a serial port (raw 8N1 at opts.Baud) and runs New.
func Open(path string, opts Options) (*Instrument, error) {
	if opts.Baud == 0 {
		opts.Baud = 115200
	}
	f, err := serialport.Open(path, int(opts.Baud))
	if err != nil {
		return nil, fmt.Errorf("scpi: %w: %v", meter.ErrNoDevice, err)
	}
	in, err := New(f, opts)
	if err != nil {
		f.Close()
		return nil, err
	}
	in.closer, in.name = f, path
	return in, nil
}

// New identifies the instrument on rw (*IDN?), picks its family, clears the
// error queue (*CLS) and sends the family's Init strings.
func New(rw io.ReadWriter, opts Options) (*Instrument, error) {
	if opts.Channel == 0 {
		opts.Channel = 1
	}
	if opts.Timeout <= 0 {
		opts.Timeout = time.Second
	}
	in := &Instrument{rw: rw, br: bufio.NewReaderSize(rw, 4096), opts: opts, name: "(stream)"}
	idn, err := in.Query("*IDN?")
	if err != nil {
		return nil, fmt.Errorf("scpi: *IDN?: %w: %v", meter.ErrNoDevice, err)
	}
	in.idn = idn
	if opts.Family != "" {
		in.fam, err = FamilyByName(opts.Family)
	} else {
		in.fam, err = Detect(idn)
	}
	if err != nil {
		return nil, fmt.Errorf("%w: %v", meter.ErrProtocol, err)
	}
	if o := opts.Override; o != nil {
		if o.MeasCurr != "" {
			in.fam.MeasCurr = o.MeasCurr
		}
		if o.MeasVolt != "" {
			in.fam.MeasVolt = o.MeasVolt
		}
		if o.Init != nil {
			in.fam.Init = o.Init
		}
	}
	if err := in.Send("*CLS"); err != nil {
		return nil, err
	}
	for _, c := range in.fam.Init {
		if err := in.Command(c); err != nil {
			return nil, err
		}
	}
	return in, nil
}

// Family returns the family in use (after overrides).
func (in *Instrument) Family() Family { return in.fam }

// Send writes one command line.
func (in *Instrument) Send(cmd string) error {
	_, err := io.WriteString(in.rw, cmd+"\n")
	return err
}

type deadliner interface{ SetReadDeadline(time.Time) error }

// Query sends cmd and reads one reply line within opts.Timeout.
func (in *Instrument) Query(cmd string) (string, error) {
	if err := in.Send(cmd); err != nil {
		return "", err
	}
	if d, ok := in.rw.(deadliner); ok {
		_ = d.SetReadDeadline(time.Now().Add(in.opts.Timeout))
		defer d.SetReadDeadline(time.Time{})
	}
	line, err := in.br.ReadString('\n')
	if err != nil {
		if errors.Is(err, os.ErrDeadlineExceeded) {
			return "", fmt.Errorf("%q: no reply within %v", cmd, in.opts.Timeout)
		}
		return "", err
	}
	return strings.TrimRight(line, "\r\n"), nil
}

// Command sends a command that has no reply and then checks the error
// queue, so a rejected command is an error naming it.
func (in *Instrument) Command(cmd string) error {
	if err := in.Send(cmd); err != nil {
		return err
	}
	if err := in.CheckErrors(); err != nil {
		return fmt.Errorf("scpi: %q: %w", cmd, err)
	}
	return nil
}

// CheckErrors drains SYST:ERR? (at most 16 entries) and returns the first
// error found, wrapping ErrInstrument and meter.ErrRejected.
func (in *Instrument) CheckErrors() error {
	var first error
	for range 16 {
		r, err := in.Query("SYST:ERR?")
		if err != nil {
			return err
		}
		code, msg, err := ParseError(r)
		if err != nil {
			return err
		}
		if code == 0 {
			break
		}
		if first == nil {
			first = fmt.Errorf("%w %d %q: %w", ErrInstrument, code, msg, meter.ErrRejected)
		}
	}
	return first
}

func (in *Instrument) measure(tmpl string) (float64, error) {
	cmd := tmpl
	if strings.Contains(tmpl, "%d") {
		cmd = fmt.Sprintf(tmpl, in.opts.Channel)
	}
	r, err := in.Query(cmd)
	if err != nil {
		// A command the instrument rejects gets no reply: the queue says why.
		if qerr := in.CheckErrors(); qerr != nil {
			return 0, fmt.Errorf("scpi: %q: %w", cmd, qerr)
		}
		return 0, fmt.Errorf("scpi: %w", err)
	}
	x, err := ParseReading(r)
	if err != nil {
		return 0, fmt.Errorf("%q: %w", cmd, err)
	}
	return x, nil
}

// Info implements meter.Meter.
func (in *Instrument) Info() meter.Info {
	return meter.Info{Kind: "scpi", Model: in.idn, Serial: in.name, Ports: 1,
		Channels: []meter.Channel{{Port: 1, Rail: meter.RailOther}},
		Rates:    []units.Hertz{units.Hertz(in.fam.MaxRate)}}
}

// Stats implements meter.Meter: Frames counts polls, SamplesLost failed ones.
func (in *Instrument) Stats() meter.Stats {
	in.mu.Lock()
	defer in.mu.Unlock()
	return in.stats
}

// Close implements meter.Meter.
func (in *Instrument) Close() error {
	if in.closer != nil {
		return in.closer.Close()
	}
	return nil
}

// Stream polls current (and voltage) back to back: the rate is whatever the
// instrument sustains. A poll that fails (timeout, over-range, an error in
// the queue) is a one-sample gap with the reason; three in a row end the
// stream with the error. Each sample has a synthetic mark (the poll's
// receive time), as polls are irregular.
func (in *Instrument) Stream(ctx context.Context, cfg meter.StreamConfig, sink meter.Sink) error {
	fails := 0
	for k := uint64(0); ctx.Err() == nil; k++ {
		i, err := in.measure(in.fam.MeasCurr)
		v := float64(in.opts.Voltage)
		if err == nil && in.fam.MeasVolt != "" {
			v, err = in.measure(in.fam.MeasVolt)
		}
		now := hostclock.Now()
		in.mu.Lock()
		if err != nil {
			in.stats.SamplesLost++
		} else {
			in.stats.Frames++
		}
		in.mu.Unlock()
		if err != nil {
			fails++
			if fails >= 3 {
				return err
			}
			if serr := sink.Gap(meter.Gap{Channel: 0, Start: k, Count: 1, Reason: trunc(err.Error())}); serr != nil {
				return serr
			}
			continue
		}
		fails = 0
		if err := sink.Samples(&meter.Block{Start: k, V: []units.Volts{units.Volts(v)}, I: []units.Amps{units.Amps(i)}}); err != nil {
			return err
		}
		if err := sink.Mark(meter.MarkEcho{ID: uint32(k), HostSent: now, HostRecv: now, MeterIndex: k, Synthetic: true}); err != nil {
			return err
		}
	}
	return nil
}

// ResolveConfig sets cfg's rate to the family's nominal polling rate: Stream
// polls back to back, so no other rate can be asked for (the per-sample
// marks carry the real timing). Only port 1 exists.
func ResolveConfig(info meter.Info, cfg meter.StreamConfig) (meter.StreamConfig, error) {
	if len(info.Rates) == 0 || info.Rates[0] <= 0 {
		return cfg, fmt.Errorf("scpi: %w: no nominal rate", meter.ErrProtocol)
	}
	nominal := info.Rates[0]
	if cfg.Rate != 0 && cfg.Rate != nominal {
		return cfg, fmt.Errorf("scpi: rate %g Hz: %w (polls run back to back; nominal %g Hz)", float64(cfg.Rate), meter.ErrUnsupported, float64(nominal))
	}
	cfg.Rate = nominal
	for _, p := range cfg.Ports {
		if p != 1 {
			return cfg, fmt.Errorf("scpi: port %d: %w (one port)", p, meter.ErrUnsupported)
		}
	}
	return cfg, nil
}
