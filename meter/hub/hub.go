package hub

import (
	"context"
	"errors"
	"fmt"
	"io"
	"math"
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

type call struct {
	cmd  Type
	sent hostclock.Time
	ch   chan reply
}

type reply struct {
	typ     Type
	payload []byte
}

type activeStream struct {
	mu           sync.Mutex // held around sink calls so they never overlap
	sink         meter.Sink
	dec          *decoder
	closed       bool
	disconnected bool           // EventDisconnect sent, EventReconnect not yet
	downAt       hostclock.Time // hostclock when the link was lost
	discarded    uint64
	errc         chan error
	resends      chan Resend   // RESENDs the decoder asked for, sent by resender
	quit         chan struct{} // closed when Stream returns
}

// RejectError is a NAK: the hub refused a command. It matches
// meter.ErrRejected, and also meter.ErrUnsupported when the reason says the
// hub cannot do it (rate, port, bandwidth, capability, unknown command).
type RejectError struct {
	Hub    string
	Cmd    Type
	Reason Reason
}

func (e *RejectError) Error() string {
	return fmt.Sprintf("hub %s rejected %s: %s", e.Hub, e.Cmd, e.Reason)
}

func (e *RejectError) Is(target error) bool {
	switch target {
	case meter.ErrRejected:
		return true
	case meter.ErrUnsupported:
		switch e.Reason {
		case ReasonUnknownCommand, ReasonBadPort, ReasonBadRate, ReasonBandwidth, ReasonUnsupported:
			return true
		}
	}
	return false
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

// retry sends an idempotent command up to three times within the timeout:
// on a noisy link an answer can be lost to a CRC error like any frame.
func (h *Hub) retry(t Type, payload []byte) (reply, error) {
	var rep reply
	var err error
	deadline := time.Now().Add(h.opts.Timeout)
	for time.Now().Before(deadline) {
		ctx, cancel := context.WithTimeout(context.Background(), min(h.opts.Timeout/3, time.Until(deadline)))
		rep, err = h.command(ctx, t, payload)
		cancel()
		if err == nil || !errors.Is(err, context.DeadlineExceeded) {
			break
		}
	}
	return rep, err
}

// handshake identifies the hub. At first contact it also stops a stream a
// previous host left running and reads the calibration; on a reconnect it
// checks that the same hub came back and leaves its stream running.
func (h *Hub) handshake(reconnect bool) error {
	rep, err := h.retry(TypeIdentify, nil)
	if errors.Is(err, context.DeadlineExceeded) {
		st := h.Stats()
		if in := h.bytesIn(); in > 0 {
			return fmt.Errorf("%w: %s answered %d bytes but no hub IDENTITY frame within %v (%d good frames, %d CRC errors)",
				meter.ErrProtocol, h.name, in, h.opts.Timeout, st.Frames, st.CRCErrors)
		}
		return fmt.Errorf("%w at %s: nothing answered IDENTIFY within %v", meter.ErrNoDevice, h.name, h.opts.Timeout)
	}
	if err != nil {
		return err
	}
	var id Identity
	if err := id.DecodeFromBytes(rep.payload); err != nil {
		return fmt.Errorf("hub %s: %w", h.name, err)
	}
	if reconnect {
		if id.Serial != h.id.Serial || id.Model != h.id.Model || id.Ports != h.id.Ports || id.Version != h.id.Version {
			return fmt.Errorf("%w: %s: a different hub came back (%s serial %s v%d, was %s serial %s v%d)",
				errOtherHub, h.name, id.Model, id.Serial, id.Version, h.id.Model, h.id.Serial, h.id.Version)
		}
		return h.negotiate()
	}
	if err := id.Check(); err != nil {
		return fmt.Errorf("hub %s: %w", h.name, err)
	}
	h.id = id
	if err := h.negotiate(); err != nil {
		return err
	}
	// A previous host may have left it streaming.
	if _, err := h.retry(TypeStop, nil); err != nil && !errors.Is(err, meter.ErrRejected) {
		return err
	}
	rep, err = h.retry(TypeReadCal, nil)
	switch {
	case err == nil:
		h.cal = new(Calibration)
		if err := h.cal.DecodeFromBytes(rep.payload); err != nil {
			return fmt.Errorf("hub %s: %w", h.name, err)
		}
		if err := h.cal.Check(&h.id); err != nil {
			return fmt.Errorf("hub %s: %w", h.name, err)
		}
	case !errors.Is(err, meter.ErrRejected):
		return err
	}
	// The stated accuracy: a hub that does not know READ_ACCURACY answers
	// NAK (unknown command) and its channels state none.
	h.acc = nil
	rep, err = h.retry(TypeReadAccuracy, nil)
	switch {
	case err == nil && rep.typ != TypeAccuracy:
		// An ACK without the answer: a hub that takes any command; it
		// states nothing.
	case err == nil:
		acc := new(Accuracy)
		if err := acc.DecodeFromBytes(rep.payload); err != nil {
			return fmt.Errorf("hub %s: %w", h.name, err)
		}
		if err := acc.Check(&h.id); err != nil {
			return fmt.Errorf("hub %s: %w", h.name, err)
		}
		h.acc = acc
	case !errors.Is(err, meter.ErrRejected):
		return err
	}
	h.info = h.id.InfoFormat(h.cal, h.format)
	h.acc.apply(&h.info)
	h.info.ProtocolVersion = h.version
	return nil
}

// negotiate sets the link's version, maximum frame and sample format: a
// version 2 hub gets LINK with the version and frame size the options
// ask (after every IDENTIFY: a hub keeps them until it resets), a version
// 1 hub nothing.
func (h *Hub) negotiate() error {
	version, maxFrame, format := ProtocolV1, MaxFrame, Format16
	if h.id.Version >= 2 {
		want := Link{Version: uint8(min(h.opts.Protocol, int(h.id.Version))), MaxFrame: uint16(min(h.opts.MaxFrame, int(h.id.MaxFrame)))}
		rep, err := h.retry(TypeLink, want.Append(nil))
		if err != nil {
			return fmt.Errorf("hub %s: negotiating protocol v%d: %w", h.name, want.Version, err)
		}
		var a Ack
		if err := a.DecodeFromBytes(rep.payload); err != nil {
			return fmt.Errorf("hub %s: %w", h.name, err)
		}
		if a.Version != want.Version || a.Version >= 2 && (a.MaxFrame < MinMaxFrame || a.MaxFrame > want.MaxFrame) {
			return fmt.Errorf("%w: hub %s answered LINK v%d, max frame %d with v%d, max frame %d",
				meter.ErrProtocol, h.name, want.Version, want.MaxFrame, a.Version, a.MaxFrame)
		}
		version = int(a.Version)
		if version >= 2 {
			maxFrame = int(a.MaxFrame)
			switch {
			case h.opts.Format == Format16:
			case (h.opts.Format == 0 || h.opts.Format == FormatPacked) && h.id.Formats&FormatBitPacked != 0:
				format = FormatPacked
			case h.id.Formats&FormatBit20 != 0:
				format = Format20
			}
		}
	}
	if h.version == 0 {
		h.version, h.maxFrame, h.format = version, maxFrame, format
		return nil
	}
	// A reconnect: the stream goes on in what was agreed at first.
	if version != h.version || maxFrame != h.maxFrame || format != h.format {
		return fmt.Errorf("%w: %s: the hub came back with protocol v%d, max frame %d, format %d (was v%d, %d, %d)",
			errOtherHub, h.name, version, maxFrame, format, h.version, h.maxFrame, h.format)
	}
	return nil
}

var errOtherHub = errors.New("hub replaced")

func (h *Hub) bytesIn() uint64 {
	if c := h.current(); c != nil {
		return c.sc.BytesIn()
	}
	return 0
}

// abandonAfter: with no stream running, a partial frame with no new byte
// for this long is given up (Scanner.Abandon), so an answer queued behind
// a frame whose length was corrupted is not held hostage on an idle link.
// While streaming a partial frame is never abandoned: later frames complete
// a bogus length within one MaxPayload of stream, and abandoning a good
// frame whose tail is merely late (a loaded host, a descheduled writer)
// would lose it.
const abandonAfter = 100 * time.Millisecond

func (h *Hub) readLoop(c *conn) {
	defer close(c.done)
	lastIn, lastChange := c.sc.BytesIn(), time.Now()
	for {
		f, err := c.sc.Next()
		if err == ErrIdle {
			h.tickStream()
			if in := c.sc.BytesIn(); in != lastIn {
				lastIn, lastChange = in, time.Now()
			} else if c.sc.Pending() > 0 && time.Since(lastChange) >= h.abandonWait() {
				c.sc.Abandon()
			}
			continue
		}
		h.mu.Lock()
		h.stats = addStats(h.base, c.sc.Stats())
		decoded(&h.stats, h.rstats)
		h.lpub = h.lstats
		if err != nil {
			c.err = err
			if errors.Is(err, io.EOF) || errors.Is(err, os.ErrClosed) || errors.Is(err, errPumpStopped) || isClosed(err) {
				c.err = fmt.Errorf("%w: %s: %v", meter.ErrDisconnected, h.name, err)
			} else {
				c.err = fmt.Errorf("%w: %s: reading: %v", meter.ErrDisconnected, h.name, err)
			}
			h.mu.Unlock()
			return
		}
		h.mu.Unlock()
		h.lastRead.Store(int64(hostclock.Now()))
		h.dispatch(c, f)
	}
}

func (h *Hub) abandonWait() time.Duration {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.stream == nil {
		return abandonAfter
	}
	return time.Duration(math.MaxInt64)
}

func addStats(a, b meter.Stats) meter.Stats {
	return meter.Stats{Frames: a.Frames + b.Frames, CRCErrors: a.CRCErrors + b.CRCErrors, Resyncs: a.Resyncs + b.Resyncs,
		BytesDiscarded: a.BytesDiscarded + b.BytesDiscarded, SamplesLost: a.SamplesLost + b.SamplesLost,
		Duplicates: a.Duplicates + b.Duplicates, Restarts: a.Restarts + b.Restarts,
		Recovered: a.Recovered + b.Recovered, Refused: a.Refused + b.Refused}
}

// decoded sets the counters the decoder keeps (the rest are the scanner's).
func decoded(dst *meter.Stats, dec meter.Stats) {
	dst.SamplesLost, dst.Duplicates, dst.Restarts = dec.SamplesLost, dec.Duplicates, dec.Restarts
	dst.Recovered, dst.Refused = dec.Recovered, dec.Refused
}

func (h *Hub) dispatch(c *conn, f *Frame) {
	switch f.Type {
	case TypeAck, TypeNak, TypeIdentity, TypeCal, TypeAccuracy, TypeMarkEcho:
		if f.Type == TypeNak && len(f.Payload) > 0 && Type(f.Payload[0]) == TypeResend {
			h.toStream(c, f, nil) // RESEND is not awaited: its NAK goes to the decoder
			return
		}
		h.mu.Lock()
		cl := h.pending[f.Seq]
		h.mu.Unlock()
		if cl == nil || !answers(f, cl.cmd) {
			return // late or stray: its caller gave up
		}
		if f.Type == TypeMarkEcho {
			h.toStream(c, f, cl)
		}
		select {
		case cl.ch <- reply{typ: f.Type, payload: append([]byte(nil), f.Payload...)}:
		default:
		}
	default:
		// SAMPLES, SAMPLES2, EXPIRED, EVENT, and any type this host does
		// not know: the stream's (refused and counted there if unusable).
		h.toStream(c, f, nil)
	}
}

func answers(f *Frame, cmd Type) bool {
	switch f.Type {
	case TypeAck, TypeNak:
		return len(f.Payload) > 0 && Type(f.Payload[0]) == cmd
	case TypeIdentity:
		return cmd == TypeIdentify
	case TypeCal:
		return cmd == TypeReadCal
	case TypeAccuracy:
		return cmd == TypeReadAccuracy
	case TypeMarkEcho:
		return cmd == TypeMark
	}
	return false
}

func (h *Hub) toStream(cn *conn, f *Frame, c *call) {
	h.mu.Lock()
	st := h.stream
	discarded := h.base.BytesDiscarded
	h.mu.Unlock()
	if st == nil {
		return
	}
	discarded += cn.sc.Stats().BytesDiscarded
	now := hostclock.Now()
	st.mu.Lock()
	defer st.mu.Unlock()
	if st.closed {
		return
	}
	var err error
	if st.disconnected {
		st.disconnected = false
		err = st.sink.Event(meter.Event{Kind: meter.EventReconnect, HostRecv: now, Value: now.Sub(st.downAt).Milliseconds()})
		st.dec.outage, st.dec.downAt = true, st.downAt
	}
	st.dec.reason = ""
	if discarded != st.discarded {
		st.discarded = discarded
		st.dec.reason = "crc"
	}
	if err == nil {
		var sent, recv hostclock.Time
		if f.Type == TypeMarkEcho {
			// The echo's time is when its bytes arrived, not when the
			// decoder got to it behind the frames read with it.
			sent, recv = c.sent, cn.pump.ArrivedBy(f.Offset+int64(HeaderLen+len(f.Payload)+TrailerLen))
			if recv == 0 || recv > now {
				recv = now
			}
		}
		err = st.dec.handle(f.Type, f.Payload, now, sent, recv, st.sink)
	}
	if err == nil {
		err = st.dec.tick(now, st.sink)
	}
	if err != nil {
		if errors.Is(err, meter.ErrProtocol) {
			err = fmt.Errorf("hub %s: frame %d at byte %d: %w", h.name, f.Number, f.Offset, err)
		}
		select {
		case st.errc <- err:
		default:
		}
	}
}

// command sends t with payload and waits for its answer: ACK, or the
// answering frame for IDENTIFY, READ_CAL and MARK. A NAK is a *RejectError.
func (h *Hub) command(ctx context.Context, t Type, payload []byte) (reply, error) {
	c := &call{cmd: t, ch: make(chan reply, 1)}
	h.wmu.Lock()
	h.seq++
	seq := h.seq
	h.mu.Lock()
	cn := h.conn
	if cn == nil {
		h.mu.Unlock()
		h.wmu.Unlock()
		return reply{}, fmt.Errorf("%w: %s: %s: the port is closed (reconnecting)", meter.ErrDisconnected, h.name, t)
	}
	select {
	case <-cn.done:
		h.mu.Unlock()
		h.wmu.Unlock()
		return reply{}, cn.err
	default:
	}
	c.sent = hostclock.Now()
	h.pending[seq] = c
	h.calls.Add(1) // before the write: the answer is passed on at once
	h.mu.Unlock()
	h.wbuf = AppendFrame(h.wbuf[:0], t, seq, payload)
	_, err := cn.rw.Write(h.wbuf)
	h.wmu.Unlock()
	defer func() {
		h.mu.Lock()
		delete(h.pending, seq)
		h.calls.Add(-1)
		h.mu.Unlock()
	}()
	if err != nil {
		return reply{}, fmt.Errorf("%w: %s: writing %s: %v", meter.ErrDisconnected, h.name, t, err)
	}
	timer := time.NewTimer(h.opts.Timeout)
	defer timer.Stop()
	for {
		select {
		case r := <-c.ch:
			if r.typ == TypeNak {
				var n Nak
				if err := n.DecodeFromBytes(r.payload); err != nil {
					return r, fmt.Errorf("hub %s: %w", h.name, err)
				}
				return r, &RejectError{Hub: h.name, Cmd: t, Reason: n.Reason}
			}
			return r, nil
		case <-ctx.Done():
			return reply{}, fmt.Errorf("hub %s: %s (seq %d): %w", h.name, t, seq, ctx.Err())
		case <-cn.done:
			return reply{}, fmt.Errorf("hub %s: %s: %w", h.name, t, cn.err)
		case <-timer.C:
			// The answer comes after every frame the hub queued before it: a
			// host that fell behind (a loaded machine) is still reading that
			// backlog. Wait on while frames keep arriving, up to
			// answerPatience × Timeout in all.
			waited := time.Duration(hostclock.Since(c.sent))
			silent := time.Duration(hostclock.Since(hostclock.Time(h.lastRead.Load())))
			if silent < h.opts.Timeout && waited < answerPatience*h.opts.Timeout {
				timer.Reset(max(time.Millisecond, min(h.opts.Timeout-silent, answerPatience*h.opts.Timeout-waited)))
				continue
			}
			if waited > h.opts.Timeout*3/2 {
				return reply{}, fmt.Errorf("hub %s: no answer to %s (seq %d) within %v, frames arriving for %v of it: %w",
					h.name, t, seq, waited.Round(time.Millisecond), (waited - silent).Round(time.Millisecond), context.DeadlineExceeded)
			}
			return reply{}, fmt.Errorf("hub %s: no answer to %s (seq %d) within %v: %w", h.name, t, seq, h.opts.Timeout, context.DeadlineExceeded)
		}
	}
}

// answerPatience bounds a command's wait, in Timeouts, while the hub's
// frames keep arriving.
const answerPatience = 5

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

// Ping sends data (≤ 32 bytes) and checks the echo.
func (h *Hub) Ping(ctx context.Context, data []byte) error {
	if len(data) > 32 {
		return fmt.Errorf("hub %s: ping of %d bytes exceeds 32", h.name, len(data))
	}
	r, err := h.command(ctx, TypePing, data)
	if err != nil {
		return err
	}
	var a Ack
	if err := a.DecodeFromBytes(r.payload); err != nil || string(a.Echo) != string(data) {
		return fmt.Errorf("%w: hub %s: ping echo differs", meter.ErrProtocol, h.name)
	}
	return nil
}

func (h *Hub) portCommand(ctx context.Context, t Type, capBit uint8, port int, on bool) error {
	if h.id.Caps&capBit == 0 {
		return fmt.Errorf("%w: hub %s has no %s", meter.ErrUnsupported, h.name, t)
	}
	if port < 1 || port > int(h.id.Ports) {
		return fmt.Errorf("%w: port %d (hub %s has ports 1–%d)", meter.ErrUnsupported, port, h.name, h.id.Ports)
	}
	v := byte(0)
	if on {
		v = 1
	}
	return h.commandTwice(ctx, t, []byte{byte(port), v})
}

// commandTwice is command for the commands that may be repeated: setting
// a pin to a value, and MARK (its echo is matched to the pending call by
// sequence number, so a late echo of the first send reaches no one and
// only one mark is recorded). One the hub never answered — lost on the
// line, a UART that overran on a starved emulator, or a host too starved
// to read the answer in time — is sent once more under a new sequence
// number before the caller is failed for it.
func (h *Hub) commandTwice(ctx context.Context, t Type, payload []byte) error {
	_, err := h.command(ctx, t, payload)
	if err != nil && errors.Is(err, context.DeadlineExceeded) && ctx.Err() == nil {
		h.retried.Add(1)
		if _, err2 := h.command(ctx, t, payload); err2 == nil {
			return nil
		} else {
			err = fmt.Errorf("%w; sent again: %v", err, err2)
		}
	}
	return err
}

// Retried is how many commands went unanswered once and were sent again.
func (h *Hub) Retried() uint64 { return h.retried.Load() }

// SetDevSlp implements meter.DevSlpPin; the hub confirms with an EVENT.
func (h *Hub) SetDevSlp(ctx context.Context, port int, asserted bool) error {
	return h.portCommand(ctx, TypeDevSlp, CapDevSlp, port, asserted)
}

// SetPortPower implements meter.PortPower; the hub confirms with an EVENT.
func (h *Hub) SetPortPower(ctx context.Context, port int, on bool) error {
	return h.portCommand(ctx, TypePower, CapPortPower, port, on)
}

// Mark implements meter.Marker: the echo goes to the running stream's
// Sink.Mark with HostSent taken just before the write. Marks need a
// running stream (the hub NAKs them otherwise).
func (h *Hub) Mark(ctx context.Context, id uint32) error {
	return h.commandTwice(ctx, TypeMark, le.AppendUint32(nil, id))
}

// Stream implements meter.Meter. Sink calls come from the driver's reader
// goroutine (and, for EventDisconnect, from Stream's), never concurrently.
// Do not send commands from inside a Sink method: their answers queue
// behind it.
//
// A link that fails (read error: the device vanished) or stays silent for
// StallTimeout is reported as meter.EventDisconnect; a hub opened by path
// is then reopened with backoff, re-identified and asked to resume its
// stream (START with StartResume), and the first frame after it is
// reported as meter.EventReconnect. The samples lost meanwhile are one
// exact meter.Gap with Reason "disconnect" — the hub kept counting. Only a
// hub gone for Options.GiveUp ends Stream, with an error wrapping
// meter.ErrDisconnected.
func (h *Hub) Stream(ctx context.Context, cfg meter.StreamConfig, sink meter.Sink) error {
	cfg, err := ResolveConfig(h.info, cfg)
	if err != nil {
		return fmt.Errorf("hub %s: %w", h.name, err)
	}
	var portMask uint8
	for _, p := range cfg.Ports {
		portMask |= 1 << (p - 1)
	}
	chans := len(meter.Channels(h.info, cfg))
	need := StreamBytesPerSec(int(cfg.Rate), chans)
	if h.version >= 2 {
		need = StreamBytesPerSec2(int(cfg.Rate), chans, h.format, h.maxFrame)
	}
	if link := int(h.id.LinkBytesSec); link > 0 && need > LinkHeadroom*float64(link) {
		return fmt.Errorf("%w: %d channels at %g Hz need %.0f B/s; hub %s's link carries %d B/s (%.0f%% usable)",
			meter.ErrUnsupported, chans, float64(cfg.Rate), need, h.name, link, LinkHeadroom*100)
	}
	st := &activeStream{sink: sink, dec: newDecoder(h.info, cfg, &h.rstats), errc: make(chan error, 1),
		discarded: h.Stats().BytesDiscarded, resends: make(chan Resend, 256), quit: make(chan struct{})}
	h.mu.Lock() // readLoop copies lstats under mu
	h.lstats = LinkStats{Version: h.version, MaxFrame: h.maxFrame, Format: h.format}
	h.mu.Unlock()
	st.dec.link, st.dec.format, st.dec.version = &h.lstats, h.format, h.version
	st.dec.t0 = hostclock.Now() // no index can run ahead of the time since now (refuse.go)
	st.dec.ask = func(first uint64, count uint32) bool {
		select {
		case st.resends <- Resend{First: first, Count: count}:
			return true
		default:
			return false // the sender is behind: the hole is asked again later
		}
	}
	h.mu.Lock()
	if h.stream != nil {
		h.mu.Unlock()
		return fmt.Errorf("hub %s: already streaming", h.name)
	}
	h.stream = st
	h.streaming.Store(true)
	h.mu.Unlock()
	defer func() {
		close(st.quit)
		// Holes still open are gaps now; held blocks are delivered.
		st.mu.Lock()
		h.mu.Lock()
		if !st.closed {
			st.dec.giveUpAll(st.sink) //nolint:errcheck // the stream is over; the sink's error was or will be seen
			decoded(&h.stats, h.rstats)
			h.lpub = h.lstats
		}
		h.stream = nil
		h.streaming.Store(false)
		h.mu.Unlock()
		st.closed = true
		st.mu.Unlock()
	}()
	start := Start{Rate: uint32(cfg.Rate), PortMask: portMask}
	if h.version >= 2 {
		start.Format = h.format
	}
	if h.version >= 2 && h.id.RingBytes > 0 {
		// Holes are asked for from the first frame: the blocks that
		// arrive before the ACK of START is read (the stream begins right
		// after it) were reported as gaps at once. The depth is what the
		// hub computes for its ACK, which started then confirms.
		st.mu.Lock()
		st.dec.ring = uint64(h.id.RingBytes) / uint64(chans*FormatWidth(h.format))
		st.dec.retx = st.dec.ring > 0
		st.mu.Unlock()
	}
	stop := func() {
		sctx, cancel := context.WithTimeout(context.Background(), h.opts.Timeout)
		defer cancel()
		h.command(sctx, TypeStop, nil) //nolint:errcheck // best effort: the stream is over either way
	}
	rep, err := h.command(ctx, TypeStart, start.Append(nil))
	if err != nil {
		if ctx.Err() != nil {
			// Done before the ACK came back (a signal at once): the
			// stream ends as any stream ends on ctx, and the hub, which
			// may have started, is stopped.
			stop()
			return nil
		}
		return err
	}
	if err := h.started(st, rep); err != nil {
		stop()
		return err
	}
	go h.resender(st)
	tick := time.NewTicker(h.opts.StallTimeout / 4)
	defer tick.Stop()
	for {
		var done <-chan struct{}
		cn := h.current()
		if cn != nil {
			done = cn.done
		}
		select {
		case <-ctx.Done():
			stop()
			h.drain(st)
			return nil
		case err := <-st.errc:
			stop()
			return err
		case <-done:
			if err := h.reconnect(ctx, st, cn, start); err != nil {
				return err
			}
			if ctx.Err() != nil {
				stop()
				return nil
			}
		case <-tick.C:
			silent := time.Duration(hostclock.Since(hostclock.Time(h.lastRead.Load())))
			if silent < h.opts.StallTimeout {
				continue
			}
			if err := h.lost(st, hostclock.Now().Add(-silent)); err != nil {
				stop()
				return err
			}
			if h.opts.GiveUp < 0 || silent >= h.opts.GiveUp {
				stop()
				return fmt.Errorf("%w: hub %s sent nothing for %v (give-up time %v)", meter.ErrDisconnected, h.name,
					silent.Round(time.Millisecond), max(h.opts.GiveUp, 0))
			}
		}
	}
}

// drainFor bounds the wait, at the end of a stream, for the answers to
// RESENDs still open: as long as the host would ask again before giving up.
const drainFor = resendTimeout * resendTries

// drain, after STOP, lets the holes still open be filled (a hub answers
// RESEND from its ring until the next START), so the end of a capture is
// as complete as its middle.
func (h *Hub) drain(st *activeStream) {
	for deadline := time.Now().Add(drainFor); time.Now().Before(deadline); time.Sleep(10 * time.Millisecond) {
		st.mu.Lock()
		open := st.dec.waiting() && !st.disconnected
		st.mu.Unlock()
		if !open {
			return
		}
	}
}

// started reads the ACK of a START: the channel mask it acknowledges is
// the one every block must carry, and (v2) the ring's depth for the stream
// decides whether holes are asked for again.
func (h *Hub) started(st *activeStream, rep reply) error {
	var a Ack
	if err := a.DecodeFromBytes(rep.payload); err != nil {
		return fmt.Errorf("hub %s: %w", h.name, err)
	}
	st.mu.Lock()
	want := st.dec.want
	st.mu.Unlock()
	if a.ChanMask != want {
		return fmt.Errorf("%w: hub %s acknowledged START with channel mask 0x%04X, asked for 0x%04X", meter.ErrProtocol, h.name, a.ChanMask, want)
	}
	st.mu.Lock()
	st.dec.acked = a.ChanMask
	st.mu.Unlock()
	if h.version < 2 {
		return nil
	}
	if a.Format != h.format {
		return fmt.Errorf("%w: hub %s acknowledged START with sample format %d, asked %d", meter.ErrProtocol, h.name, a.Format, h.format)
	}
	st.mu.Lock()
	st.dec.ring = uint64(a.RingSamples)
	st.dec.retx = a.RingSamples > 0
	h.mu.Lock() // readLoop copies the decoder's LinkStats under mu
	st.dec.link.RingSamples = uint64(a.RingSamples)
	h.mu.Unlock()
	st.mu.Unlock()
	return nil
}

// resender writes the RESENDs the decoder asks for. They are not awaited:
// the answer is RESENT blocks and EXPIRED, or a NAK, all carrying the
// RESEND's sequence number, and the decoder asks again after a timeout.
func (h *Hub) resender(st *activeStream) {
	var buf []byte
	for {
		var r Resend
		select {
		case <-st.quit:
			return
		case r = <-st.resends:
		}
		h.wmu.Lock()
		h.seq++
		buf = AppendFrame(buf[:0], TypeResend, h.seq, r.Append(nil))
		if cn := h.current(); cn != nil {
			cn.rw.Write(buf) //nolint:errcheck // a lost RESEND is asked again after resendTimeout
		}
		h.wmu.Unlock()
	}
}

// tickStream lets the decoder ask again for unanswered holes while no
// frame arrives (frames tick it too).
func (h *Hub) tickStream() {
	h.mu.Lock()
	st := h.stream
	h.mu.Unlock()
	if st == nil {
		return
	}
	st.mu.Lock()
	defer st.mu.Unlock()
	if st.closed || !st.dec.waiting() {
		return
	}
	if err := st.dec.tick(hostclock.Now(), st.sink); err != nil {
		select {
		case st.errc <- err:
		default:
		}
	}
}

// LinkStats returns the account of the link's protocol v2 machinery for
// the current (or last) stream.
func (h *Hub) LinkStats() LinkStats {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.lpub
}

// lost reports the link lost at host time at, once per outage.
func (h *Hub) lost(st *activeStream, at hostclock.Time) error {
	st.mu.Lock()
	defer st.mu.Unlock()
	if st.disconnected || st.closed {
		return nil
	}
	st.disconnected, st.downAt = true, at
	return st.sink.Event(meter.Event{Kind: meter.EventDisconnect, HostRecv: hostclock.Now()})
}

// Reconnect backoff: the first retry comes quickly (a USB device
// re-enumerates in about a second), later ones at most every maxBackoff.
const (
	firstBackoff = 50 * time.Millisecond
	maxBackoff   = 250 * time.Millisecond
)

// reconnect replaces the failed connection cn: it reopens the path with
// backoff until the same hub answers and resumes streaming, the give-up
// time passes (an error), or ctx ends (nil, Stream returns).
func (h *Hub) reconnect(ctx context.Context, st *activeStream, cn *conn, start Start) error {
	cause := cn.err
	if h.path == "" || h.opts.GiveUp < 0 {
		return cause
	}
	if err := h.lost(st, hostclock.Now()); err != nil {
		return err
	}
	h.drop()
	st.mu.Lock()
	down := st.downAt
	st.mu.Unlock()
	for backoff := firstBackoff; ; backoff = min(2*backoff, maxBackoff) {
		left := h.opts.GiveUp - time.Duration(hostclock.Since(down))
		if left <= 0 {
			return fmt.Errorf("%w: hub %s gone for %v, giving up (last error: %v)", meter.ErrDisconnected, h.path, h.opts.GiveUp, cause)
		}
		t := time.NewTimer(min(backoff, left))
		select {
		case <-ctx.Done():
			t.Stop()
			return nil
		case <-t.C:
		}
		if err := h.dial(); err != nil {
			cause = err
			continue
		}
		err := h.resume(st, start)
		if err == nil {
			return nil
		}
		h.drop()
		if errors.Is(err, errOtherHub) {
			return err
		}
		cause = err
	}
}

// resume re-identifies the hub on a new connection and has it carry on
// streaming with start. A hub that cannot resume (NAK STREAMING) is
// stopped and restarted; the decoder then sees its index start again.
func (h *Hub) resume(st *activeStream, start Start) error {
	if err := h.handshake(true); err != nil {
		return err
	}
	rs := start
	rs.Flags |= StartResume
	rep, err := h.retry(TypeStart, rs.Append(nil))
	var rej *RejectError
	if errors.As(err, &rej) && rej.Reason == ReasonStreaming {
		if _, err := h.retry(TypeStop, nil); err != nil {
			return err
		}
		rep, err = h.retry(TypeStart, start.Append(nil))
	}
	if err != nil {
		return err
	}
	return h.started(st, rep)
}

var (
	_ meter.Meter     = (*Hub)(nil)
	_ meter.DevSlpPin = (*Hub)(nil)
	_ meter.PortPower = (*Hub)(nil)
	_ meter.Marker    = (*Hub)(nil)
	_ meter.Meter     = (*Replay)(nil)
)
