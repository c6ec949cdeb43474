package hub

import (
	"errors"
	"fmt"
	"io"
	"os"
	"sync"
	"sync/atomic"
	"time"

	"github.com/idlewatt/idlewatt/hostclock"
	"github.com/idlewatt/idlewatt/internal/serialport"
	"github.com/idlewatt/idlewatt/meter"
)

// Options configure a Hub. The zero value is ready to use.
type Options struct {
	// Timeout bounds the wait for a command's answer and, at open, for the
	// hub to identify itself. Default 2s. While the hub's frames keep
	// arriving (a host reading a backlog: the answer is queued behind it)
	// a command waits on, up to 5 × Timeout.
	Timeout time.Duration
	// StallTimeout: streaming with no bytes for this long is reported as
	// meter.EventDisconnect (and the next bytes as EventReconnect). Default 1s.
	StallTimeout time.Duration
	// GiveUp: when the port fails mid-stream (the device vanished or
	// re-enumerated, the pty closed) or the link stays silent, Stream waits,
	// reopens the same path with backoff, re-identifies and resumes; it
	// returns an error wrapping meter.ErrDisconnected only when the hub has
	// been gone this long. Default 30s; negative: fail at once.
	GiveUp time.Duration
	// Baud is the serial speed for Open. Default 921600 (8N1 always).
	Baud int
	// HostBuffer is the host-side buffer between the port and the decoder,
	// which keeps the port drained while the sink is slow. Default 4 MiB
	// (about 6 s of the largest stream a USB hub carries).
	HostBuffer int
	// Protocol is the highest protocol version to negotiate with a hub
	// that speaks version 2 or 3: 0 for the hub's own (at most
	// ProtocolVersion), 1 to keep such a hub on version 1. A version 1
	// hub always speaks version 1.
	Protocol int
	// MaxFrame is the largest frame (bytes, framing included) asked of a
	// version 2 hub with LINK; default DefaultMaxFrame (256), suited to a
	// noisy UART; MinMaxFrame–MaxFrame.
	MaxFrame int
	// Format is the sample format asked of a version 2 hub: 0 for the
	// finest in the fewest bytes it has (FormatPacked if listed, else
	// Format20), Format20 for unpacked 20-bit samples, Format16 to keep
	// 16-bit samples. A format the hub lacks falls back to the next.
	Format uint8
}

func (o *Options) defaults() {
	if o.Timeout <= 0 {
		o.Timeout = 2 * time.Second
	}
	if o.StallTimeout <= 0 {
		o.StallTimeout = time.Second
	}
	if o.GiveUp == 0 {
		o.GiveUp = 30 * time.Second
	}
	if o.Baud <= 0 {
		o.Baud = 921600
	}
	if o.HostBuffer <= 0 {
		o.HostBuffer = 4 << 20
	}
	if o.Protocol <= 0 || o.Protocol > ProtocolVersion {
		o.Protocol = ProtocolVersion
	}
	if o.MaxFrame <= 0 {
		o.MaxFrame = DefaultMaxFrame
	}
	o.MaxFrame = max(MinMaxFrame, min(o.MaxFrame, MaxFrame))
}

// Hub is a connected SATA power hub. It implements meter.Meter,
// meter.DevSlpPin, meter.PortPower and meter.Marker; commands may be sent
// from any goroutine, also while Stream runs.
type Hub struct {
	name string
	path string // reopened on reconnect; "" when made by New
	opts Options
	id   Identity
	cal  *Calibration
	acc  *Accuracy // the stated accuracy (READ_ACCURACY); nil when the hub states none
	info meter.Info

	wmu  sync.Mutex // serialises writes and seq
	seq  byte
	wbuf []byte

	mu      sync.Mutex
	conn    *conn
	closed  bool
	pending map[byte]*call
	stream  *activeStream
	base    meter.Stats // counters of connections before conn
	stats   meter.Stats

	rstats   meter.Stats // reader goroutine only: SamplesLost
	lstats   LinkStats   // the decoder's (under the stream's mu)
	lpub     LinkStats   // a copy of lstats, under mu
	lastRead atomic.Int64
	retried  atomic.Uint64 // pin commands sent again after no answer (portCommand)
	// streaming and calls say when the pump may hold bytes back from the
	// reader (holdBytes): a stream runs and no command awaits its answer.
	streaming atomic.Bool
	calls     atomic.Int32

	// Negotiated at the first handshake (handshake): protocol version,
	// maximum frame, sample format.
	version  int
	maxFrame int
	format   uint8
	closeOne sync.Once
}

// conn is one opening of the port: a reconnect replaces it whole.
type conn struct {
	rw     io.ReadWriter
	closer io.Closer
	pump   *pump
	sc     *Scanner
	done   chan struct{} // closed when the reader stops; err is set first
	err    error
}

// Open opens the serial port at path (921600 8N1 by default), locked
// against any other opener (a port already held is an error matching
// serialport.ErrInUse: "port PATH in use by PID N"), and identifies the hub. Nothing answering is an error wrapping
// meter.ErrNoDevice; something answering garbage wraps meter.ErrProtocol;
// another protocol version wraps ErrVersion. A hub opened by path is
// reopened there if it vanishes mid-stream (Options.GiveUp).
func Open(path string, opts Options) (*Hub, error) {
	opts.defaults()
	if _, err := os.Stat(path); err != nil {
		return nil, fmt.Errorf("%w at %s: %v", meter.ErrNoDevice, path, err)
	}
	h := newHub(path, path, opts)
	if err := h.dial(); err != nil {
		if errors.Is(err, serialport.ErrInUse) {
			return nil, fmt.Errorf("hub: %w", err)
		}
		return nil, fmt.Errorf("%w at %s: %v", meter.ErrNoDevice, path, err)
	}
	if err := h.handshake(false); err != nil {
		h.shutdown()
		return nil, err
	}
	return h, nil
}

// New identifies a hub over rw (tests, or a port opened elsewhere). If rw
// is an io.Closer, Close closes it. A Read returning (0, nil), as a
// timed-out serial read does, is tolerated. Such a hub cannot be reopened:
// a failed rw ends Stream.
func New(rw io.ReadWriter, opts Options) (*Hub, error) {
	opts.defaults()
	h := newHub("hub", "", opts)
	c, _ := rw.(io.Closer)
	h.attach(rw, c)
	if err := h.handshake(false); err != nil {
		h.shutdown()
		return nil, err
	}
	return h, nil
}

func newHub(name, path string, opts Options) *Hub {
	return &Hub{name: name, path: path, opts: opts, pending: map[byte]*call{}}
}

// dial opens h.path and makes it the current connection.
func (h *Hub) dial() error {
	p, err := openSerial(h.path, h.opts.Baud)
	if err != nil {
		return err
	}
	h.mu.Lock()
	closed := h.closed
	h.mu.Unlock()
	if closed {
		p.Close()
		return fmt.Errorf("hub %s: closed", h.name)
	}
	h.attach(p, p)
	return nil
}

func (h *Hub) attach(rw io.ReadWriter, c io.Closer) {
	pu := newPump(rw, h.opts.HostBuffer, readTimeout, h.mayHold)
	cn := &conn{rw: rw, closer: c, pump: pu, sc: NewScanner(pu), done: make(chan struct{})}
	h.mu.Lock()
	h.conn = cn
	h.mu.Unlock()
	h.lastRead.Store(int64(hostclock.Now()))
	go h.readLoop(cn)
}

// drop closes the current connection, if any, and waits for its reader;
// its counters are kept in h.base.
func (h *Hub) drop() {
	h.mu.Lock()
	c := h.conn
	h.mu.Unlock()
	if c == nil {
		return
	}
	c.pump.stop()
	if c.closer != nil {
		c.closer.Close() //nolint:errcheck // the connection failed or is being replaced
		<-c.done
	}
	h.mu.Lock()
	if h.conn == c {
		h.base = h.stats
		h.conn = nil
	}
	h.mu.Unlock()
}

// mayHold: a stream runs and no command waits, so the reader need not be
// woken for every read (pump).
func (h *Hub) mayHold() bool { return h.streaming.Load() && h.calls.Load() == 0 }

func (h *Hub) current() *conn {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.conn
}

// SetGiveUp changes Options.GiveUp (0: the default, negative: fail at the
// first disconnect). Call it before Stream.
func (h *Hub) SetGiveUp(d time.Duration) {
	o := h.opts
	o.GiveUp = d
	o.defaults()
	h.opts.GiveUp = o.GiveUp
}

// Info implements meter.Meter; channel LSBs are the calibrated ones.
func (h *Hub) Info() meter.Info { return h.info }

// SampleFormat returns the sample format agreed with the hub (Format16
// for a protocol 1 hub): the one Info's current LSBs are for.
func (h *Hub) SampleFormat() uint8 { return h.format }

// Identity returns the hub's identity frame as decoded.
func (h *Hub) Identity() Identity { return h.id }

// Accuracy is the accuracy the hub stated for its channels (READ_ACCURACY),
// nil when it states none.
func (h *Hub) Accuracy() *Accuracy { return h.acc }

// Stats implements meter.Meter.
func (h *Hub) Stats() meter.Stats {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.stats
}

// Close implements meter.Meter. It does not stop a running stream's hub
// side; cancel Stream's context first.
func (h *Hub) Close() error {
	return h.shutdown()
}

func (h *Hub) shutdown() error {
	var err error
	h.closeOne.Do(func() {
		h.mu.Lock()
		h.closed = true
		c := h.conn
		h.mu.Unlock()
		if c != nil && c.closer != nil {
			c.pump.stop()
			err = c.closer.Close()
			<-c.done
		}
	})
	return err
}

var (
	_ meter.Meter     = (*Hub)(nil)
	_ meter.DevSlpPin = (*Hub)(nil)
	_ meter.PortPower = (*Hub)(nil)
	_ meter.Marker    = (*Hub)(nil)
	_ meter.Meter     = (*Replay)(nil)
)
