package scpi

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"
	"sync"
	"time"

	"github.com/idlewatt/idlewatt/hostclock"
	"github.com/idlewatt/idlewatt/internal/serialport"
	"github.com/idlewatt/idlewatt/meter"
	"github.com/idlewatt/idlewatt/units"
)

// Options configure Open and New.
type Options struct {
	Family   string        // "" = detect from *IDN?
	Override *Family       // its non-empty commands and non-zero rates replace the family's
	Channel  int           // instrument output channel; default 1
	Baud     uint32        // default 115200
	Timeout  time.Duration // per query; default 1 s
	Voltage  units.Volts   // used when the family measures current only (array mode: for every sample)
	// Array fetches buffered arrays (the family's ArrayMode) instead of
	// polling: ArrayPoints readings ArrayInterval apart per fetch (defaults
	// the family's), as float32 blocks with ArrayBinary. The instrument's
	// read-back interval sets the stream's rate.
	Array         bool
	ArrayPoints   int
	ArrayInterval time.Duration
	ArrayBinary   bool
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
	arr    *arrayState // set up at open in array mode
	owedNL bool        // a block's newline has not been read yet

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
	if errors.Is(err, serialport.ErrInUse) {
		return nil, fmt.Errorf("scpi: %w", err)
	}
	if err != nil {
		return nil, fmt.Errorf("scpi: %w: %v", meter.ErrNoDevice, err)
	}
	drainStale(f)
	in, err := New(f, opts)
	if err != nil {
		f.Close()
		return nil, err
	}
	in.closer, in.name = f, path
	return in, nil
}

// drainStale discards what the port holds before the first command: the
// rest of a reply to a previous session (an array fetch still arriving when
// it closed) would otherwise be read as the answer to *IDN?. It reads until
// the line has been quiet for 50 ms, for at most 2 s.
func drainStale(p *serialport.Port) {
	buf := make([]byte, 4096)
	for stop := time.Now().Add(2 * time.Second); time.Now().Before(stop); {
		p.SetReadDeadline(time.Now().Add(50 * time.Millisecond))
		if _, err := p.Read(buf); err != nil {
			break
		}
	}
	p.SetReadDeadline(time.Time{})
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
	if opts.Voltage != 0 {
		if err := checkRail(float64(opts.Voltage), "Options.Voltage"); err != nil {
			return nil, err
		}
	}
	in := &Instrument{rw: rw, br: bufio.NewReaderSize(rw, 4096), opts: opts, name: "(stream)"}
	idn, err := in.Query("*IDN?")
	// A session that ended (or was killed) while the instrument acquired an
	// array leaves its reply on the line, possibly arriving after Open's
	// drain: the first "reply" is then a block or binary bytes. Discard
	// until the line is quiet and ask again.
	for try := 0; err == nil && notText(idn) && try < 2 && in.discardQuiet(); try++ {
		idn, err = in.Query("*IDN?")
	}
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
		if o.Rate > 0 {
			in.fam.Rate = o.Rate
		}
		if o.MaxRate > 0 {
			in.fam.MaxRate = o.MaxRate
		}
		in.fam.Array = mergeArray(in.fam.Array, o.Array)
	}
	if in.fam.Rate <= 0 || in.fam.MaxRate < in.fam.Rate {
		return nil, fmt.Errorf("scpi: family %s: polling rate %g/s above its maximum %g/s", in.fam.Name, in.fam.Rate, in.fam.MaxRate)
	}
	if err := in.Send("*CLS"); err != nil {
		return nil, err
	}
	for _, c := range in.fam.Init {
		if err := in.Command(c); err != nil {
			return nil, err
		}
	}
	if opts.Array {
		if err := in.setupArray(); err != nil {
			return nil, err
		}
	}
	return in, nil
}

// notText says a reply is not an *IDN? reply but part of an array's: a
// block header, control bytes, or readings only.
func notText(r string) bool {
	if strings.HasPrefix(r, "#") {
		return true
	}
	for _, c := range []byte(r) {
		if c < 0x20 && c != '\t' {
			return true
		}
	}
	_, err := ParseArray(nil, []byte(r))
	return err == nil
}

// discardQuiet reads and drops everything until nothing has arrived for
// opts.Timeout (at most 10 timeouts in all). It reports false when rw has
// no read deadline, so it cannot tell quiet from a hang.
func (in *Instrument) discardQuiet() bool {
	d, ok := in.rw.(deadliner)
	if !ok {
		return false
	}
	defer d.SetReadDeadline(time.Time{})
	buf := make([]byte, 4096)
	for stop := time.Now().Add(10 * in.opts.Timeout); time.Now().Before(stop); {
		_ = d.SetReadDeadline(time.Now().Add(in.opts.Timeout))
		if n := in.br.Buffered(); n > 0 {
			in.br.Discard(n)
			continue
		}
		if _, err := in.br.Read(buf); err != nil {
			break
		}
	}
	in.owedNL = false
	return true
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
	in.skipNL()
	line, err := in.br.ReadString('\n')
	if err != nil {
		return "", fmt.Errorf("%q: %w", cmd, noReply(err, in.opts.Timeout))
	}
	return strings.TrimRight(line, "\r\n"), nil
}

// skipNL reads the newline a binary block still owes. It is called after a
// command has been sent, so something will arrive: it waits (within the
// read deadline already set) for the first byte, consumes it if it is the
// owed terminator, and leaves it otherwise (an instrument that sends none).
// A terminator that arrives after the block, in a later read from the port,
// is therefore never taken for an empty reply.
func (in *Instrument) skipNL() {
	for in.owedNL {
		b, err := in.br.Peek(1)
		if err != nil {
			return // the read that follows reports it
		}
		switch b[0] {
		case '\r':
			in.br.ReadByte()
		case '\n':
			in.br.ReadByte()
			in.owedNL = false
		default:
			in.owedNL = false
		}
	}
}

func noReply(err error, wait time.Duration) error {
	if errors.Is(err, os.ErrDeadlineExceeded) {
		return fmt.Errorf("no reply within %v", wait)
	}
	return err
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

// measure queries one reading with tmpl; sent and recv bracket the query
// (hostclock), for marks.
func (in *Instrument) measure(tmpl string) (x float64, sent, recv hostclock.Time, err error) {
	cmd := tmpl
	if strings.Contains(tmpl, "%d") {
		cmd = fmt.Sprintf(tmpl, in.opts.Channel)
	}
	sent = hostclock.Now()
	r, err := in.Query(cmd)
	recv = hostclock.Now()
	if err != nil {
		// A command the instrument rejects gets no reply: the queue says why.
		if qerr := in.CheckErrors(); qerr != nil {
			return 0, sent, recv, fmt.Errorf("scpi: %q: %w", cmd, qerr)
		}
		return 0, sent, recv, fmt.Errorf("scpi: %w", err)
	}
	x, err = ParseReading(r)
	if err != nil {
		return 0, sent, recv, fmt.Errorf("%q: %w", cmd, err)
	}
	return x, sent, recv, nil
}

// Info implements meter.Meter. Rates are the family's nominal and maximum
// polling rates: any rate up to the maximum can be streamed.
//
// In array mode Rates are the read-back interval's rate and the family's
// fastest, and Capabilities holds "array".
func (in *Instrument) Info() meter.Info {
	info := meter.Info{Kind: "scpi", Model: in.idn, Serial: in.name, Ports: 1,
		Channels: []meter.Channel{{Port: 1, Rail: meter.RailOther}},
		Rates:    []units.Hertz{units.Hertz(in.fam.Rate), units.Hertz(in.fam.MaxRate)}}
	info.CurrentSense = meter.SenseSink // it measures the current it sinks
	if in.arr != nil {
		info.Rates = []units.Hertz{units.Hertz(1 / in.arr.tint), units.Hertz(1 / min(in.fam.Array.MinTint, in.arr.tint))}
		info.Capabilities = []string{CapArray}
	}
	return info
}

// CapArray in Info().Capabilities says the instrument streams buffered
// arrays.
const CapArray = "array"

// Stats implements meter.Meter: Frames counts good polls, SamplesLost
// failed and missed ones.
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
