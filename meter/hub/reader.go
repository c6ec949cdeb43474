package hub

import (
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"time"

	"github.com/idlewatt/idlewatt/hostclock"
	"github.com/idlewatt/idlewatt/meter"
)

// The reader goroutine: it takes frames from the connection's Scanner and
// hands each to the command waiting for it or to the running stream's
// decoder, keeping the link's counters.

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
