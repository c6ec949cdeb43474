package hub

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/idlewatt/idlewatt/hostclock"
	"github.com/idlewatt/idlewatt/meter"
)

// Losing and regaining the link mid-stream: the outage is an event, the
// path is reopened with backoff, and the same hub resumes its stream.

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
