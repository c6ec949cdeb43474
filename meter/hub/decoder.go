package hub

import (
	"fmt"
	"math/bits"
	"slices"
	"strconv"

	"github.com/idlewatt/idlewatt/hostclock"
	"github.com/idlewatt/idlewatt/meter"
	"github.com/idlewatt/idlewatt/units"
)

// Info converts an identity (and, if non-nil, its calibration) to a
// meter.Info. Channel c of the result is wire channel c: port c/rails+1,
// rail c%rails, the bit order of a SAMPLES channel mask.
func (id *Identity) Info(cal *Calibration) meter.Info { return id.InfoFormat(cal, Format16) }

// InfoFormat is Info for a stream of sample format f: with Format20 each
// channel's current LSB is the 20-bit one (CALIBRATION's, else IDENTITY's
// nominal) and its range 2¹⁹ − 1 counts.
func (id *Identity) InfoFormat(cal *Calibration, f uint8) meter.Info {
	info := meter.Info{
		Kind: "hub", Model: id.Model, Firmware: id.Firmware, Serial: id.Serial,
		ProtocolVersion: int(id.Version), Ports: int(id.Ports),
	}
	wide := f == Format20 || f == FormatPacked
	for p := 1; p <= int(id.Ports); p++ {
		for ri, r := range id.Rails {
			ch := meter.Channel{Port: p, Rail: r.Rail, VoltLSB: units.Volts(float64(id.BusLSBuV) * 1e-6),
				CurrentLSB: units.Amps(float64(r.CurrentLSBnA) * 1e-9)}
			if wide && ri < len(id.WideLSBpA) {
				ch.CurrentLSB = units.Amps(float64(id.WideLSBpA[ri]) * 1e-12)
			}
			if cal != nil {
				for _, e := range cal.Entries {
					if int(e.Port) != p || e.Rail != r.Rail {
						continue
					}
					switch {
					case wide && e.WideLSBpA != 0:
						ch.CurrentLSB = units.Amps(float64(e.WideLSBpA) * 1e-12)
					case !wide && e.CurrentLSBnA != 0:
						ch.CurrentLSB = units.Amps(float64(e.CurrentLSBnA) * 1e-9)
					}
				}
			}
			info.Channels = append(info.Channels, ch)
			info.MaxVoltage = max(info.MaxVoltage, units.Volts(float64(r.MaxMilliVolt)*1e-3))
			info.MaxCurrent = max(info.MaxCurrent, ch.CurrentLSB*units.Amps(FormatFullScale(f)))
		}
	}
	for _, r := range id.Rates {
		info.Rates = append(info.Rates, units.Hertz(r))
	}
	for bit, name := range map[uint8]string{CapDevSlp: "devslp", CapPortPower: "port_power", CapMarks: "marks"} {
		if id.Caps&bit != 0 {
			info.Capabilities = append(info.Capabilities, name)
		}
	}
	slices.Sort(info.Capabilities)
	return info
}

// DefaultRate is the rate a StreamConfig with Rate 0 gets, if the hub
// supports it; otherwise the hub's first rate.
const DefaultRate units.Hertz = 1000

// ResolveConfig fills in cfg's defaults against info (rate, all ports) and
// checks it: an unsupported rate or a port the hub lacks is an error
// wrapping meter.ErrUnsupported that names the value.
func ResolveConfig(info meter.Info, cfg meter.StreamConfig) (meter.StreamConfig, error) {
	if len(info.Rates) == 0 {
		return cfg, fmt.Errorf("%w: hub lists no sample rates", meter.ErrProtocol)
	}
	if cfg.Rate == 0 {
		cfg.Rate = info.Rates[0]
		if slices.Contains(info.Rates, DefaultRate) {
			cfg.Rate = DefaultRate
		}
	}
	if !slices.Contains(info.Rates, cfg.Rate) {
		return cfg, fmt.Errorf("%w: sample rate %g Hz (this hub supports %s)", meter.ErrUnsupported, float64(cfg.Rate), rateList(info.Rates))
	}
	if len(cfg.Ports) == 0 {
		for p := 1; p <= info.Ports; p++ {
			cfg.Ports = append(cfg.Ports, p)
		}
	}
	for _, p := range cfg.Ports {
		if p < 1 || p > info.Ports {
			return cfg, fmt.Errorf("%w: port %d (this hub has ports 1–%d)", meter.ErrUnsupported, p, info.Ports)
		}
	}
	return cfg, nil
}

func rateList(rs []units.Hertz) string {
	s := ""
	for i, r := range rs {
		if i > 0 {
			s += ", "
		}
		s += strconv.FormatFloat(float64(r), 'g', -1, 64)
	}
	return s + " Hz"
}

// decoder turns SAMPLES and EVENT frames of one stream into Sink calls,
// tracking the next expected sample index so every gap is reported exactly.
// It reuses its buffers: steady-state decoding does not allocate.
type decoder struct {
	lsbV, lsbI [16]float64
	index      [16]int // wire channel → Block.Channel, -1 = not streamed
	nstream    int     // channels in the stream
	expected   uint64
	// reason names the cause of a gap found by the next frame, when the
	// caller knows it ("crc" after discarded bytes); "lost" otherwise.
	// Callers set it before each frame.
	reason string
	// outage: the link was down since downAt (hostclock); the next gap is
	// a "disconnect", and if the next block's index went backwards the hub
	// restarted counting, so offset shifts its indices past what came before.
	outage bool
	downAt hostclock.Time
	offset uint64
	rate   float64
	// edge is the end of the last live block (or overrun) seen: the next
	// live index expected. It equals expected except while holes wait for
	// a RESEND's answer (merge.go).
	edge uint64
	merge
	// lastFirst is the first index of the last block delivered, lastRecv
	// its host receive time (0 in a replay, and before the first block).
	lastFirst uint64
	lastRecv  hostclock.Time
	// What a frame is checked against (refuse.go): the link's protocol
	// version, the hub's ports, the channel mask acknowledged by START (0:
	// unknown, a recording without it) and the wire mask of the channels
	// streamed, and t0, the host time the stream began (0 in a replay).
	version     int
	ports       int
	acked, want uint16
	t0          hostclock.Time
	// refusedBlock: a sample block was refused since the last live block,
	// so the gap the next one finds is "refused".
	refusedBlock bool
	stats        *meter.Stats
	block        meter.Block
	v            []units.Volts
	i            []units.Amps
	s            Samples
	ev           Event
	// A packed block in d.s is decoded into pf's volts and amps (floats
	// set, s.Data nil); its counts are made from raw, its packed data,
	// only if it must be held or was resent (counts). pfMask is the
	// channel mask pf's LSBs are for.
	pf     packedFloats
	pfMask uint16
	floats bool
	raw    []byte
	// ref, if set (tests only), decodes every SAMPLES2 payload into counts
	// in d.s, delivered by emit: the decoder as it was before pf, the
	// reference decode_ref_test.go holds the fast path to.
	ref func(s *Samples, p []byte) error
}

func newDecoder(info meter.Info, cfg meter.StreamConfig, stats *meter.Stats) *decoder {
	d := &decoder{stats: stats, rate: float64(cfg.Rate), version: max(info.ProtocolVersion, ProtocolV1), ports: info.Ports}
	d.link, d.format = &LinkStats{}, Format16
	n := 0
	for c := range d.index {
		d.index[c] = -1
		if c >= len(info.Channels) {
			continue
		}
		ch := info.Channels[c]
		d.lsbV[c], d.lsbI[c] = float64(ch.VoltLSB), float64(ch.CurrentLSB)
		if slices.Contains(cfg.Ports, ch.Port) {
			d.index[c] = n
			d.want |= 1 << c
			n++
		}
	}
	d.nstream = n
	return d
}

// gapReason names the cause of a gap found now: "lost" is refined to
// "disconnect" after an outage, to "refused" after a refused sample block,
// and to the caller's reason ("crc").
func (d *decoder) gapReason(reason string) string {
	switch {
	case reason == "lost" && d.outage:
		return "disconnect"
	case reason == "lost" && d.refusedBlock:
		return "refused"
	case reason == "lost" && d.reason != "":
		return d.reason
	}
	return reason
}

// handle decodes one frame of the stream received at host time now:
// SAMPLES, SAMPLES2, EXPIRED, EVENT, MARK_ECHO (sent: the MARK's host time,
// recv: when the echo's bytes arrived; 0 in a replay), a NAK of RESEND, or
// a type this host does not know. A frame it cannot use is refused and
// counted (refuse.go), never an error: an error is the sink's, and ends
// the stream.
func (d *decoder) handle(t Type, p []byte, now, sent, recv hostclock.Time, sink meter.Sink) error {
	switch t {
	case TypeSamples:
		d.link.LiveBytes += uint64(len(p) + frameOverhd)
		if d.version >= 2 {
			d.refuse(RefusedLink) // a v2 link's blocks are SAMPLES2
			return nil
		}
		return d.samples(p, now, sink)
	case TypeSamples2, TypeExpired:
		n := uint64(len(p) + frameOverhd)
		switch {
		case d.version < 2:
			d.refuse(RefusedLink)
			return nil
		case t == TypeExpired:
			d.link.ResentBytes += n
			return d.expired(p, sink)
		case len(p) > 12 && p[12]&SamplesResent != 0:
			d.link.ResentBytes += n
		default:
			d.link.LiveBytes += n
		}
		return d.samples2(p, now, sink)
	case TypeEvent:
		return d.event(p, now, sink)
	case TypeMarkEcho:
		return d.markEcho(p, now, sent, recv, sink)
	case TypeNak:
		return d.nakResend(sink)
	}
	d.refuse(RefusedUnknown)
	return nil
}

// gap reports [d.expected, upTo) missing, if non-empty.
func (d *decoder) gap(upTo uint64, reason string, sink meter.Sink) error {
	if upTo <= d.expected {
		return nil
	}
	g := meter.Gap{Channel: -1, Start: d.expected, Count: upTo - d.expected, Reason: d.gapReason(reason)}
	d.stats.SamplesLost += g.Count
	d.expected = upTo
	d.edge = max(d.edge, upTo)
	return sink.Gap(g)
}

// samples decodes a SAMPLES payload received at host time now (used only
// after an outage) into sink.
func (d *decoder) samples(p []byte, now hostclock.Time, sink meter.Sink) error {
	d.floats = false
	if err := d.s.DecodeFromBytes(p); err != nil {
		d.refuse(RefusedSamples)
		return nil
	}
	if !d.maskOK(d.s.Mask) {
		d.refuse(RefusedChannels)
		return nil
	}
	return d.live(now, sink)
}

// samples2 decodes a SAMPLES2 payload: a live block, or (SamplesResent)
// one answering a RESEND, merged into its hole.
func (d *decoder) samples2(p []byte, now hostclock.Time, sink meter.Sink) error {
	s := &d.s
	if err := d.decodeV2(p); err != nil {
		d.refuse(RefusedSamples2)
		return nil // refused and counted: a frame with a good CRC the host cannot use
	}
	if s.Format != d.format {
		d.refuse(RefusedFormat)
		return nil
	}
	if !d.maskOK(s.Mask) {
		d.refuse(RefusedChannels)
		return nil
	}
	if s.Flags&SamplesResent != 0 {
		if err := d.counts(); err != nil {
			return err
		}
		return d.resent(now, sink)
	}
	return d.live(now, sink)
}

// decodeV2 is d.s.DecodeV2(p), except that a packed block is decoded
// into d.pf's volts and amps (unpackFloats), not into counts.
func (d *decoder) decodeV2(p []byte) error {
	s := &d.s
	d.floats = false
	if d.ref != nil {
		return d.ref(s, p)
	}
	if len(p) < samples2Hdr || p[13] != FormatPacked {
		return s.DecodeV2(p)
	}
	if err := s.header2(p); err != nil {
		return err
	}
	if s.Mask != d.pfMask { // header2 refuses mask 0
		d.pfMask = s.Mask
		mask, j := s.Mask, 0
		for mask != 0 {
			c := bits.TrailingZeros16(mask)
			mask &^= 1 << c
			d.pf.lv[j], d.pf.li[j] = d.lsbV[c], d.lsbI[c]
			j++
		}
	}
	if err := s.unpackFloats(s.Data, &d.pf); err != nil {
		return err
	}
	d.raw, s.Data, s.Width = s.Data, nil, 5
	d.floats = true
	return nil
}

// counts makes the counts (s.Data) of the packed block in d.s that
// decodeV2 decoded into volts and amps: a block held, or a RESENT one,
// is kept as counts. The block decoded once already, so it decodes again.
func (d *decoder) counts() error {
	if !d.floats {
		return nil
	}
	d.floats = false
	if err := d.s.unpack(d.raw); err != nil {
		return fmt.Errorf("hub: a packed block decoded to samples, then did not: %w", err)
	}
	return nil
}

// live handles the live block in d.s: duplicates, restarts and gaps are
// judged against the live edge; with retransmission a gap becomes a hole
// asked for again, and blocks behind a hole wait in order.
func (d *decoder) live(now hostclock.Time, sink meter.Sink) error {
	s := &d.s
	if d.outage {
		if err := d.afterOutage(now, sink); err != nil {
			return err
		}
	}
	s.First += d.offset
	skip := 0
	if !d.plausible(s.First, uint64(s.Count), now) || s.First < d.edge && s.First < d.lastFirst {
		// Further back than the block before, or further ahead than the
		// hub can have counted: the hub counts again, or its count jumped.
		if err := d.giveUpAll(sink); err != nil {
			return err
		}
		if err := d.restart(now, sink); err != nil {
			return err
		}
	} else if s.First < d.edge {
		// A repeat of (part of) what was just delivered, or of indices an
		// OVERRUN already gave up as lost.
		dup := min(d.edge, s.First+uint64(s.Count)) - s.First
		d.stats.Duplicates += dup
		if err := sink.Event(meter.Event{Kind: meter.EventDuplicate, Index: s.First, Value: int64(dup), HostRecv: now}); err != nil {
			return err
		}
		if dup == uint64(s.Count) {
			return nil
		}
		skip = int(dup)
	}
	if s.First > d.edge {
		if err := d.missing(s.First, d.gapReason("lost"), now, sink); err != nil {
			return err
		}
	}
	d.refusedBlock = false // the refused block's indices are in the gap just found, or were never missing
	d.edge = s.First + uint64(s.Count)
	d.lastFirst, d.lastRecv = s.First, now
	if d.waiting() {
		if err := d.counts(); err != nil {
			return err
		}
		d.hold(s, skip)
		return d.flush(sink)
	}
	if d.floats {
		return d.emitFloats(skip, sink)
	}
	return d.emit(s, skip, sink)
}

// emitFloats is emit for the packed block in d.s decoded by decodeV2:
// each channel's samples skip… are delivered where they were decoded.
func (d *decoder) emitFloats(skip int, sink meter.Sink) error {
	s := &d.s
	d.block.Start = s.First + uint64(skip)
	mask, j := s.Mask, 0
	for mask != 0 {
		c := bits.TrailingZeros16(mask)
		mask &^= 1 << c
		if d.index[c] >= 0 {
			a, b := j*s.Count+skip, (j+1)*s.Count
			d.block.V, d.block.I = d.pf.v[a:b:b], d.pf.i[a:b:b]
			d.block.Channel = d.index[c]
			if err := sink.Samples(&d.block); err != nil {
				return err
			}
		}
		j++
	}
	d.expected = s.First + uint64(s.Count)
	return nil
}

// emit delivers samples skip… of s to sink; d.expected moves past them.
func (d *decoder) emit(s *Samples, skip int, sink meter.Sink) error {
	n := s.Count - skip
	if cap(d.v) < n {
		d.v, d.i = make([]units.Volts, s.Count), make([]units.Amps, s.Count)
	}
	d.block.V, d.block.I = d.v[:n], d.i[:n]
	d.block.Start = s.First + uint64(skip)
	w := s.Width
	mask, j := s.Mask, 0
	for mask != 0 {
		c := bits.TrailingZeros16(mask)
		mask &^= 1 << c
		if d.index[c] >= 0 {
			lv, li := d.lsbV[c], d.lsbI[c]
			stride := s.Chans * w
			data := s.Data[(skip*s.Chans+j)*w:]
			v, i := d.block.V, d.block.I
			if w == 5 {
				for k := range v {
					q := data[k*stride : k*stride+5]
					v[k] = units.Volts(float64(uint16(q[0])|uint16(q[1])<<8) * lv)
					i[k] = units.Amps(float64(cur20(q[2:])) * li)
				}
			} else {
				for k := range v {
					q := data[k*stride : k*stride+4]
					v[k] = units.Volts(float64(uint16(q[0])|uint16(q[1])<<8) * lv)
					i[k] = units.Amps(float64(int16(uint16(q[2])|uint16(q[3])<<8)) * li)
				}
			}
			d.block.Channel = d.index[c]
			if err := sink.Samples(&d.block); err != nil {
				return err
			}
		}
		j++
	}
	d.expected = s.First + uint64(s.Count)
	return nil
}

// restart handles a block whose index went back past the previous
// block's: the hub started counting again without the link going down (a
// START from elsewhere, a reset). The samples after it are a new epoch
// continuing the timeline: its index 0 is placed after d.expected by the
// host time between the last block and this one, less the samples this
// block says the new count has taken; a replay, without host times, places
// it right after. The samples in between are one "restart" gap, an
// estimate like the restart gap after an outage (afterOutage), and an
// EventRestart says where the new count begins.
//
// A block whose index jumped ahead beyond what the hub can have counted
// (refuse.go, plausible), or went back to a count that cannot be one since
// a restart (near 2⁶⁴), is handled the same way, its block itself placed
// after the host time since the last one: the wire index is then mapped
// onto the timeline modulo 2⁶⁴, so a counter that wraps past 2⁶⁴ carries on
// without another restart.
func (d *decoder) restart(now hostclock.Time, sink meter.Sink) error {
	s := &d.s
	raw := s.First - d.offset // the index the hub sent
	since := 0.0              // samples the host clock says passed since the last block
	if now > 0 && d.lastRecv > 0 && d.rate > 0 {
		since = float64(now-d.lastRecv) / 1e9 * d.rate
	}
	first := d.expected + uint64(max(0, since-float64(raw)-float64(s.Count)))
	if first += raw; first < raw || !d.plausible(first, uint64(s.Count), now) {
		first = d.expected + uint64(max(0, since-float64(s.Count)))
	}
	d.offset = first - raw
	s.First = first
	return d.restarted(raw, now, sink)
}

// restarted records a restart of the hub's count at wire index raw, now
// on the timeline at d.s.First: the gap up to it, then the event.
func (d *decoder) restarted(raw uint64, now hostclock.Time, sink meter.Sink) error {
	d.stats.Restarts++
	if err := d.gap(d.s.First, "restart", sink); err != nil {
		return err
	}
	return sink.Event(meter.Event{Kind: meter.EventRestart, Index: d.s.First, Value: int64(raw), HostRecv: now})
}

// afterOutage handles the first block after the link came back. A hub
// that kept counting continues past d.expected, and the ordinary gap is
// exact. One whose index went backwards restarted (a power cycle, or no
// resume support): its indices are shifted past d.expected plus the outage
// as the host clock measured it, a gap marked "restart" because its length
// is an estimate, the only inexact gap the driver reports.
func (d *decoder) afterOutage(now hostclock.Time, sink meter.Sink) error {
	d.outage = false
	s := &d.s
	if s.First+d.offset >= d.edge || d.rate <= 0 {
		d.reason = "disconnect"
		return nil
	}
	if err := d.giveUpAll(sink); err != nil {
		return err
	}
	est := uint64(max(0, float64(now-d.downAt)/1e9*d.rate))
	d.offset = d.expected + est - s.First
	raw := s.First
	s.First += d.offset
	err := d.restarted(raw, now, sink)
	s.First = raw // samples adds the offset
	return err
}

// event handles an EVENT: one the protocol does not allow (refuse.go,
// RefusedEvent) is refused; an OVERRUN opens the gap it names.
func (d *decoder) event(p []byte, hostRecv hostclock.Time, sink meter.Sink) error {
	e := &d.ev
	if err := e.DecodeFromBytes(p); err != nil {
		d.refuse(RefusedEvent)
		return nil
	}
	ok := false
	switch e.Kind {
	case EvDevSlp, EvPortPower:
		ok = e.Port >= 1 && int(e.Port) <= d.ports && e.Value <= 1
	case EvOverCurrent:
		ok = e.Port >= 1 && int(e.Port) <= d.ports
	case EvOverrun:
		ok = true
	}
	n := uint64(0)
	if e.Kind == EvOverrun {
		n = uint64(e.Value)
	}
	if e.Index += d.offset; !ok || !d.plausible(e.Index, n, hostRecv) {
		d.refuse(RefusedEvent)
		return nil
	}
	if e.Kind == EvOverrun && e.Index+uint64(e.Value) > d.edge {
		if e.Index > d.edge {
			if err := d.missing(e.Index, d.gapReason("lost"), hostRecv, sink); err != nil {
				return err
			}
		}
		if err := d.missing(e.Index+uint64(e.Value), "overrun", hostRecv, sink); err != nil {
			return err
		}
	}
	return sink.Event(meter.Event{Kind: meter.EventKind(e.Kind), Port: int(e.Port), Index: e.Index,
		Value: int64(e.Value), HostRecv: hostRecv})
}

// markEcho hands a MARK_ECHO to the sink, its index on the timeline; one
// that does not decode, or names an index the hub cannot have reached, is
// refused.
func (d *decoder) markEcho(p []byte, now, sent, recv hostclock.Time, sink meter.Sink) error {
	var me MarkEcho
	if err := me.DecodeFromBytes(p); err != nil {
		d.refuse(RefusedMarkEcho)
		return nil
	}
	if me.Index += d.offset; !d.plausible(me.Index, 0, now) {
		d.refuse(RefusedMarkEcho)
		return nil
	}
	return sink.Mark(meter.MarkEcho{ID: me.ID, HostSent: sent, HostRecv: recv, MeterIndex: me.Index})
}
