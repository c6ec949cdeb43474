package capture

import (
	"fmt"
	"math"

	"github.com/idlewatt/idlewatt/hostclock"
	"github.com/idlewatt/idlewatt/meter"
	"github.com/idlewatt/idlewatt/units"
)

// decode turns a verified payload into a record. ok is false for chunks
// that carry no record of their own (end, unknown non-critical types) or
// whose records went to r.queue (samples, gaps).
func (r *Reader) decode(off int64, typ byte, p []byte) (rec Record, ok bool, err error) {
	switch typ {
	case chunkSamples:
		return rec, false, r.samples(p)
	case chunkSummary:
		if err := r.decodeSummary(p); err != nil {
			return rec, false, err
		}
		return Record{Kind: KindSummary, Summary: &r.sum}, r.verified(off), nil
	case chunkLevels:
		if r.major < 2 {
			break // not part of format 1: an unknown chunk there
		}
		if err := r.decodeLevels(p); err != nil {
			return rec, false, err
		}
		return Record{Kind: KindSummary, Summary: &r.sum}, r.verified(off), nil
	case chunkGap:
		return rec, false, r.gap(p)
	case chunkMark:
		rec, err := decodeMark(p)
		return rec, err == nil, err
	case chunkEvent:
		rec, err := decodeEvent(p)
		return rec, err == nil, err
	case chunkStats:
		rec, err := decodeStats(p)
		return rec, err == nil, err
	case chunkStatsX:
		rec, err := decodeStatsX(p)
		return rec, err == nil, err
	case chunkIO:
		ios, err := r.decodeIO(p)
		return Record{Kind: KindIO, IO: ios}, true, err
	case chunkState:
		rec, err := decodeState(p)
		return rec, err == nil, err
	case chunkEnd:
		if len(p) != endLen {
			return rec, false, fmt.Errorf("end payload of %d bytes, want %d", len(p), endLen)
		}
		return rec, false, nil
	case chunkHeader:
		return rec, false, fmt.Errorf("a second header chunk")
	case chunkIndex:
		if r.major >= 2 {
			return rec, false, nil // for seeking readers (UseIndex); a scan has no use for it
		}
	}
	if r.hdr[3]&flagCritical != 0 {
		return rec, false, fmt.Errorf("%w: critical chunk type 0x%02x unknown to this reader", ErrVersion, typ)
	}
	return rec, false, nil
}

// gap checks a gap chunk, moves the timelines of the channels it covers
// past it (a damaged gap before it queued first) and queues it.
func (r *Reader) gap(p []byte) error {
	if len(p) < gapFixed || len(p) != gapFixed+int(le.Uint16(p[4:])) {
		return fmt.Errorf("gap payload of %d bytes", len(p))
	}
	g := meter.Gap{Channel: int(int32(le.Uint32(p))), Start: le.Uint64(p[8:]), Count: le.Uint64(p[16:]), Reason: string(p[gapFixed:])}
	if g.Channel < -1 || g.Channel >= r.nch {
		return fmt.Errorf("gap for channel %d, header has %d", g.Channel, r.nch)
	}
	if g.Start > math.MaxUint64-g.Count {
		return fmt.Errorf("gap of %d samples from index %d runs past the largest sample index", g.Count, g.Start)
	}
	for c := range r.chans {
		if g.Channel == -1 || g.Channel == c {
			r.hole(c, g.Start)
			r.chans[c].next = max(r.chans[c].next, g.Start+g.Count)
			r.chans[c].seen = true
		}
	}
	r.queue = append(r.queue, Record{Kind: KindGap, Gap: g})
	return nil
}

// decodeMark decodes a mark chunk (a zero Record on error, as the other
// decodeX).
func decodeMark(p []byte) (Record, error) {
	if len(p) != markLen {
		return Record{}, fmt.Errorf("mark payload of %d bytes, want %d", len(p), markLen)
	}
	return Record{Kind: KindMark, Mark: meter.MarkEcho{ID: le.Uint32(p), Synthetic: le.Uint32(p[4:])&1 != 0,
		HostSent: hostclock.Time(le.Uint64(p[8:])), HostRecv: hostclock.Time(le.Uint64(p[16:])), MeterIndex: le.Uint64(p[24:])}}, nil
}

// decodeEvent decodes a meter event chunk.
func decodeEvent(p []byte) (Record, error) {
	if len(p) != eventLen {
		return Record{}, fmt.Errorf("event payload of %d bytes, want %d", len(p), eventLen)
	}
	return Record{Kind: KindEvent, Event: meter.Event{Kind: meter.EventKind(p[0]), Port: int(int32(le.Uint32(p[4:]))),
		Index: le.Uint64(p[8:]), Value: int64(le.Uint64(p[16:])), HostRecv: hostclock.Time(le.Uint64(p[24:]))}}, nil
}

// decodeStats decodes a format 1.0 stats chunk (five counters).
func decodeStats(p []byte) (Record, error) {
	if len(p) != statsLen {
		return Record{}, fmt.Errorf("stats payload of %d bytes, want %d", len(p), statsLen)
	}
	return Record{Kind: KindStats, Host: hostclock.Time(le.Uint64(p)),
		Stats: meter.Stats{Frames: le.Uint64(p[8:]), CRCErrors: le.Uint64(p[16:]), Resyncs: le.Uint64(p[24:]),
			BytesDiscarded: le.Uint64(p[32:]), SamplesLost: le.Uint64(p[40:])},
		StatsCounters: StatsCountersV10}, nil
}

// decodeStatsX decodes an extended stats chunk.
func decodeStatsX(p []byte) (Record, error) {
	if len(p) < statsXMin || len(p)%8 != 0 {
		return Record{}, fmt.Errorf("stats-extended payload of %d bytes, want %d or more, a multiple of 8", len(p), statsXMin)
	}
	rec := Record{Kind: KindStats, Host: hostclock.Time(le.Uint64(p))}
	// An older writer's chunk carries fewer counters: the rest stay
	// 0 and StatsCounters says they are unknown.
	n := (len(p) - 8) / 8
	for i, x := range statsCounters(&rec.Stats) {
		if i < n {
			*x = le.Uint64(p[8+8*i:])
		}
	}
	rec.StatsCounters = min(n, len(statsCounters(&rec.Stats)))
	return rec, nil
}

// decodeState decodes a host state event chunk.
func decodeState(p []byte) (Record, error) {
	if len(p) < stateFixed || len(p) != stateFixed+int(le.Uint16(p[14:])) {
		return Record{}, fmt.Errorf("state payload of %d bytes", len(p))
	}
	return Record{Kind: KindState, State: StateEvent{Host: hostclock.Time(le.Uint64(p)), Port: int(int32(le.Uint32(p[8:]))),
		Kind: StateKind(p[12]), Value: string(p[stateFixed:])}}, nil
}

// verified checks the summary just decoded (chunk at off) against the
// samples decoded so far and says whether to hand it out: not when it
// disagrees (the samples win; the Account names the chunk).
func (r *Reader) verified(off int64) bool {
	if r.memo.mode == memoReuse {
		return r.memoVerdict(off)
	}
	if r.ver == nil {
		return true
	}
	m, bad := r.ver.check(&r.sum, off, r.seq)
	if !bad {
		return true
	}
	if m.Channel < len(r.h.Channels) {
		m.Name = r.h.Channels[m.Channel].Name()
	}
	r.memoBad(off)
	if r.acc.Mismatches++; len(r.acc.Mismatched) < maxMismatches {
		r.acc.Mismatched = append(r.acc.Mismatched, m)
	}
	return false
}

// hole queues a damaged gap for channel c if damage came between its last
// chunk and this one, which starts at index start.
func (r *Reader) hole(c int, start uint64) {
	cs := &r.chans[c]
	if !cs.hole {
		return
	}
	cs.hole = false
	if !cs.seen || start <= cs.next {
		return
	}
	n := start - cs.next
	r.queue = append(r.queue, Record{Kind: KindGap, Gap: meter.Gap{Channel: c, Start: cs.next, Count: n, Reason: GapDamaged}})
	r.acc.SamplesLost += n
	if cs.holeIdx >= 0 {
		r.acc.Damage[cs.holeIdx].Samples += n
	}
}

// samples checks a samples chunk against its channel's timeline and queues
// what it yields: a damaged gap before it, the rejected part, the samples.
func (r *Reader) samples(p []byte) error {
	ch, enc, n, start, err := r.samplesHeader(p)
	if err != nil {
		return err
	}
	// Decode before touching the channel's timeline: an encoding-2 chunk
	// whose streams do not decode is invalid and must leave it as it was.
	v, i, err := r.sampleValues(p, enc, n)
	if err != nil {
		return err
	}
	r.acc.Read += uint64(n)
	rej, k0 := r.place(ch, start, n)
	if r.skip || n == 0 {
		return nil
	}
	r.queueSamples(ch, start, rej, k0, v, i)
	return nil
}

// samplesHeader checks a samples chunk's fixed part, its encoding (and the
// calibration it carries) and its length: the channel, encoding, count
// and first index.
func (r *Reader) samplesHeader(p []byte) (ch int, enc byte, n int, start uint64, err error) {
	if len(p) < samplesFixed {
		return 0, 0, 0, 0, fmt.Errorf("samples payload of %d bytes", len(p))
	}
	ch, enc, n, start = int(le.Uint16(p)), p[2], int(le.Uint32(p[4:])), le.Uint64(p[8:])
	if ch >= r.nch {
		return 0, 0, 0, 0, fmt.Errorf("samples for channel %d, header has %d", ch, r.nch)
	}
	var want int
	switch enc {
	case encFloat32:
		want = samplesFixed + 8*n
	case encInt16:
		want = samplesFixed + 8 + 4*n
		if len(p) >= samplesFixed+8 {
			d := p[samplesFixed:]
			c := Calibration{VGain: float64(math.Float32frombits(le.Uint32(d))), IGain: float64(math.Float32frombits(le.Uint32(d[4:])))}
			if err := checkCalibration([]Calibration{c}, r.h.Channels[ch]); err != nil {
				return 0, 0, 0, 0, err
			}
		}
	case encCounts:
		if r.major < 2 {
			return 0, 0, 0, 0, fmt.Errorf("%w: sample encoding %d in a format 1 file", ErrVersion, enc)
		}
		if r.cal, _, _, _, err = parseCounts(p, n, r.cal); err != nil {
			return 0, 0, 0, 0, err
		}
		if err := checkCalibration(r.cal, r.h.Channels[ch]); err != nil {
			return 0, 0, 0, 0, err
		}
		want = len(p)
	default:
		return 0, 0, 0, 0, fmt.Errorf("%w: sample encoding %d", ErrVersion, enc)
	}
	if n > MaxPayload || len(p) != want {
		return 0, 0, 0, 0, fmt.Errorf("samples payload of %d bytes for %d samples in encoding %d, want %d", len(p), n, enc, want)
	}
	if start > math.MaxUint64-uint64(n) {
		return 0, 0, 0, 0, fmt.Errorf("%d samples from index %d run past the largest sample index", n, start)
	}
	return ch, enc, n, start, nil
}

// sampleValues decodes a samples chunk's n values into r's buffers (nil
// when skipping samples or empty).
func (r *Reader) sampleValues(p []byte, enc byte, n int) (v []units.Volts, i []units.Amps, err error) {
	if r.skip || n == 0 {
		return nil, nil, nil
	}
	if cap(r.vbuf) < n {
		r.vbuf, r.ibuf = make([]units.Volts, n), make([]units.Amps, n)
	}
	v, i = r.vbuf[:n], r.ibuf[:n]
	d := p[samplesFixed:]
	// The loops below walk fixed-size slices so the compiler can drop the
	// per-sample bounds checks: decoding is most of what reading costs.
	switch enc {
	case encCounts:
		if err := decodeCounts(&r.counts, p, n, v, i); err != nil {
			return nil, nil, err
		}
	case encFloat32:
		decodeF32(v, d[:4*n])
		decodeF32(i, d[4*n:8*n])
	default:
		lv := float64(math.Float32frombits(le.Uint32(d)))
		li := float64(math.Float32frombits(le.Uint32(d[4:])))
		d = d[8:]
		decodeI16(v, d[:2*n], lv)
		decodeI16(i, d[2*n:4*n], li)
	}
	return v, i, nil
}

// place puts a chunk of n samples from index start on channel ch's
// timeline: what is rejected (rej) and how many samples from its start
// (k0), the account of rejections and of a damaged gap before it, and the
// channel's next index.
func (r *Reader) place(ch int, start uint64, n int) (rej Reject, k0 uint64) {
	end := start + uint64(n)
	cs := &r.chans[ch]
	switch {
	case !cs.seen:
	case cs.restart:
		rej = RejectRestart
	case start >= cs.next:
	case start == 0:
		rej, cs.restart = RejectRestart, true
	case end <= cs.next:
		rej = RejectBackward
	default:
		rej, k0 = RejectOverlap, cs.next-start
	}
	if rej != 0 && rej != RejectOverlap {
		k0 = uint64(n)
	}
	if rej != 0 {
		r.acc.Rejected[rej].Chunks++
		r.acc.Rejected[rej].Samples += k0
	}
	if rej == 0 {
		r.hole(ch, start)
	}
	if rej == 0 || rej == RejectOverlap {
		cs.seen, cs.hole, cs.next = true, false, end
	}
	return rej, k0
}

// queueSamples feeds a placed chunk's values to the summary verifier and
// queues its rejected part (the first k0) and its samples.
func (r *Reader) queueSamples(ch int, start uint64, rej Reject, k0 uint64, v []units.Volts, i []units.Amps) {
	switch {
	case r.memo.mode == memoReuse:
		// An earlier pass checked the summaries: no statistics to keep.
	case rej == RejectRestart || rej == RejectBackward:
		r.verifier().spoil(ch) // the same indices, other samples: summaries cannot be matched
	default:
		verifyAdd(r.verifier(), ch, start+k0, v[k0:], i[k0:])
	}
	if k0 > 0 {
		r.rblock = meter.Block{Channel: ch, Start: start, V: v[:k0], I: i[:k0]}
		r.queue = append(r.queue, Record{Kind: KindRejected, Block: &r.rblock, Rejected: rej})
	}
	if k0 < uint64(len(v)) {
		r.block = meter.Block{Channel: ch, Start: start + k0, V: v[k0:], I: i[k0:]}
		r.queue = append(r.queue, Record{Kind: KindSamples, Block: &r.block})
	}
}

// verifier returns r's summary verifier, made at the first samples.
func (r *Reader) verifier() *verifier {
	if r.ver == nil {
		r.ver = newVerifier(r.nch)
	}
	return r.ver
}

// decodeF32 fills dst with the little-endian float32s in src (4 B each).
func decodeF32[T ~float64](dst []T, src []byte) {
	src = src[:4*len(dst)]
	for k := range dst {
		s := src[4*k : 4*k+4 : 4*k+4]
		dst[k] = T(math.Float32frombits(uint32(s[0]) | uint32(s[1])<<8 | uint32(s[2])<<16 | uint32(s[3])<<24))
	}
}

// decodeI16 fills dst with the little-endian int16 counts in src (2 B each)
// times lsb, rounded to float32 as the float32 encoding would store them.
func decodeI16[T ~float64](dst []T, src []byte, lsb float64) {
	src = src[:2*len(dst)]
	for k := range dst {
		s := src[2*k : 2*k+2 : 2*k+2]
		dst[k] = T(float32(float64(int16(uint16(s[0])|uint16(s[1])<<8)) * lsb))
	}
}

func (r *Reader) decodeSummary(p []byte) error {
	if len(p) < summaryFixed {
		return fmt.Errorf("summary payload of %d bytes", len(p))
	}
	s := &r.sum
	s.Channel, s.Per, s.Start = int(le.Uint16(p)), le.Uint32(p[4:]), le.Uint64(p[8:])
	s.Level, s.StdW, s.Count = 0, s.StdW[:0:0], s.Count[:0:0]
	n := int(le.Uint32(p[16:]))
	if s.Channel >= r.nch {
		return fmt.Errorf("summary for channel %d, header has %d", s.Channel, r.nch)
	}
	if s.Per == 0 {
		return fmt.Errorf("summary with 0 samples per point")
	}
	if n > MaxPayload || len(p) != summaryFixed+12*n {
		return fmt.Errorf("summary payload of %d bytes for %d points", len(p), n)
	}
	if cap(s.MinW) < n {
		s.MinW, s.MaxW, s.MeanW = make([]float32, n), make([]float32, n), make([]float32, n)
	}
	s.MinW, s.MaxW, s.MeanW = s.MinW[:n], s.MaxW[:n], s.MeanW[:n]
	d := p[summaryFixed:]
	for k := range n {
		s.MinW[k] = math.Float32frombits(le.Uint32(d[4*k:]))
		s.MaxW[k] = math.Float32frombits(le.Uint32(d[4*(n+k):]))
		s.MeanW[k] = math.Float32frombits(le.Uint32(d[4*(2*n+k):]))
	}
	return nil
}

func (r *Reader) decodeIO(p []byte) ([]IOEvent, error) {
	if len(p) < ioFixed {
		return nil, fmt.Errorf("I/O payload of %d bytes", len(p))
	}
	n := int(le.Uint32(p))
	if n > MaxPayload || len(p) != ioFixed+ioEventLen*n {
		return nil, fmt.Errorf("I/O payload of %d bytes for %d events", len(p), n)
	}
	r.ios = r.ios[:0]
	for k := range n {
		e := p[ioFixed+ioEventLen*k:]
		r.ios = append(r.ios, IOEvent{Port: int(int32(le.Uint32(e))), Op: Op(e[4]), Err: e[5]&1 != 0,
			Offset: int64(le.Uint64(e[8:])), Size: int32(le.Uint32(e[16:])),
			Issue: hostclock.Time(le.Uint64(e[24:])), Complete: hostclock.Time(le.Uint64(e[32:]))})
	}
	return r.ios, nil
}
