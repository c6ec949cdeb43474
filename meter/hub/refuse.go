package hub

import (
	"github.com/idlewatt/idlewatt/hostclock"
)

// Frames the host refuses. A frame with a good CRC whose payload the host
// cannot use — it does not decode, states an impossible value, belongs to
// another protocol version or stream, or is of a type this host does not
// know — is dropped and counted by kind (LinkStats.Refused, and the total in
// meter.Stats.Refused); it never ends a stream, and the samples it would
// have carried are found missing by the next good block, an exact gap with
// reason "refused" (or a hole asked for again with RESEND, on a v2 link).
// docs/hub-protocol.md § Host behaviour lists the kinds.

// Refusal is a kind of refused frame.
type Refusal uint8

// Kinds of refused frames, in LinkStats.Refused.
const (
	// RefusedSamples: a SAMPLES payload that does not decode (its length
	// does not fit its count and mask, an empty block).
	RefusedSamples Refusal = iota
	// RefusedSamples2: a SAMPLES2 payload that does not decode (an unknown
	// format, a 20-bit count out of range, a packed stream that does not
	// decode exactly), or a RESENT block whose indices run past 2⁶⁴.
	RefusedSamples2
	// RefusedExpired: an EXPIRED payload that does not decode, or whose
	// indices run past 2⁶⁴.
	RefusedExpired
	// RefusedEvent: an EVENT that does not decode, of a kind the protocol
	// does not define, for a port the hub lacks, with a DEVSLP or
	// PORT_POWER value other than 0 or 1, or at a sample index the hub
	// cannot have reached (see plausible).
	RefusedEvent
	// RefusedMarkEcho: a MARK_ECHO that does not decode, or at a sample
	// index the hub cannot have reached.
	RefusedMarkEcho
	// RefusedChannels: a sample block whose channel mask is not the one
	// the ACK of START acknowledged (samples of ports never started, or
	// missing a started one).
	RefusedChannels
	// RefusedFormat: a SAMPLES2 block in a format other than the stream's.
	RefusedFormat
	// RefusedLink: a frame of the other protocol version — SAMPLES2 or
	// EXPIRED on a link that negotiated v1, SAMPLES on a v2 link.
	RefusedLink
	// RefusedUnknown: a frame type this host does not know (a later
	// minor version's, or a host→hub type coming back).
	RefusedUnknown
	// NumRefusals is the number of kinds.
	NumRefusals
)

// String is the kind's name, as record's summary, record --json
// (frames_refused_by_kind) and the capture's "meter-refused" note spell it.
func (r Refusal) String() string {
	switch r {
	case RefusedSamples:
		return "samples"
	case RefusedSamples2:
		return "samples2"
	case RefusedExpired:
		return "expired"
	case RefusedEvent:
		return "event"
	case RefusedMarkEcho:
		return "mark_echo"
	case RefusedChannels:
		return "channel_mask"
	case RefusedFormat:
		return "format"
	case RefusedLink:
		return "link_version"
	case RefusedUnknown:
		return "unknown_type"
	}
	return "refusal"
}

// RefusedBy returns the refused frames by kind name, the kinds refused at
// least once; nil when none was.
func (l *LinkStats) RefusedBy() map[string]uint64 {
	var m map[string]uint64
	for k, n := range l.Refused {
		if n == 0 {
			continue
		}
		if m == nil {
			m = map[string]uint64{}
		}
		m[Refusal(k).String()] = n
	}
	return m
}

// RefusedBy implements record.RefusalCounter: the frames refused so far in
// the current (or last) stream, by kind.
func (h *Hub) RefusedBy() map[string]uint64 {
	ls := h.LinkStats()
	return ls.RefusedBy()
}

// RefusedBy implements record.RefusalCounter for a replayed stream.
func (rp *Replay) RefusedBy() map[string]uint64 { return rp.link.RefusedBy() }

// refuse counts a refused frame of kind k; a sample block's refusal also
// names the cause of the gap the next block finds.
func (d *decoder) refuse(k Refusal) {
	d.link.Refused[k]++
	d.stats.Refused++
	switch k {
	case RefusedSamples, RefusedSamples2, RefusedChannels, RefusedFormat, RefusedLink:
		d.refusedBlock = true
	}
}

// Plausible sample indices. A hub counts samples since START at its rate,
// so no index it sends can run ahead of the host's clock by more than the
// two clocks' disagreement; a live index beyond that (a counter near 2⁶⁴,
// a corrupted index with a good CRC, a wrap) is not a gap of millennia but
// a count that jumped, handled as a restart (decoder.restart). A replay has
// no host clock: there an index more than maxReplayJump past the live edge
// is a jump. Nothing on the timeline ever comes near 2⁶⁴, so no block or gap
// runs past the largest index a capture can hold.
const (
	// maxTimeline bounds every index on the timeline: 2⁶² samples are
	// 146 000 years at the highest rate a hub may list (1 MHz).
	maxTimeline = 1 << 62
	// maxReplayJump: a replay's largest forward jump, 2⁴⁰ samples (12.7
	// days at 1 MHz, 35 years at 1 kHz).
	maxReplayJump = 1 << 40
	// clockSlack is how far (relative, plus slackSeconds of samples) a
	// hub's count may run ahead of the host's clock: far more than any
	// crystal's drift; a hub beyond it is not counting samples.
	clockSlack   = 0.01
	slackSeconds = 10
)

// plausible reports whether timeline indices [first, first+n) can have
// been sent by a hub counting since the stream began (host time t0) at
// host time now.
func (d *decoder) plausible(first, n uint64, now hostclock.Time) bool {
	end := first + n
	if end < first || end > maxTimeline {
		return false
	}
	if now > 0 && d.t0 > 0 && d.rate > 0 {
		elapsed := float64(now-d.t0) / 1e9
		return float64(end) <= (elapsed*(1+clockSlack)+slackSeconds)*d.rate
	}
	return end <= d.edge+maxReplayJump
}

// maskOK reports whether a block's channel mask is the stream's: the
// acknowledged one, or (a recording without its ACK of START) one holding
// every channel the host records.
func (d *decoder) maskOK(mask uint16) bool {
	if d.acked != 0 {
		return mask == d.acked
	}
	return mask&d.want == d.want
}
