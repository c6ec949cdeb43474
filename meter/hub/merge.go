package hub

import (
	"time"

	"github.com/idlewatt/idlewatt/hostclock"
	"github.com/idlewatt/idlewatt/meter"
)

// Retransmission on the host side (protocol v2). A gap in the live stream
// becomes a hole: the host asks the hub for it (RESEND), holds the live
// blocks behind it, and delivers in index order once the hole is filled
// by RESENT blocks, answered EXPIRED, or given up — so the sink still sees
// every index once, in order, and whatever is never recovered is an exact
// gap with the reason it was lost. Without a ring (v1, a replay, depth 0)
// a gap is reported at once, as in v1.

// LinkStats is the account of a hub link's protocol v2 machinery.
type LinkStats struct {
	Version     int    // negotiated protocol version
	MaxFrame    int    // agreed maximum frame, bytes
	Format      uint8  // sample format of the stream
	RingSamples uint64 // the hub's ring depth for the stream, samples

	Resends        uint64 // RESEND commands sent (each asks for one hole)
	Requested      uint64 // samples asked for
	Recovered      uint64 // samples delivered from RESENT blocks
	Expired        uint64 // samples the hub answered EXPIRED (left its ring)
	GaveUp         uint64 // samples given up by the host: beyond the ring's depth, no answer, memory bound, a restart
	ResentUnneeded uint64 // resent samples no hole wanted (already filled: an answer to a repeated RESEND)
	ResendNaks     uint64 // RESENDs the hub refused (NAK)
	ResentBytes    uint64 // bytes of RESENT and EXPIRED frames received, framing included
	LiveBytes      uint64 // bytes of live SAMPLES/SAMPLES2 frames received, framing included

	// Refused counts the frames the host refused, by kind (refuse.go);
	// each also counts in meter.Stats.Refused.
	Refused [NumRefusals]uint64
}

// Host retransmission policy: a hole unanswered for resendTimeout is asked
// for again, at most resendTries times; held blocks are bounded by
// maxHeldBytes (past it the oldest hole is given up).
const (
	resendTimeout = 200 * time.Millisecond
	resendTries   = 8
	maxHeldBytes  = 16 << 20
)

type hole struct {
	start, end uint64
	reason     string
	expired    bool           // ready to be reported as a gap
	asked      hostclock.Time // hostclock of the last RESEND for it
	tries      int
}

// merge is the decoder's retransmission state.
type merge struct {
	retx   bool   // holes are asked for (a live v2 link with a ring)
	ring   uint64 // the hub's ring depth, samples
	format uint8  // the stream's sample format (SAMPLES2 must match)
	ask    func(first uint64, count uint32) bool
	link   *LinkStats
	holes  []hole    // sorted, disjoint, all at or after expected
	pend   []Samples // held blocks, sorted by First, Data owned
	held   int       // bytes in pend
}

func (d *decoder) waiting() bool { return len(d.holes) > 0 || len(d.pend) > 0 }

// missing records [d.edge, upTo) as missing: a hole asked for again with
// retransmission, else a gap at once.
func (d *decoder) missing(upTo uint64, reason string, now hostclock.Time, sink meter.Sink) error {
	if upTo <= d.edge {
		return nil
	}
	if !d.retx {
		return d.gap(upTo, reason, sink)
	}
	h := hole{start: d.edge, end: upTo, reason: reason}
	d.edge = upTo
	if h.end-h.start > d.ring {
		// Older than the ring's depth behind the live edge: gone already.
		cut := h.end - d.ring
		d.link.GaveUp += cut - h.start
		d.holes = append(d.holes, hole{start: h.start, end: cut, reason: reason, expired: true})
		h.start = cut
	}
	if h.end > h.start {
		d.holes = append(d.holes, h)
		d.askHole(&d.holes[len(d.holes)-1], now)
	}
	return d.flush(sink)
}

func (d *decoder) askHole(h *hole, now hostclock.Time) {
	h.asked, h.tries = now, h.tries+1
	n := h.end - h.start
	if d.ask != nil && d.ask(h.start-d.offset, uint32(min(n, 1<<32-1))) {
		d.link.Resends++
		d.link.Requested += n
	}
}

// hold keeps samples skip… of s (copied) until the holes before them close.
func (d *decoder) hold(s *Samples, skip int) {
	p := *s
	p.unpacked = nil // p.Data is its own copy; the decoder's buffer stays the decoder's
	p.First += uint64(skip)
	p.Count -= skip
	p.Data = append([]byte(nil), s.Data[skip*s.Chans*s.Width:]...)
	i := len(d.pend)
	for i > 0 && d.pend[i-1].First > p.First {
		i--
	}
	d.pend = append(d.pend, Samples{})
	copy(d.pend[i+1:], d.pend[i:])
	d.pend[i] = p
	d.held += len(p.Data)
}

// resent merges the RESENT block in d.s into the holes it fills.
func (d *decoder) resent(now hostclock.Time, sink meter.Sink) error {
	s := &d.s
	if !d.retx {
		d.link.ResentUnneeded += uint64(s.Count)
		return nil
	}
	s.First += d.offset
	a, b := s.First, s.First+uint64(s.Count)
	if b < a {
		d.refuse(RefusedSamples2) // runs past 2⁶⁴: no hole is there
		return nil
	}
	used := uint64(0)
	var out []hole
	for _, h := range d.holes {
		x, y := max(a, h.start), min(b, h.end)
		if h.expired || x >= y {
			out = append(out, h)
			continue
		}
		piece := *s
		piece.First, piece.Count = x, int(y-x)
		off := int(x-a) * s.Chans * s.Width
		piece.Data = s.Data[off : off+piece.Count*s.Chans*s.Width]
		if x == d.expected {
			// At the cursor: deliver now rather than insert before every
			// held block (an outage's answer is thousands of frames).
			if err := d.emit(&piece, 0, sink); err != nil {
				return err
			}
		} else {
			d.hold(&piece, 0)
		}
		used += y - x
		if h.start < x {
			l := h
			l.end = x
			out = append(out, l)
		}
		if y < h.end {
			r := h
			r.start = y
			out = append(out, r)
		}
	}
	d.holes = out
	d.link.Recovered += used
	d.stats.Recovered += used
	d.link.ResentUnneeded += uint64(s.Count) - used
	return d.flush(sink)
}

// expired marks the holes' parts within an EXPIRED answer as lost.
func (d *decoder) expired(p []byte, sink meter.Sink) error {
	var e Expired
	if err := e.DecodeFromBytes(p); err != nil {
		d.refuse(RefusedExpired)
		return nil
	}
	a := e.First + d.offset
	b := a + uint64(e.Count)
	if b < a {
		d.refuse(RefusedExpired)
		return nil
	}
	if !d.retx {
		return nil
	}
	var out []hole
	for _, h := range d.holes {
		x, y := max(a, h.start), min(b, h.end)
		if h.expired || x >= y {
			out = append(out, h)
			continue
		}
		d.link.Expired += y - x
		for _, part := range [3]hole{{h.start, x, h.reason, false, h.asked, h.tries}, {x, y, h.reason, true, h.asked, h.tries},
			{y, h.end, h.reason, false, h.asked, h.tries}} {
			if part.end > part.start {
				out = append(out, part)
			}
		}
	}
	d.holes = out
	return d.flush(sink)
}

// nakResend: the hub refused a RESEND (no ring, never sent, not
// negotiated); the holes asked for will not be answered.
func (d *decoder) nakResend(sink meter.Sink) error {
	d.link.ResendNaks++
	for i := range d.holes {
		if h := &d.holes[i]; !h.expired && h.asked != 0 {
			h.expired = true
			d.link.GaveUp += h.end - h.start
		}
	}
	return d.flush(sink)
}

// tick asks again for holes unanswered for resendTimeout and gives up
// those asked resendTries times, or all the oldest while held blocks
// exceed maxHeldBytes.
func (d *decoder) tick(now hostclock.Time, sink meter.Sink) error {
	if len(d.holes) == 0 {
		return nil
	}
	for i := range d.holes {
		h := &d.holes[i]
		if h.expired || now.Sub(h.asked) < resendTimeout {
			continue
		}
		if h.tries >= resendTries || d.edge-h.start > d.ring {
			h.expired = true
			d.link.GaveUp += h.end - h.start
			continue
		}
		d.askHole(h, now)
	}
	for i := 0; d.held > maxHeldBytes && i < len(d.holes); i++ {
		if h := &d.holes[i]; !h.expired {
			h.expired = true
			d.link.GaveUp += h.end - h.start
			if err := d.flush(sink); err != nil {
				return err
			}
		}
	}
	return d.flush(sink)
}

// expireBehind gives up the holes a ring's depth behind the live edge: a
// recording's answer to them would have come by now.
func (d *decoder) expireBehind(sink meter.Sink) error {
	if len(d.holes) == 0 || d.edge-d.holes[0].start <= d.ring {
		return nil
	}
	for i := range d.holes {
		if h := &d.holes[i]; !h.expired && d.edge-h.start > d.ring {
			h.expired = true
			d.link.GaveUp += h.end - h.start
		}
	}
	return d.flush(sink)
}

// giveUpAll reports every hole as a gap and delivers every held block:
// the stream ends, or restarts its count.
func (d *decoder) giveUpAll(sink meter.Sink) error {
	for i := range d.holes {
		if h := &d.holes[i]; !h.expired {
			h.expired = true
			d.link.GaveUp += h.end - h.start
		}
	}
	return d.flush(sink)
}

// flush delivers, in index order, what is ready at d.expected: held
// blocks, and holes that are over (as gaps); it stops at a hole still
// waiting for an answer.
func (d *decoder) flush(sink meter.Sink) error {
	for {
		switch {
		case len(d.holes) > 0 && d.holes[0].start <= d.expected:
			h := d.holes[0]
			if !h.expired {
				if h.end <= d.expected { // filled behind the cursor already
					d.holes = d.holes[1:]
					continue
				}
				return nil
			}
			// Adjacent holes over for the same cause are one gap (the part
			// the host gave up and the part the hub answered EXPIRED): wait
			// for the next one while it is still open.
			k := 1
			for ; k < len(d.holes) && d.holes[k].start == h.end && d.holes[k].reason == h.reason; k++ {
				if !d.holes[k].expired {
					return nil
				}
				h.end = d.holes[k].end
			}
			d.holes = d.holes[k:]
			if err := d.putGap(h.end, h.reason, sink); err != nil {
				return err
			}
		case len(d.pend) > 0 && d.pend[0].First <= d.expected:
			p := d.pend[0]
			d.pend = d.pend[1:]
			d.held -= len(p.Data)
			if p.First+uint64(p.Count) <= d.expected {
				continue
			}
			if err := d.emit(&p, int(d.expected-p.First), sink); err != nil {
				return err
			}
		case len(d.pend) > 0 || len(d.holes) > 0:
			// Something after the cursor with nothing in between: not
			// reachable through missing/hold, kept exact all the same.
			next := uint64(1<<64 - 1)
			if len(d.pend) > 0 {
				next = d.pend[0].First
			}
			if len(d.holes) > 0 {
				next = min(next, d.holes[0].start)
			}
			if err := d.putGap(next, "lost", sink); err != nil {
				return err
			}
		default:
			d.pend = d.pend[:0]
			return nil
		}
	}
}

// putGap reports [d.expected, upTo) as a gap with reason as it stands.
func (d *decoder) putGap(upTo uint64, reason string, sink meter.Sink) error {
	if upTo <= d.expected {
		return nil
	}
	g := meter.Gap{Channel: -1, Start: d.expected, Count: upTo - d.expected, Reason: reason}
	d.stats.SamplesLost += g.Count
	d.expected = upTo
	return sink.Gap(g)
}
