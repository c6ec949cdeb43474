package hubemu

import (
	"fmt"
	"math/bits"
	"slices"

	"github.com/idlewatt/idlewatt/meter/hub"
)

// Injected hostile frames (Faults.Inject): frames with a good CRC whose
// payload the protocol does not allow, sent mid-stream the way a buggy
// firmware would, so tests can check that a host drops and counts each
// without ending the stream (docs/hub-protocol.md § Host behaviour).

// InjectKind is a kind of hostile frame.
type InjectKind uint8

// Kinds of hostile frames. Those that replace a block lose its samples on
// the wire; a v2 hub's ring still holds them, so a RESEND gets them back.
const (
	// InjectEventShort: an extra EVENT of 15 bytes (16 is the only length).
	InjectEventShort InjectKind = iota + 1
	// InjectEventKind: an extra EVENT of kind 0xEE, which the protocol
	// does not define.
	InjectEventKind
	// InjectMarkEchoShort: the answer to the next MARK is a MARK_ECHO of 11
	// bytes (12 is the only length), in place of the real echo.
	InjectMarkEchoShort
	// InjectSamplesShort: in place of the block, one sample frame of the
	// link's kind (SAMPLES on v1, SAMPLES2 on v2) whose data is one byte
	// short of its count.
	InjectSamplesShort
	// InjectSamplesOnV2: in place of the block, a v1 SAMPLES frame on a v2
	// link (only on one).
	InjectSamplesOnV2
	// InjectForeignPorts: in place of the block, a well-formed sample
	// frame for the channels of a port that START did not start.
	InjectForeignPorts
	// InjectUnknownType: an extra frame of type 0x9F, which no version
	// defines.
	InjectUnknownType
	// InjectCounterJump: from the next block on, the hub's sample count
	// jumps to Injection.To (near 2⁶⁴, say) and counts on from there,
	// wrapping past 2⁶⁴; events, marks and RESEND use the jumped count.
	InjectCounterJump
	numInjectKinds
)

func (k InjectKind) String() string {
	switch k {
	case InjectEventShort:
		return "event-short"
	case InjectEventKind:
		return "event-kind"
	case InjectMarkEchoShort:
		return "mark-echo-short"
	case InjectSamplesShort:
		return "samples-short"
	case InjectSamplesOnV2:
		return "samples-on-v2"
	case InjectForeignPorts:
		return "foreign-ports"
	case InjectUnknownType:
		return "unknown-type"
	case InjectCounterJump:
		return "counter-jump"
	}
	return fmt.Sprintf("inject(%d)", uint8(k))
}

// Injection is one hostile frame, sent once.
type Injection struct {
	// At is a sample index: the injection goes with the first block that
	// reaches it (the block holding sample At, or the first one after).
	At   uint64
	Kind InjectKind
	// To is InjectCounterJump's new count.
	To uint64
}

// validateInject checks o.Faults.Inject and sorts a copy by At.
func (o *Options) validateInject() error {
	inj := slices.Clone(o.Faults.Inject)
	for _, in := range inj {
		if in.Kind < 1 || in.Kind >= numInjectKinds {
			return fmt.Errorf("hubemu: injection kind %d", uint8(in.Kind))
		}
		if in.Kind == InjectSamplesOnV2 && o.Protocol < 2 {
			return fmt.Errorf("hubemu: %s needs a v2 hub", in.Kind)
		}
	}
	slices.SortStableFunc(inj, func(a, b Injection) int {
		switch {
		case a.At < b.At:
			return -1
		case a.At > b.At:
			return 1
		}
		return 0
	})
	o.Faults.Inject = inj
	return nil
}

// wire is sample index i as the hub sends it: shifted by a counter jump.
func (g *gen) wire(i uint64) uint64 { return i + g.jump }

// dueInjections takes the injections a block of n samples from first
// reaches.
func (g *gen) dueInjections(first uint64, n int) []Injection {
	k := 0
	for k < len(g.inject) && g.inject[k].At < first+uint64(n) {
		k++
	}
	due := g.inject[:k:k]
	g.inject = g.inject[k:]
	return due
}

// injectBlock sends the block from first (n sets in sets) with the due
// injections: it reports whether one of them replaced the block's frames
// (then nothing else of the block was sent).
func (g *gen) injectBlock(due []Injection, first uint64, n int, sets []byte, seq0 byte) bool {
	for _, in := range due {
		switch in.Kind {
		case InjectSamplesShort, InjectSamplesOnV2, InjectForeignPorts:
			g.useq = seq0 // the block's frames (packed already) are not sent
			g.put(g.hostileBlock(in.Kind, first, n, sets))
			return true
		}
	}
	return false
}

// injectAfter sends the due injections that come after the block (extra
// frames, a counter jump, the next mark's bad echo).
func (g *gen) injectAfter(due []Injection) {
	for _, in := range due {
		switch in.Kind {
		case InjectEventShort:
			ev := hub.Event{Kind: hub.EvDevSlp, Port: 1, Index: g.wire(g.next), Value: 1}
			g.put(g.frame(hub.TypeEvent, g.nextSeq(), func(b []byte) []byte { return ev.Append(b)[:len(b)+15] }))
		case InjectEventKind:
			ev := hub.Event{Kind: 0xEE, Port: 1, Index: g.wire(g.next), Value: 1}
			g.put(g.frame(hub.TypeEvent, g.nextSeq(), ev.Append))
		case InjectUnknownType:
			g.put(g.frame(0x9F, g.nextSeq(), func(b []byte) []byte { return append(b, "not a frame this host knows"...) }))
		case InjectMarkEchoShort:
			g.badEcho = true
		case InjectCounterJump:
			g.jump = in.To - g.next
		}
	}
}

// hostileBlock is a sample frame standing in for the block from first: one
// frame's worth of its samples (at most what fits the link's frame), made
// malformed as kind says.
func (g *gen) hostileBlock(kind InjectKind, first uint64, n int, sets []byte) []byte {
	per := max(1, min(n, g.perFrame()))
	mask := g.mask
	data := sets[:per*g.setSize]
	if kind == InjectForeignPorts {
		mask = g.foreignMask()
		data = make([]byte, per*bits.OnesCount16(mask)*hub.FormatWidth(g.format)) // 0 V, 0 A: well-formed, of another port
	}
	seq := g.nextSeq()
	hdr := hub.Samples{First: g.wire(first), Mask: mask, Count: per, Format: g.format}
	switch {
	case kind == InjectSamplesOnV2 || g.linkVer < 2:
		if g.format != hub.Format16 {
			data = make([]byte, per*bits.OnesCount16(mask)*4) // v1's layout, of the right length
		}
		if kind == InjectSamplesShort {
			data = data[:len(data)-1]
		}
		return g.frame(hub.TypeSamples, seq, func(b []byte) []byte { return append(hdr.AppendHeader(b), data...) })
	case g.format == hub.FormatPacked:
		maxPayload := g.maxFrame - hub.HeaderLen - hub.TrailerLen
		b, at := hub.BeginFrame(nil, hub.TypeSamples2, seq)
		b, _ = g.pk.Append(b, hub.Samples{First: hdr.First, Mask: mask}, data, per, maxPayload)
		if kind == InjectSamplesShort {
			b = b[:len(b)-1]
		}
		return hub.FinishFrame(b, at)
	}
	if kind == InjectSamplesShort {
		data = data[:len(data)-1]
	}
	return g.frame(hub.TypeSamples2, seq, func(b []byte) []byte { return append(hdr.AppendHeader2(b), data...) })
}

// foreignMask is the channel mask of one port the stream did not start,
// or, when every channel a mask can name streams, of the first channel
// alone (a block missing started channels).
func (g *gen) foreignMask() uint16 {
	for p := 1; p <= 16/g.nr; p++ {
		if g.portMask&(1<<(p-1)) == 0 {
			return (1<<g.nr - 1) << (g.nr * (p - 1))
		}
	}
	return 1
}
