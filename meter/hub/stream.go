package hub

import (
	"context"
	"fmt"
	"sync"
	"time"

	"github.com/idlewatt/idlewatt/hostclock"
	"github.com/idlewatt/idlewatt/meter"
)

// A running stream: START, the decoder fed by the reader, RESENDs for
// holes, and the watch for a failed or silent link until ctx ends.

// activeStream is a running Stream: its sink, its decoder, and what the
// reader, the resender and Stream share about it.
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
	chans := len(meter.Channels(h.info, cfg))
	if err := h.fits(cfg, chans); err != nil {
		return err
	}
	st := h.newStream(cfg, sink)
	if err := h.register(st); err != nil {
		return err
	}
	defer h.unregister(st)
	start := h.startFor(st, cfg, chans)
	rep, err := h.command(ctx, TypeStart, start.Append(nil))
	if err != nil {
		if ctx.Err() != nil {
			// Done before the ACK came back (a signal at once): the
			// stream ends as any stream ends on ctx, and the hub, which
			// may have started, is stopped.
			h.stopHub()
			return nil
		}
		return err
	}
	if err := h.started(st, rep); err != nil {
		h.stopHub()
		return err
	}
	go h.resender(st)
	return h.watch(ctx, st, start)
}

// fits refuses a stream of chans channels at cfg's rate that the hub's
// link cannot carry with LinkHeadroom to spare.
func (h *Hub) fits(cfg meter.StreamConfig, chans int) error {
	need := StreamBytesPerSec(int(cfg.Rate), chans)
	if h.version >= 2 {
		need = StreamBytesPerSec2(int(cfg.Rate), chans, h.format, h.maxFrame)
	}
	if link := int(h.id.LinkBytesSec); link > 0 && need > LinkHeadroom*float64(link) {
		return fmt.Errorf("%w: %d channels at %g Hz need %.0f B/s; hub %s's link carries %d B/s (%.0f%% usable)",
			meter.ErrUnsupported, chans, float64(cfg.Rate), need, h.name, link, LinkHeadroom*100)
	}
	return nil
}

// newStream makes the stream of cfg into sink, its decoder set for the
// link agreed at the handshake, and resets the link's account.
func (h *Hub) newStream(cfg meter.StreamConfig, sink meter.Sink) *activeStream {
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
	return st
}

// register makes st the hub's stream, the one the reader feeds; there is
// one at a time.
func (h *Hub) register(st *activeStream) error {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.stream != nil {
		return fmt.Errorf("hub %s: already streaming", h.name)
	}
	h.stream = st
	h.streaming.Store(true)
	return nil
}

// unregister ends st when Stream returns: holes still open are gaps now,
// held blocks are delivered, and the reader feeds it no more.
func (h *Hub) unregister(st *activeStream) {
	close(st.quit)
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
}

// startFor is the START of cfg's ports; on a version 2 link with a ring
// it also sets st's decoder to ask for holes from the first frame.
func (h *Hub) startFor(st *activeStream, cfg meter.StreamConfig, chans int) Start {
	var portMask uint8
	for _, p := range cfg.Ports {
		portMask |= 1 << (p - 1)
	}
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
	return start
}

// stopHub sends STOP, best effort: the stream is over either way.
func (h *Hub) stopHub() {
	sctx, cancel := context.WithTimeout(context.Background(), h.opts.Timeout)
	defer cancel()
	h.command(sctx, TypeStop, nil) //nolint:errcheck // best effort: the stream is over either way
}

// watch runs the started stream st until ctx ends (STOP, then the open
// holes are waited for), the decoder or sink fails, or the link is lost
// for good: a failed connection is reopened (reconnect), a silent link is
// an outage (lost) and, past GiveUp, the end.
func (h *Hub) watch(ctx context.Context, st *activeStream, start Start) error {
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
			h.stopHub()
			h.drain(st)
			return nil
		case err := <-st.errc:
			h.stopHub()
			return err
		case <-done:
			if err := h.reconnect(ctx, st, cn, start); err != nil {
				return err
			}
			if ctx.Err() != nil {
				h.stopHub()
				return nil
			}
		case <-tick.C:
			silent := time.Duration(hostclock.Since(hostclock.Time(h.lastRead.Load())))
			if silent < h.opts.StallTimeout {
				continue
			}
			if err := h.lost(st, hostclock.Now().Add(-silent)); err != nil {
				h.stopHub()
				return err
			}
			if h.opts.GiveUp < 0 || silent >= h.opts.GiveUp {
				h.stopHub()
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
