package hub

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"

	"github.com/idlewatt/idlewatt/meter"
	"github.com/idlewatt/idlewatt/units"
)

// Replay is a meter.Meter that decodes a recorded device→host byte stream
// (an `idlewatt hub emulate --fast` output, or a dump of a real session) as
// fast as it can. The stream must be self-describing: its first good frame
// is an IDENTITY; a CALIBRATION, an ACCURACY and the ACK of START may follow before the
// samples. Marks and events carry HostRecv 0: a recording has no host clock.
type Replay struct {
	name   string
	sc     *Scanner
	closer io.Closer
	id     Identity
	cal    *Calibration
	acc    *Accuracy
	info   meter.Info
	rate   units.Hertz // from the ACK of START, 0 if absent
	mask   uint16
	format uint8  // the stream's sample format: the v2 ACK of START's, else 16-bit
	ring   uint32 // the v2 ACK of START's ring depth
	link   LinkStats
	held   *Frame // a frame read ahead while looking for the header frames
	stats  meter.Stats
	done   bool
	ref    func(s *Samples, p []byte) error // the decoder's reference path (tests only; decoder.ref)
}

// OpenReplay opens a raw hub byte stream stored in a regular file.
func OpenReplay(path string) (*Replay, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("hub stream: %w", err)
	}
	r, err := NewReplay(f, path)
	if err != nil {
		f.Close()
		return nil, err
	}
	r.closer = f
	return r, nil
}

// NewReplay reads the header frames of a raw hub byte stream from r; name
// is used in error messages.
func NewReplay(r io.Reader, name string) (*Replay, error) {
	rp := &Replay{name: name, sc: NewScanner(r)}
	f, err := rp.next()
	switch {
	case errors.Is(err, io.EOF):
		return nil, fmt.Errorf("%w: %s: no hub frame in %d bytes", meter.ErrProtocol, name, rp.sc.BytesIn())
	case err != nil:
		return nil, fmt.Errorf("%s: %w", name, err)
	case f.Type != TypeIdentity:
		return nil, fmt.Errorf("%w: %s: stream does not begin with an IDENTITY frame (first frame, at byte %d, is %s)",
			meter.ErrProtocol, name, f.Offset, f.Type)
	}
	if err := rp.id.DecodeFromBytes(f.Payload); err != nil {
		return nil, fmt.Errorf("%s: byte %d: %w", name, f.Offset, err)
	}
	if err := rp.id.Check(); err != nil {
		return nil, fmt.Errorf("%s: byte %d: %w", name, f.Offset, err)
	}
	for {
		f, err := rp.next()
		if err != nil {
			if errors.Is(err, io.EOF) {
				break
			}
			return nil, fmt.Errorf("%s: %w", name, err)
		}
		var ack Ack
		if f.Type == TypeCal && rp.cal == nil {
			rp.cal = new(Calibration)
			if err := rp.cal.DecodeFromBytes(f.Payload); err != nil {
				return nil, fmt.Errorf("%s: byte %d: %w", name, f.Offset, err)
			}
			if err := rp.cal.Check(&rp.id); err != nil {
				return nil, fmt.Errorf("%s: byte %d: %w", name, f.Offset, err)
			}
			continue
		}
		if f.Type == TypeAccuracy && rp.acc == nil {
			rp.acc = new(Accuracy)
			if err := rp.acc.DecodeFromBytes(f.Payload); err != nil {
				return nil, fmt.Errorf("%s: byte %d: %w", name, f.Offset, err)
			}
			if err := rp.acc.Check(&rp.id); err != nil {
				return nil, fmt.Errorf("%s: byte %d: %w", name, f.Offset, err)
			}
			continue
		}
		if f.Type == TypeAck && ack.DecodeFromBytes(f.Payload) == nil && ack.Cmd == TypeStart {
			rp.rate, rp.mask = units.Hertz(ack.Rate), ack.ChanMask
			if ack.Format != 0 {
				rp.format, rp.ring = ack.Format, ack.RingSamples
			}
			continue
		}
		if f.Type == TypeAck && ack.DecodeFromBytes(f.Payload) == nil && ack.Cmd == TypeLink {
			rp.link.Version, rp.link.MaxFrame = int(ack.Version), int(ack.MaxFrame)
			continue
		}
		rp.held = f
		break
	}
	if rp.format == 0 {
		rp.format = Format16
	}
	rp.info = rp.id.InfoFormat(rp.cal, rp.format)
	rp.acc.apply(&rp.info)
	if rp.rate != 0 {
		rp.info.Rates = []units.Hertz{rp.rate}
	}
	return rp, nil
}

func (rp *Replay) next() (*Frame, error) {
	if f := rp.held; f != nil {
		rp.held = nil
		return f, nil
	}
	for idle := 0; ; idle++ {
		f, err := rp.sc.Next()
		if err != ErrIdle {
			return f, err
		}
		if idle == 1000 {
			return nil, fmt.Errorf("%s: reader makes no progress: %w", rp.name, io.ErrNoProgress)
		}
	}
}

// Info implements meter.Meter. Rates holds the recorded rate only, when the
// stream carries the ACK of START.
func (rp *Replay) Info() meter.Info { return rp.info }

// Stats implements meter.Meter.
func (rp *Replay) Stats() meter.Stats {
	s := rp.sc.Stats()
	decoded(&s, rp.stats)
	return s
}

// LinkStats returns the stream's protocol v2 account (refused frames,
// resent blocks a recording holds).
func (rp *Replay) LinkStats() LinkStats { return rp.link }

// Close implements meter.Meter.
func (rp *Replay) Close() error {
	if rp.closer != nil {
		return rp.closer.Close()
	}
	return nil
}

// Stream implements meter.Meter: it decodes the whole stream into sink and
// returns nil at its end. It can run once.
func (rp *Replay) Stream(ctx context.Context, cfg meter.StreamConfig, sink meter.Sink) error {
	if rp.done {
		return fmt.Errorf("hub stream %s: already replayed", rp.name)
	}
	rp.done = true
	cfg, err := rp.ResolveConfig(cfg)
	if err != nil {
		return fmt.Errorf("hub stream %s: %w", rp.name, err)
	}
	d := newDecoder(rp.info, cfg, &rp.stats)
	d.link, d.format, d.acked = &rp.link, rp.format, rp.mask
	d.ref = rp.ref
	d.link.Format = rp.format
	if d.link.Version == 0 {
		d.link.Version = int(rp.id.Version)
	}
	d.version = d.link.Version
	v2 := d.link.Version >= 2
	// A recorded v2 session holds the RESENT blocks that filled its holes:
	// they are merged as live, each hole waiting until the stream has
	// moved a ring's depth past it.
	d.ring, d.retx = uint64(rp.ring), v2 && rp.ring > 0
	d.link.RingSamples = d.ring
	discarded := rp.sc.stats.BytesDiscarded
	for n := 0; ; n++ {
		if n&1023 == 0 && ctx.Err() != nil {
			return nil
		}
		f, err := rp.next()
		if errors.Is(err, io.EOF) {
			return d.giveUpAll(sink)
		}
		if err != nil {
			return err
		}
		d.reason = ""
		if s := rp.sc.stats.BytesDiscarded; s != discarded {
			d.reason, discarded = "crc", s
		}
		switch f.Type {
		case TypeAck, TypeNak, TypeIdentity, TypeCal, TypeAccuracy:
			// Answers to the recording host's commands: nothing to decode
			// (a NAK of RESEND is not awaited in a recording either).
		default:
			err = d.handle(f.Type, f.Payload, 0, 0, 0, sink)
		}
		if err == nil && d.retx {
			err = d.expireBehind(sink)
		}
		if err != nil {
			return err // the sink's
		}
	}
}

// DecodeStream decodes a raw device→host byte stream from r into sink as
// fast as it can; block channels index the returned Info's Channels.
func DecodeStream(r io.Reader, sink meter.Sink) (meter.Info, meter.Stats, error) {
	rp, err := NewReplay(r, "stream")
	if err != nil {
		return meter.Info{}, meter.Stats{}, err
	}
	err = rp.Stream(context.Background(), meter.StreamConfig{}, sink)
	return rp.info, rp.Stats(), err
}

// OpenMeter opens path as a hub: a regular file is replayed (OpenReplay),
// anything else is opened as a serial port (Open).
func OpenMeter(path string, opts Options) (meter.Meter, error) {
	if fi, err := os.Stat(path); err == nil && fi.Mode().IsRegular() {
		return OpenReplay(path)
	}
	return Open(path, opts)
}
