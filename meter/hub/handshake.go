package hub

import (
	"context"
	"errors"
	"fmt"

	"github.com/idlewatt/idlewatt/meter"
)

// The handshake: IDENTIFY, LINK (version 2), STOP, READ_CAL and
// READ_ACCURACY at open; IDENTIFY and LINK again on a reconnect, which must
// find the same hub agreeing to the same link.

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
