package hub

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/idlewatt/idlewatt/hostclock"
	"github.com/idlewatt/idlewatt/meter"
)

// Commands and their answers: a command is written with the next
// sequence number and waits for the frame that answers it (dispatch, in
// reader.go, hands it over); a NAK is a *RejectError.

// call is a command awaiting its answer, registered in Hub.pending under
// its sequence number.
type call struct {
	cmd  Type
	sent hostclock.Time
	ch   chan reply
}

// reply is the answer dispatch hands a call: the frame's type and a copy
// of its payload.
type reply struct {
	typ     Type
	payload []byte
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
	// A call still awaiting its answer under this number (sent 256
	// commands ago, its caller not yet given up: a host reading a backlog,
	// a burst of RESENDs) keeps it: this command takes the next free one
	// (the hub answers whatever number it is sent). Taken over, the number
	// would hand the older call's answer to this one, and the older call's
	// end would delete this one's entry, leaving its answer to no one.
	for n := 0; h.pending[seq] != nil; n++ {
		if n == 255 {
			h.mu.Unlock()
			h.wmu.Unlock()
			return reply{}, fmt.Errorf("hub %s: %s: 256 commands await their answers", h.name, t)
		}
		h.seq++
		seq = h.seq
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
