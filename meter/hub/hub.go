package hub

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"sync"
	"sync/atomic"
	"time"

	"github.com/idlewatt/idlewatt/internal/hostclock"
	"github.com/idlewatt/idlewatt/meter"
)

// Options configure a Hub. The zero value is ready to use.
type Options struct {
	// Timeout bounds the wait for a command's answer and, at open, for the
	// hub to identify itself. Default 2s.
	Timeout time.Duration
	// StallTimeout: streaming with no bytes for this long is reported as
	// meter.EventDisconnect (and the next bytes as EventReconnect). Default 1s.
	StallTimeout time.Duration
	// Baud is the serial speed for Open. Default 921600 (8N1 always).
	Baud int
}

func (o *Options) defaults() {
	if o.Timeout <= 0 {
		o.Timeout = 2 * time.Second
	}
	if o.StallTimeout <= 0 {
		o.StallTimeout = time.Second
	}
	if o.Baud <= 0 {
		o.Baud = 921600
	}
}

// Hub is a connected SATA power hub. It implements meter.Meter,
// meter.DevSlpPin, meter.PortPower and meter.Marker; commands may be sent
// from any goroutine, also while Stream runs.
type Hub struct {
	name   string
	rw     io.ReadWriter
	closer io.Closer
	opts   Options
	sc     *Scanner
	id     Identity
	cal    *Calibration
	info   meter.Info

	wmu  sync.Mutex // serialises writes and seq
	seq  byte
	wbuf []byte

	mu      sync.Mutex
	pending map[byte]*call
	stream  *activeStream
	stats   meter.Stats
	readErr error

	rstats   meter.Stats // reader goroutine only: SamplesLost
	lastRead atomic.Int64
	done     chan struct{}
	closeOne sync.Once
}

type call struct {
	cmd  Type
	sent int64
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
	disconnected bool
	discarded    uint64
	errc         chan error
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

// Open opens the serial port at path (921600 8N1 by default) and
// identifies the hub. Nothing answering is an error wrapping
// meter.ErrNoDevice; something answering garbage wraps meter.ErrProtocol;
// another protocol version wraps ErrVersion.
func Open(path string, opts Options) (*Hub, error) {
	opts.defaults()
	if _, err := os.Stat(path); err != nil {
		return nil, fmt.Errorf("%w at %s: %v", meter.ErrNoDevice, path, err)
	}
	f, err := openSerial(path, opts.Baud)
	if err != nil {
		return nil, fmt.Errorf("%w at %s: %v", meter.ErrNoDevice, path, err)
	}
	h, err := newHub(f, f, path, opts)
	if err != nil {
		f.Close()
		return nil, err
	}
	return h, nil
}

// New identifies a hub over rw (tests, or a port opened elsewhere). If rw
// is an io.Closer, Close closes it. A Read returning (0, nil), as a
// timed-out serial read does, is tolerated.
func New(rw io.ReadWriter, opts Options) (*Hub, error) {
	opts.defaults()
	c, _ := rw.(io.Closer)
	return newHub(rw, c, "hub", opts)
}

func newHub(rw io.ReadWriter, c io.Closer, name string, opts Options) (*Hub, error) {
	h := &Hub{name: name, rw: rw, closer: c, opts: opts, sc: NewScanner(rw),
		pending: map[byte]*call{}, done: make(chan struct{})}
	go h.readLoop()
	if err := h.handshake(); err != nil {
		h.shutdown()
		return nil, err
	}
	return h, nil
}

// retry sends an idempotent command up to three times within the timeout:
// on a noisy link an answer can be lost to a CRC error like any frame.
func (h *Hub) retry(t Type) (reply, error) {
	var rep reply
	var err error
	deadline := time.Now().Add(h.opts.Timeout)
	for time.Now().Before(deadline) {
		ctx, cancel := context.WithTimeout(context.Background(), min(h.opts.Timeout/3, time.Until(deadline)))
		rep, err = h.command(ctx, t, nil)
		cancel()
		if err == nil || !errors.Is(err, context.DeadlineExceeded) {
			break
		}
	}
	return rep, err
}

func (h *Hub) handshake() error {
	rep, err := h.retry(TypeIdentify)
	if errors.Is(err, context.DeadlineExceeded) {
		h.mu.Lock()
		st := h.stats
		h.mu.Unlock()
		if in := h.bytesIn(); in > 0 {
			return fmt.Errorf("%w: %s answered %d bytes but no hub IDENTITY frame within %v (%d good frames, %d CRC errors)",
				meter.ErrProtocol, h.name, in, h.opts.Timeout, st.Frames, st.CRCErrors)
		}
		return fmt.Errorf("%w at %s: nothing answered IDENTIFY within %v", meter.ErrNoDevice, h.name, h.opts.Timeout)
	}
	if err != nil {
		return err
	}
	if err := h.id.DecodeFromBytes(rep.payload); err != nil {
		return fmt.Errorf("hub %s: %w", h.name, err)
	}
	// A previous host may have left it streaming.
	if _, err := h.retry(TypeStop); err != nil && !errors.Is(err, meter.ErrRejected) {
		return err
	}
	rep, err = h.retry(TypeReadCal)
	switch {
	case err == nil:
		h.cal = new(Calibration)
		if err := h.cal.DecodeFromBytes(rep.payload); err != nil {
			return fmt.Errorf("hub %s: %w", h.name, err)
		}
	case !errors.Is(err, meter.ErrRejected):
		return err
	}
	h.info = h.id.Info(h.cal)
	return nil
}

func (h *Hub) bytesIn() uint64 { return h.sc.BytesIn() }

// abandonAfter: a partial frame with no new byte for this long is given
// up (Scanner.Abandon), so answers queued behind a frame whose length was
// corrupted are not held hostage on an idle link.
const abandonAfter = 100 * time.Millisecond

func (h *Hub) readLoop() {
	defer close(h.done)
	dl, canDeadline := h.rw.(interface{ SetReadDeadline(time.Time) error })
	lastIn, lastChange := h.sc.BytesIn(), time.Now()
	for {
		if canDeadline {
			dl.SetReadDeadline(time.Now().Add(abandonAfter)) //nolint:errcheck // without deadlines we poll below
		}
		f, err := h.sc.Next()
		if err == ErrIdle {
			if in := h.sc.BytesIn(); in != lastIn {
				lastIn, lastChange = in, time.Now()
			} else if h.sc.Pending() > 0 && time.Since(lastChange) >= abandonAfter {
				h.sc.Abandon()
				continue
			}
			if !canDeadline {
				time.Sleep(time.Millisecond)
			}
			continue
		}
		h.mu.Lock()
		h.stats = h.sc.Stats()
		h.stats.SamplesLost = h.rstats.SamplesLost
		if err != nil {
			h.readErr = err
			if errors.Is(err, io.EOF) || errors.Is(err, os.ErrClosed) {
				h.readErr = fmt.Errorf("%w: %s: %v", meter.ErrDisconnected, h.name, err)
			}
			h.mu.Unlock()
			return
		}
		h.mu.Unlock()
		h.lastRead.Store(hostclock.Now())
		h.dispatch(f)
	}
}

func (h *Hub) dispatch(f *Frame) {
	switch f.Type {
	case TypeSamples, TypeEvent:
		h.toStream(f, nil)
	case TypeAck, TypeNak, TypeIdentity, TypeCal, TypeMarkEcho:
		h.mu.Lock()
		c := h.pending[f.Seq]
		h.mu.Unlock()
		if c == nil || !answers(f, c.cmd) {
			return // late or stray: its caller gave up
		}
		if f.Type == TypeMarkEcho {
			h.toStream(f, c)
		}
		select {
		case c.ch <- reply{typ: f.Type, payload: append([]byte(nil), f.Payload...)}:
		default:
		}
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
	case TypeMarkEcho:
		return cmd == TypeMark
	}
	return false
}

func (h *Hub) toStream(f *Frame, c *call) {
	h.mu.Lock()
	st := h.stream
	h.mu.Unlock()
	if st == nil {
		return
	}
	now := hostclock.Now()
	st.mu.Lock()
	defer st.mu.Unlock()
	if st.closed {
		return
	}
	var err error
	if st.disconnected {
		st.disconnected = false
		err = st.sink.Event(meter.Event{Kind: meter.EventReconnect, HostRecv: now})
		st.dec.reason = "disconnect"
	} else {
		st.dec.reason = ""
	}
	if d := h.sc.Stats().BytesDiscarded; d != st.discarded {
		st.discarded = d
		if st.dec.reason == "" {
			st.dec.reason = "crc"
		}
	}
	if err == nil {
		switch f.Type {
		case TypeSamples:
			err = st.dec.samples(f.Payload, st.sink)
		case TypeEvent:
			err = st.dec.event(f.Payload, now, st.sink)
		case TypeMarkEcho:
			var me MarkEcho
			if err = me.DecodeFromBytes(f.Payload); err == nil {
				err = st.sink.Mark(meter.MarkEcho{ID: me.ID, HostSent: c.sent, HostRecv: now, MeterIndex: me.Index})
			}
		}
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
	if err := h.readErr; err != nil {
		h.mu.Unlock()
		h.wmu.Unlock()
		return reply{}, err
	}
	c.sent = hostclock.Now()
	h.pending[seq] = c
	h.mu.Unlock()
	h.wbuf = AppendFrame(h.wbuf[:0], t, seq, payload)
	_, err := h.rw.Write(h.wbuf)
	h.wmu.Unlock()
	defer func() {
		h.mu.Lock()
		delete(h.pending, seq)
		h.mu.Unlock()
	}()
	if err != nil {
		return reply{}, fmt.Errorf("%w: %s: writing %s: %v", meter.ErrDisconnected, h.name, t, err)
	}
	timer := time.NewTimer(h.opts.Timeout)
	defer timer.Stop()
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
	case <-timer.C:
		return reply{}, fmt.Errorf("hub %s: no answer to %s (seq %d) within %v: %w", h.name, t, seq, h.opts.Timeout, context.DeadlineExceeded)
	case <-h.done:
		h.mu.Lock()
		err := h.readErr
		h.mu.Unlock()
		return reply{}, fmt.Errorf("hub %s: %s: %w", h.name, t, err)
	}
}

// Info implements meter.Meter; channel LSBs are the calibrated ones.
func (h *Hub) Info() meter.Info { return h.info }

// Identity returns the hub's identity frame as decoded.
func (h *Hub) Identity() Identity { return h.id }

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
		if h.closer != nil {
			err = h.closer.Close()
			<-h.done
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
	_, err := h.command(ctx, t, []byte{byte(port), v})
	return err
}

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
	_, err := h.command(ctx, TypeMark, le.AppendUint32(nil, id))
	return err
}

// Stream implements meter.Meter. Sink calls come from the driver's reader
// goroutine (and, for EventDisconnect, from Stream's), never concurrently.
// Do not send commands from inside a Sink method: their answers queue
// behind it.
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
	if link := int(h.id.LinkBytesSec); link > 0 && !FitsLink(int(cfg.Rate), chans, link) {
		return fmt.Errorf("%w: %d channels at %g Hz need %.0f B/s; hub %s's link carries %d B/s (%.0f%% usable)",
			meter.ErrUnsupported, chans, float64(cfg.Rate), StreamBytesPerSec(int(cfg.Rate), chans), h.name, link, LinkHeadroom*100)
	}
	st := &activeStream{sink: sink, dec: newDecoder(h.info, cfg, &h.rstats), errc: make(chan error, 1),
		discarded: h.Stats().BytesDiscarded}
	h.mu.Lock()
	if h.stream != nil {
		h.mu.Unlock()
		return fmt.Errorf("hub %s: already streaming", h.name)
	}
	h.stream = st
	h.mu.Unlock()
	defer func() {
		h.mu.Lock()
		h.stream = nil
		h.mu.Unlock()
		st.mu.Lock()
		st.closed = true
		st.mu.Unlock()
	}()
	start := Start{Rate: uint32(cfg.Rate), PortMask: portMask}
	if _, err := h.command(ctx, TypeStart, start.Append(nil)); err != nil {
		return err
	}
	stop := func() {
		sctx, cancel := context.WithTimeout(context.Background(), h.opts.Timeout)
		defer cancel()
		h.command(sctx, TypeStop, nil) //nolint:errcheck // best effort: the stream is over either way
	}
	tick := time.NewTicker(h.opts.StallTimeout / 4)
	defer tick.Stop()
	for {
		select {
		case <-ctx.Done():
			stop()
			return nil
		case err := <-st.errc:
			stop()
			return err
		case <-h.done:
			h.mu.Lock()
			err := h.readErr
			h.mu.Unlock()
			return err
		case <-tick.C:
			if hostclock.Since(h.lastRead.Load()) < h.opts.StallTimeout {
				continue
			}
			st.mu.Lock()
			if !st.disconnected && !st.closed {
				st.disconnected = true
				if err := sink.Event(meter.Event{Kind: meter.EventDisconnect, HostRecv: hostclock.Now()}); err != nil {
					st.mu.Unlock()
					stop()
					return err
				}
			}
			st.mu.Unlock()
		}
	}
}

var (
	_ meter.Meter     = (*Hub)(nil)
	_ meter.DevSlpPin = (*Hub)(nil)
	_ meter.PortPower = (*Hub)(nil)
	_ meter.Marker    = (*Hub)(nil)
	_ meter.Meter     = (*Replay)(nil)
)
