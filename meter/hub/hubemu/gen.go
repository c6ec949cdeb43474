package hubemu

import (
	"math"
	"math/rand"
	"slices"
	"time"

	"github.com/idlewatt/idlewatt/meter"
	"github.com/idlewatt/idlewatt/meter/hub"
	"github.com/idlewatt/idlewatt/units"
)

// The hub's rails and sensors: one INA226-class sensor per rail for the
// 16-bit format; a v2 hub's 20-bit format models an INA228-class sensor
// (20-bit current register) with the LSB chosen for 3 A peaks with
// headroom: 8 µA on 5 V (±4.19 A; 40 µW at 5 V), 10 µA on 12 V (±5.24 A).
// With Options.Rail3V3 every port has a third rail, 3.3 V for an M.2
// interposer: 50 mΩ, 50 µA/count (±1.64 A: an NVMe drive's 5 W active
// peak is 1.5 A), 20-bit 4 µA/count (13 µW at 3.3 V).
var allRails = [3]struct {
	rail       meter.Rail
	maxMV      uint16
	lsbNA      uint32 // nominal current LSB, 16-bit format
	shuntMicro uint32
	widePA     uint32 // nominal current LSB, 20-bit format
}{
	{meter.Rail5V, 6000, 50000, 20000, 8_000_000},     // 20 mΩ, 50 µA/count, ±1.638 A; 20-bit 8 µA/count
	{meter.Rail12V, 15000, 100000, 10000, 10_000_000}, // 10 mΩ, 100 µA/count, ±3.277 A; 20-bit 10 µA/count
	{meter.Rail3V3, 4000, 50000, 50000, 4_000_000},    // 50 mΩ, 50 µA/count, ±1.638 A; 20-bit 4 µA/count
}

const busLSBuV = 1250

type linkState uint8

const (
	linkUp linkState = iota
	linkStalled
	linkDown
)

// gen is the hub's protocol state and sample renderer, shared by the live
// emulator and WriteFast. It produces the bytes the hub sends, faults
// applied, into out. Not safe for concurrent use.
type gen struct {
	o    Options
	id   hub.Identity
	cal  hub.Calibration
	lsbI [16]float64 // 16-bit format's current LSB per channel, A
	lsbW [16]float64 // 20-bit format's
	rng  *rand.Rand
	link linkState
	// quiet: a v2 hub back on the host (re-enumerated) sends nothing until
	// the host's first frame, so no stale backlog delays the answers to
	// its IDENTIFY and RESEND; what it samples meanwhile is in the ring.
	quiet bool
	out   []byte // queued for the link
	busy  int    // bytes the live emulator's writer has in flight
	fb    []byte // frame scratch
	useq  byte   // unsolicited frame counter
	power [8]bool

	// lag: how far behind the clock the live emulator renders (the largest
	// meter.LateEvents RenderLag of its drives; 0 for most).
	lag time.Duration

	streaming bool
	rate      int
	mask      uint16
	portMask  uint8
	ports     []int
	next      uint64
	e0        time.Duration
	starts    int // streams started afresh

	// Protocol v2 state: the link's version and maximum frame (LINK), the
	// stream's format, and the ring of its last ringN sample sets of
	// setSize bytes each (set k at (k mod ringN) × setSize).
	linkVer  int
	maxFrame int
	format   uint8
	setSize  int
	ring     []byte
	ringN    uint64
	sets     []byte // scratch: one block's sample sets
	pk       hub.Packer
	pf       []byte // scratch: a block's packed frames, back to back
	pfEnd    []int  // where each frame of pf ends

	// Hostile frames still to send (Faults.Inject, sorted by At), the
	// count's jump (InjectCounterJump: added to every index sent), and
	// whether the next MARK gets a malformed echo.
	inject  []Injection
	jump    uint64
	badEcho bool

	lostFirst, lostCount uint64
	corruptIn, dropIn    int64
	v5, v12              []units.Volts
	i5, i12              []units.Amps
	v33                  []units.Volts
	i33                  []units.Amps
	// nr is the rails per port: 2, or 3 with the 3.3 V rail.
	nr int
}

func newGen(o Options) (*gen, error) {
	g := &gen{o: o, rng: rand.New(rand.NewSource(o.Seed)), linkVer: hub.ProtocolV1, maxFrame: hub.MaxFrame, format: hub.Format16}
	g.id = hub.Identity{Version: uint8(o.Protocol), Ports: uint8(o.Ports), Caps: hub.CapDevSlp | hub.CapPortPower | hub.CapMarks,
		BusLSBuV: busLSBuV, LinkBytesSec: uint32(o.Link), Model: o.Model, Firmware: o.Firmware, Serial: o.Serial}
	if o.Protocol >= 2 {
		g.id.MaxFrame, g.id.RingBytes, g.id.Formats = uint16(o.MaxFrame), uint32(max(o.RingBytes, 0)), o.Formats
	}
	all := allRails // a copy: the options' LSBs apply to this hub only
	rails := all[:2]
	if o.Rail3V3 {
		rails = all[:]
	}
	g.nr = len(rails)
	for _, d := range o.Drives {
		if l, ok := d.(meter.LateEvents); ok {
			g.lag = max(g.lag, l.RenderLag())
		}
	}
	for j := range rails {
		r := &rails[j]
		if o.CurrentLSB[j] > 0 {
			r.lsbNA = uint32(math.Round(float64(o.CurrentLSB[j]) * 1e9))
		}
		if o.WideLSB[j] > 0 {
			r.widePA = uint32(math.Round(float64(o.WideLSB[j]) * 1e12))
		}
		g.id.Rails = append(g.id.Rails, hub.RailDesc{Rail: r.rail, MaxMilliVolt: r.maxMV, CurrentLSBnA: r.lsbNA})
		if o.Protocol >= 2 {
			g.id.WideLSBpA = append(g.id.WideLSBpA, r.widePA)
		}
	}
	for _, r := range o.Rates {
		g.id.Rates = append(g.id.Rates, uint32(r))
	}
	for p := 1; p <= o.Ports; p++ {
		g.power[p-1] = true
		for j, r := range rails {
			// Each sensor's trimmed LSB differs from nominal by up to ±0.5 %,
			// as a calibrated hub's would, so hosts must use READ_CAL.
			trim := 1 + (g.rng.Float64()-0.5)*0.01
			lsb := uint32(float64(r.lsbNA) * trim)
			g.lsbI[(p-1)*g.nr+j] = float64(lsb) * 1e-9
			cal := uint16(0.00512 / (float64(lsb) * 1e-9 * float64(r.shuntMicro) * 1e-6))
			e := hub.CalEntry{Port: uint8(p), Rail: r.rail, CalReg: cal, ShuntMicroOhm: r.shuntMicro, CurrentLSBnA: lsb}
			if o.Protocol >= 2 {
				e.WideLSBpA = uint32(float64(r.widePA) * trim)
				g.lsbW[(p-1)*g.nr+j] = float64(e.WideLSBpA) * 1e-12
			}
			g.cal.Entries = append(g.cal.Entries, e)
		}
	}
	g.corruptIn, g.dropIn = g.geom(o.Faults.CorruptRate), g.geom(o.Faults.DropRate)
	g.inject = slices.Clone(o.Faults.Inject)
	return g, nil
}

// geom draws the number of bytes before the next fault at probability p.
func (g *gen) geom(p float64) int64 {
	if p <= 0 {
		return math.MaxInt64
	}
	if p >= 1 {
		return 0
	}
	// Log1p keeps a tiny p from rounding 1-p to 1 (a division by zero, and
	// an index of -2^63 that panicked for --drop-rate 1e-320); the draw is
	// capped so that adding it to a byte position cannot overflow.
	x := math.Log(1-g.rng.Float64()) / math.Log1p(-p)
	if !(x < 1<<62) {
		return 1 << 62
	}
	return int64(x)
}

// setLink applies the stall and disconnect schedule at host elapsed time d.
func (g *gen) setLink(d time.Duration) {
	in := func(every, dur time.Duration) bool { return every > 0 && dur > 0 && d >= every && d%every < dur }
	f := g.o.Faults
	s := linkUp
	switch {
	case in(f.DisconnectEvery, f.DisconnectFor):
		s = linkDown
	case in(f.StallEvery, f.StallFor):
		s = linkStalled
	}
	g.setState(s)
}

// forceDown takes the link down whatever the schedule says (Unplug).
func (g *gen) forceDown() { g.setState(linkDown) }

func (g *gen) setState(s linkState) {
	if s == linkDown && g.link != linkDown {
		g.out = g.out[:0] // what was in flight is lost with the link
	}
	g.link = s
}

// fits reports whether n more bytes fit the hub's output buffer.
func (g *gen) fits(n int) bool { return len(g.out)+g.busy+n <= g.o.BufferBytes }

// frame builds a clean frame in fb with payload built by build.
func (g *gen) frame(t hub.Type, seq byte, build func([]byte) []byte) []byte {
	b, at := hub.BeginFrame(g.fb[:0], t, seq)
	b = build(b)
	g.fb = hub.FinishFrame(b, at)
	return g.fb
}

// put queues a frame with the configured faults; with the link down it
// is lost on the way (the host sees the gap by index).
func (g *gen) put(fr []byte) {
	if g.link == linkDown || g.quiet {
		return
	}
	f := g.o.Faults
	if f.TruncateRate > 0 && g.rng.Float64() < f.TruncateRate {
		fr = fr[:1+g.rng.Intn(len(fr)-1)]
	}
	start := len(g.out)
	n := int64(len(fr))
	if g.dropIn >= n {
		g.out = append(g.out, fr...)
		g.dropIn -= n
	} else {
		prev := int64(0)
		for g.dropIn < n {
			g.out = append(g.out, fr[prev:g.dropIn]...)
			prev = g.dropIn + 1
			g.dropIn = prev + g.geom(f.DropRate)
		}
		g.out = append(g.out, fr[prev:]...)
		g.dropIn -= n
	}
	n = int64(len(g.out) - start)
	for g.corruptIn < n {
		g.out[int64(start)+g.corruptIn] ^= byte(1 + g.rng.Intn(255))
		g.corruptIn += 1 + g.geom(f.CorruptRate)
	}
	g.corruptIn -= n
}

// putClean queues a frame without faults (WriteFast's header frames).
func (g *gen) putClean(fr []byte) { g.out = append(g.out, fr...) }

// due returns the number of samples taken by emulator time now.
func (g *gen) due(now time.Duration) uint64 {
	if now <= g.e0 {
		return 0
	}
	d := uint64(now - g.e0)
	r := uint64(g.rate)
	return d/1e9*r + d%1e9*r/1e9
}

// sampleTime is the emulator time of sample idx.
func (g *gen) sampleTime(idx uint64) time.Duration {
	r := uint64(g.rate)
	return g.e0 + time.Duration(idx/r*1e9+idx%r*1e9/r)
}

// markIndex is MARK_ECHO's index for a MARK that arrived at emulator time
// now: the sample whose time (index/rate after START) is nearest, so that
// a host that takes the echo's index as the MARK's time is right on
// average. (The sample in progress, due(now), is on average half a sample
// earlier than the arrival: every clock fit through it was 0.5/rate late.)
func (g *gen) markIndex(now time.Duration) uint64 {
	if !g.streaming || now <= g.e0 {
		return g.index(now)
	}
	d, r := uint64(now-g.e0), uint64(g.rate)
	return d/1e9*r + (d%1e9*r+5e8)/1e9
}

// index is the index of the next sample to be taken.
func (g *gen) index(now time.Duration) uint64 {
	if g.streaming {
		return g.due(now)
	}
	return g.next
}

func (g *gen) start(rate int, portMask, format uint8, now time.Duration) {
	g.streaming, g.rate, g.next, g.e0, g.mask, g.ports, g.portMask = true, rate, 0, now, 0, g.ports[:0], portMask
	g.lostCount = 0
	g.starts++
	for p := 1; p <= g.o.Ports; p++ {
		if portMask&(1<<(p-1)) != 0 {
			g.ports = append(g.ports, p)
			g.mask |= (1<<g.nr - 1) << (g.nr * (p - 1))
		}
	}
	g.format = hub.Format16
	if format != 0 {
		g.format = format
	}
	g.setSize = g.nr * len(g.ports) * hub.FormatWidth(g.format)
	g.ring, g.ringN = nil, 0
	if g.linkVer >= 2 && g.o.RingBytes > 0 {
		g.ringN = uint64(g.o.RingBytes / g.setSize)
		g.ring = make([]byte, int(g.ringN)*g.setSize)
	}
}

// ackStart is the ACK of the START s that started the stream.
func (g *gen) ackStart(s hub.Start) hub.Ack {
	a := hub.Ack{Cmd: hub.TypeStart, Rate: s.Rate, ChanMask: g.mask}
	if s.Format != 0 {
		a.Format, a.RingSamples = g.format, uint32(min(g.ringN, 1<<32-1))
	}
	return a
}

// render queues every sample due by emulator time now.
func (g *gen) render(now time.Duration) {
	if !g.streaming {
		return
	}
	// Report an overrun once the buffer has room again: lost blocks keep
	// counting until then, so one EVENT covers the whole loss.
	if g.link != linkStalled && g.lostCount > 0 && g.fits(g.o.BufferBytes/4) {
		ev := hub.Event{Kind: hub.EvOverrun, Index: g.wire(g.lostFirst), Value: uint32(g.lostCount)}
		g.put(g.frame(hub.TypeEvent, g.nextSeq(), ev.Append))
		g.lostCount = 0
	}
	target := g.due(now)
	per := hub.BlockSamples(g.rate, g.nr*len(g.ports))
	if g.linkVer >= 2 {
		per = max(g.rate/hub.BlockPeriodDivisor, 1) // then split into frames of maxFrame
	}
	for g.next < target {
		n := int(min(target-g.next, uint64(per)))
		g.block(n)
	}
}

func (g *gen) nextSeq() byte { g.useq++; return g.useq - 1 }

// render3V3 renders the 3.3 V rail of n samples from t0 for each streamed
// port (with Options.Rail3V3): a meter.SimDrive3V3 loads it, any other
// drive leaves it at 3.3 V, 0 A; a powered-off port reads 0 V, 0 A.
func (g *gen) render3V3(t0 time.Duration, n int) {
	if g.nr < 3 {
		return
	}
	if m := len(g.ports) * n; cap(g.i33) < m {
		g.v33, g.i33 = make([]units.Volts, m), make([]units.Amps, m)
	}
	for j, p := range g.ports {
		v, i := g.v33[j*n:(j+1)*n], g.i33[j*n:(j+1)*n]
		d, ok := g.o.Drives[p-1].(meter.SimDrive3V3)
		switch {
		case !g.power[p-1]:
			clear(v)
			clear(i)
		case ok:
			d.Render3V3(t0, units.Hertz(g.rate), v, i)
		default:
			for k := range v {
				v[k], i[k] = 3.3, 0
			}
		}
	}
}

// block renders, quantises and queues n samples from g.next: one SAMPLES
// frame on a v1 link, SAMPLES2 frames of at most maxFrame bytes on a v2
// one; the sample sets also go into the ring, sent or not.
func (g *gen) block(n int) {
	if cap(g.i5) < len(g.ports)*n {
		m := len(g.ports) * n
		g.v5, g.i5, g.v12, g.i12 = make([]units.Volts, m), make([]units.Amps, m), make([]units.Volts, m), make([]units.Amps, m)
	}
	t0 := g.sampleTime(g.next)
	for j, p := range g.ports {
		v5, i5, v12, i12 := g.v5[j*n:(j+1)*n], g.i5[j*n:(j+1)*n], g.v12[j*n:(j+1)*n], g.i12[j*n:(j+1)*n]
		g.o.Drives[p-1].Render(t0, units.Hertz(g.rate), v5, i5, v12, i12)
		if !g.power[p-1] {
			clear(v5)
			clear(i5)
			clear(v12)
			clear(i12)
		}
	}
	g.render3V3(t0, n)
	var over [16]float64
	b := g.sets[:0]
	for k := range n {
		for j, p := range g.ports {
			c := (p - 1) * g.nr
			b = g.appendReading(b, g.v5[j*n+k], g.i5[j*n+k], c, &over[c])
			b = g.appendReading(b, g.v12[j*n+k], g.i12[j*n+k], c+1, &over[c+1])
			if g.nr == 3 {
				b = g.appendReading(b, g.v33[j*n+k], g.i33[j*n+k], c+2, &over[c+2])
			}
		}
	}
	g.sets = b
	first := g.next
	g.next += uint64(n)
	if g.ringN > 0 {
		for k := range n {
			at := int((first+uint64(k))%g.ringN) * g.setSize
			copy(g.ring[at:at+g.setSize], b[k*g.setSize:(k+1)*g.setSize])
		}
	}
	due := g.dueInjections(first, n)
	defer g.injectAfter(due)
	// A packed block's size is known once it is packed: pack it, then
	// keep it or (with its sequence numbers) let it go.
	packed, seq0, size := g.packed(), g.useq, 0
	if packed {
		size = g.packFrames(first, n, b, 0, 0)
	} else {
		size = g.blockBytes(n)
	}
	if g.lostCount > 0 || g.link != linkDown && !g.fits(size) {
		g.useq = seq0
		if g.lostCount == 0 {
			g.lostFirst = first
		}
		g.lostCount += uint64(n)
		return
	}
	switch {
	case g.injectBlock(due, first, n, b, seq0):
	case packed:
		g.putPacked()
	default:
		g.sendSets(first, n, b, 0, 0)
	}
	for c, a := range over {
		if a != 0 {
			ev := hub.Event{Kind: hub.EvOverCurrent, Port: uint8(c/g.nr + 1), Index: g.wire(first), Value: uint32(min(math.Abs(a)*1e6, math.MaxUint32))}
			g.put(g.frame(hub.TypeEvent, g.nextSeq(), ev.Append))
		}
	}
}

// perFrame is the sample sets per frame on the link.
func (g *gen) perFrame() int {
	if g.linkVer < 2 {
		return hub.BlockSamples(g.rate, g.nr*len(g.ports))
	}
	return hub.BlockSamples2(g.nr*len(g.ports), hub.FormatWidth(g.format), g.maxFrame)
}

// blockBytes is what n sample sets cost on the link.
func (g *gen) blockBytes(n int) int {
	per := g.perFrame()
	hdr := hub.HeaderLen + hub.TrailerLen + 12
	if g.linkVer >= 2 {
		hdr += 2
	}
	return (n+per-1)/per*hdr + n*g.setSize
}

// packed reports whether the stream's frames are packed (format 3).
func (g *gen) packed() bool { return g.linkVer >= 2 && g.format == hub.FormatPacked }

// packFrames packs sample sets sets (n of them, from index first) into
// SAMPLES2 frames of format 3 of at most maxFrame bytes (each at least one
// set), back to back in pf; flags and seq as for sendSets. It returns
// their bytes.
func (g *gen) packFrames(first uint64, n int, sets []byte, flags uint8, seq byte) int {
	g.pf, g.pfEnd = g.pf[:0], g.pfEnd[:0]
	maxPayload := g.maxFrame - hub.HeaderLen - hub.TrailerLen
	for k := 0; k < n; {
		s := seq
		if flags&hub.SamplesResent == 0 {
			s = g.nextSeq()
		}
		b, at := hub.BeginFrame(g.pf, hub.TypeSamples2, s)
		var m int
		b, m = g.pk.Append(b, hub.Samples{First: g.wire(first + uint64(k)), Mask: g.mask, Flags: flags}, sets[k*g.setSize:], n-k, maxPayload)
		g.pf = hub.FinishFrame(b, at)
		g.pfEnd = append(g.pfEnd, len(g.pf))
		k += m
	}
	return len(g.pf)
}

// putPacked queues the frames packFrames made.
func (g *gen) putPacked() {
	at := 0
	for _, end := range g.pfEnd {
		g.put(g.pf[at:end])
		at = end
	}
}

// sendSets queues sample sets sets (n of them, from index first) as
// frames: SAMPLES on a v1 link; SAMPLES2 with flags on a v2 one, with
// sequence number seq if flags has SamplesResent (the RESEND's), else the
// unsolicited counter.
func (g *gen) sendSets(first uint64, n int, sets []byte, flags uint8, seq byte) {
	per := g.perFrame()
	for k := 0; k < n; k += per {
		m := min(per, n-k)
		hdr := hub.Samples{First: g.wire(first + uint64(k)), Mask: g.mask, Count: m, Flags: flags, Format: g.format}
		data := sets[k*g.setSize : (k+m)*g.setSize]
		if g.linkVer < 2 {
			g.put(g.frame(hub.TypeSamples, g.nextSeq(), func(b []byte) []byte { return append(hdr.AppendHeader(b), data...) }))
			continue
		}
		s := seq
		if flags&hub.SamplesResent == 0 {
			s = g.nextSeq()
		}
		g.put(g.frame(hub.TypeSamples2, s, func(b []byte) []byte { return append(hdr.AppendHeader2(b), data...) }))
	}
}

// resend answers RESEND r (sequence seq): EXPIRED for what left the ring,
// RESENT SAMPLES2 frames for the rest.
func (g *gen) resend(seq byte, r hub.Resend) {
	first, end := r.First, r.First+uint64(r.Count)
	oldest := uint64(0)
	if g.next > g.ringN {
		oldest = g.next - g.ringN
	}
	if first < oldest {
		x := hub.Expired{First: g.wire(first), Count: uint32(min(end, oldest) - first)}
		g.put(g.frame(hub.TypeExpired, seq, x.Append))
		first = min(end, oldest)
	}
	if first >= end {
		return
	}
	n := int(end - first)
	if !g.packed() && !g.fits(g.blockBytes(n)) {
		return // no room now: the host asks again
	}
	b := g.sets[:0]
	for k := range n {
		at := int((first+uint64(k))%g.ringN) * g.setSize
		b = append(b, g.ring[at:at+g.setSize]...)
	}
	g.sets = b
	if g.packed() {
		if g.packFrames(first, n, b, hub.SamplesResent, seq); g.fits(len(g.pf)) {
			g.putPacked()
		}
		return
	}
	g.sendSets(first, n, b, hub.SamplesResent, seq)
}

// appendReading quantises one reading of channel c as the sensor would:
// bus voltage in 1.25 mV counts, current in signed counts of the
// channel's LSB for the stream's format (16-bit INA226, 20-bit INA228),
// clamped; a clamped current is remembered in over for an OVER_CURRENT
// event.
func (g *gen) appendReading(b []byte, v units.Volts, i units.Amps, c int, over *float64) []byte {
	bus := math.Round(float64(v) / (busLSBuV * 1e-6))
	bus = max(0, min(bus, 32767))
	b = append(b, byte(uint16(bus)), byte(uint16(bus)>>8))
	if g.format != hub.Format16 {
		cur := math.Round(float64(i) / g.lsbW[c])
		if cur > 1<<19-1 || cur < -(1<<19) {
			*over = float64(i)
			cur = max(-(1 << 19), min(cur, 1<<19-1))
		}
		return hub.AppendCur20(b, int32(cur))
	}
	cur := math.Round(float64(i) / g.lsbI[c])
	if cur > 32767 || cur < -32768 {
		*over = float64(i)
		cur = max(-32768, min(cur, 32767))
	}
	return append(b, byte(uint16(int16(cur))), byte(uint16(int16(cur))>>8))
}

func (g *gen) nak(seq byte, cmd hub.Type, r hub.Reason) {
	n := hub.Nak{Cmd: cmd, Reason: r}
	g.put(g.frame(hub.TypeNak, seq, n.Append))
}

func (g *gen) ack(seq byte, a hub.Ack) { g.put(g.frame(hub.TypeAck, seq, a.Append)) }

// handle answers one host command received at emulator time now.
func (g *gen) handle(f *hub.Frame, now time.Duration) {
	if f.Type >= 0x80 {
		return // a hub→host type: not addressed to the hub
	}
	if !g.admit(f) {
		return
	}
	p := f.Payload
	// Samples before the command see the state before it (a drive that
	// renders with a lag keeps the states between).
	g.render(now - g.lag)
	switch f.Type {
	case hub.TypeIdentify:
		g.put(g.frame(hub.TypeIdentity, f.Seq, g.id.Append))
	case hub.TypeReadCal:
		g.cal.Wide = g.linkVer >= 2
		g.put(g.frame(hub.TypeCal, f.Seq, g.cal.Append))
	case hub.TypeReadAccuracy:
		if len(g.o.Accuracy) == 0 {
			g.nak(f.Seq, f.Type, hub.ReasonUnknownCommand) // a hub that states none
			return
		}
		acc := hub.Accuracy{Entries: g.o.Accuracy}
		g.put(g.frame(hub.TypeAccuracy, f.Seq, acc.Append))
	case hub.TypeLink:
		g.handleLink(f)
	case hub.TypeResend:
		g.handleResend(f)
	case hub.TypePing:
		g.ack(f.Seq, hub.Ack{Cmd: hub.TypePing, Echo: p})
	case hub.TypeStop:
		g.render(now) // every sample taken before the STOP, the lagged ones too
		g.streaming = false
		g.ack(f.Seq, hub.Ack{Cmd: hub.TypeStop})
	case hub.TypeStart:
		g.handleStart(f, now)
	case hub.TypeDevSlp, hub.TypePower:
		g.handlePin(f, now)
	case hub.TypeMark:
		g.handleMark(f, now)
	default:
		g.nak(f.Seq, f.Type, hub.ReasonUnknownCommand)
	}
}

// admit refuses (NAK) a command this hub's protocol version or the link
// does not know, or of the wrong length; false when it did.
func (g *gen) admit(f *hub.Frame) bool {
	p := f.Payload
	if g.o.Protocol < 2 && (f.Type == hub.TypeLink || f.Type == hub.TypeResend) {
		g.nak(f.Seq, f.Type, hub.ReasonUnknownCommand) // a v1 hub does not know them
		return false
	}
	if f.Type == hub.TypeResend && g.linkVer < 2 {
		g.nak(f.Seq, f.Type, hub.ReasonNotNegotiated)
		return false
	}
	startLen := 6
	if g.linkVer >= 2 {
		startLen = 8
	}
	want := map[hub.Type]int{hub.TypeIdentify: 0, hub.TypeStart: startLen, hub.TypeStop: 0, hub.TypeDevSlp: 2,
		hub.TypePower: 2, hub.TypeMark: 4, hub.TypeReadCal: 0, hub.TypeReadAccuracy: 0, hub.TypeLink: 4, hub.TypeResend: 12}
	if n, ok := want[f.Type]; ok && len(p) != n || f.Type == hub.TypePing && len(p) > 32 {
		g.nak(f.Seq, f.Type, hub.ReasonBadLength)
		return false
	}
	return true
}

// handleLink negotiates the link's version and maximum frame.
func (g *gen) handleLink(f *hub.Frame) {
	var l hub.Link
	l.DecodeFromBytes(f.Payload) //nolint:errcheck // length checked in admit
	if l.Version < 1 || int(l.Version) > g.o.Protocol || l.MaxFrame < hub.MinMaxFrame || int(l.MaxFrame) > hub.MaxFrame {
		g.nak(f.Seq, f.Type, hub.ReasonBadValue)
		return
	}
	if g.streaming && int(l.Version) != g.linkVer {
		g.nak(f.Seq, f.Type, hub.ReasonStreaming) // the stream's frames are of the link's version
		return
	}
	g.linkVer = int(l.Version)
	g.maxFrame = hub.MaxFrame
	if g.linkVer >= 2 {
		g.maxFrame = min(int(l.MaxFrame), g.o.MaxFrame)
	}
	g.ack(f.Seq, hub.Ack{Cmd: hub.TypeLink, Version: l.Version, MaxFrame: uint16(g.maxFrame)})
}

// handleResend sends again the samples asked for from the ring.
func (g *gen) handleResend(f *hub.Frame) {
	var r hub.Resend
	err := r.DecodeFromBytes(f.Payload)
	r.First -= g.jump // the host asks in the count it was sent
	switch {
	case err != nil || r.First+uint64(r.Count) > g.next || r.First+uint64(r.Count) < r.First:
		// Not taken yet (the ring answers after STOP too, until the next START).
		g.nak(f.Seq, f.Type, hub.ReasonNeverSent)
	case g.ringN == 0:
		g.nak(f.Seq, f.Type, hub.ReasonNoRing)
	default:
		g.resend(f.Seq, r)
	}
}

// handleStart starts streaming, or resumes a stream a host lost.
func (g *gen) handleStart(f *hub.Frame, now time.Duration) {
	var s hub.Start
	if err := s.DecodeFromBytes(f.Payload); err != nil {
		// The length is checked in admit: the one error left is an
		// 8-byte (v2) START with sample format 0.
		g.nak(f.Seq, f.Type, hub.ReasonBadFormat)
		return
	}
	if s.Flags&hub.StartResume != 0 && g.streaming && s.Rate == uint32(g.rate) && s.PortMask == g.portMask &&
		(s.Format == 0 || s.Format == g.format) {
		// A host back from a lost link: keep streaming and counting.
		g.ack(f.Seq, g.ackStart(s))
		return
	}
	if r := g.checkStart(s); r != 0 {
		g.nak(f.Seq, f.Type, r)
		return
	}
	g.start(int(s.Rate), s.PortMask, s.Format, now)
	g.ack(f.Seq, g.ackStart(s))
}

// handlePin sets a port's DEVSLP pin or power, and reports it as an event.
func (g *gen) handlePin(f *hub.Frame, now time.Duration) {
	p := f.Payload
	port, v := int(p[0]), p[1]
	switch {
	case port < 1 || port > g.o.Ports:
		g.nak(f.Seq, f.Type, hub.ReasonBadPort)
		return
	case v > 1:
		g.nak(f.Seq, f.Type, hub.ReasonBadValue)
		return
	}
	kind := uint8(hub.EvDevSlp)
	if f.Type == hub.TypeDevSlp {
		g.o.Drives[port-1].SetDevSlp(now, v == 1)
	} else {
		kind = hub.EvPortPower
		g.power[port-1] = v == 1
		g.o.Drives[port-1].SetPower(now, v == 1)
	}
	g.ack(f.Seq, hub.Ack{Cmd: f.Type})
	ev := hub.Event{Kind: kind, Port: uint8(port), Index: g.wire(g.index(now)), Value: uint32(v)}
	g.put(g.frame(hub.TypeEvent, g.nextSeq(), ev.Append))
}

// handleMark echoes a mark with the index of the sample it arrived at.
func (g *gen) handleMark(f *hub.Frame, now time.Duration) {
	if !g.streaming {
		g.nak(f.Seq, f.Type, hub.ReasonNotStreaming)
		return
	}
	me := hub.MarkEcho{ID: le32(f.Payload), Index: g.wire(g.markIndex(now))}
	if g.badEcho { // InjectMarkEchoShort
		g.badEcho = false
		g.put(g.frame(hub.TypeMarkEcho, f.Seq, func(b []byte) []byte { return me.Append(b)[:len(b)+11] }))
		return
	}
	g.put(g.frame(hub.TypeMarkEcho, f.Seq, me.Append))
}

func le32(p []byte) uint32 {
	return uint32(p[0]) | uint32(p[1])<<8 | uint32(p[2])<<16 | uint32(p[3])<<24
}

func (g *gen) checkStart(s hub.Start) hub.Reason {
	switch {
	case g.streaming:
		return hub.ReasonStreaming
	case s.PortMask == 0 || int(s.PortMask)>>g.o.Ports != 0:
		return hub.ReasonBadPort
	}
	ok := false
	for _, r := range g.id.Rates {
		ok = ok || r == s.Rate
	}
	if !ok {
		return hub.ReasonBadRate
	}
	if s.Format != 0 && (hub.FormatWidth(s.Format) == 0 || g.id.Formats&(1<<(s.Format-1)) == 0) {
		return hub.ReasonBadFormat
	}
	chans := 0
	for p := range g.o.Ports {
		if s.PortMask&(1<<p) != 0 {
			chans += g.nr
		}
	}
	fits := hub.FitsLink(int(s.Rate), chans, g.o.Link)
	if s.Format != 0 {
		fits = hub.FitsLink2(int(s.Rate), chans, s.Format, g.maxFrame, g.o.Link)
	}
	if !fits {
		return hub.ReasonBandwidth
	}
	return 0
}
