package hub

// Time integrity (issue 8 item 6): the hub's sample index is 64-bit on the
// wire (SAMPLES.first, MARK_ECHO.index, EVENT.index) and in the driver; a
// hub that has streamed for more than 2³² samples (5 days at 10 kS/s) must
// decode exactly, with exact gaps across the 32-bit boundaries.

import (
	"bytes"
	"reflect"
	"testing"
)

const (
	p32 = uint64(1) << 32
	p33 = uint64(1) << 33
)

func TestPayloadIndicesBeyond2To32RoundTrip(t *testing.T) {
	for _, idx := range []uint64{p32 - 1, p32, p32 + 1, p33 + 12345, 1<<63 + 7, ^uint64(0) - 1} {
		s := Samples{First: idx, Mask: 0x0003, Count: 1, Data: []byte{1, 2, 3, 4, 5, 6, 7, 8}}
		var got Samples
		if err := got.DecodeFromBytes(s.Append(nil)); err != nil || got.First != idx {
			t.Errorf("SAMPLES first %d: decoded %d, %v", idx, got.First, err)
		}
		m := MarkEcho{ID: 9, Index: idx}
		var gm MarkEcho
		if err := gm.DecodeFromBytes(m.Append(nil)); err != nil || gm != m {
			t.Errorf("MARK_ECHO index %d: decoded %+v, %v", idx, gm, err)
		}
		e := Event{Kind: EvOverrun, Index: idx, Value: 1 << 31}
		var ge Event
		if err := ge.DecodeFromBytes(e.Append(nil)); err != nil || ge != e {
			t.Errorf("EVENT index %d: decoded %+v, %v", idx, ge, err)
		}
	}
}

// TestStreamAcross2To32HasExactGaps decodes a stream whose indices start
// near 2³², lose a frame that straddles 2³², report an overrun that
// straddles 2³³, and then jump far ahead: every block must keep its index
// and every gap must be exact.
func TestStreamAcross2To32HasExactGaps(t *testing.T) {
	lost := bytes.Clone(samplesFrame(p32-5, 10)) // indices p32−5 … p32+4, lost to a bad CRC
	lost[30] ^= 1
	ov := Event{Kind: EvOverrun, Index: p33 - 3, Value: 8} // p33−3 … p33+4 overrun
	data := stream(header(),
		samplesFrame(p32-25, 10), samplesFrame(p32-15, 10), lost, samplesFrame(p32+5, 10),
		samplesFrame(p33-13, 10), AppendFrame(nil, TypeEvent, 0, ov.Append(nil)), samplesFrame(p33+5, 10),
		samplesFrame(1<<40, 10))
	var s gapSink
	_, st, err := DecodeStream(bytes.NewReader(data), &s)
	if err != nil {
		t.Fatal(err)
	}
	wantStarts := []uint64{p32 - 25, p32 - 15, p32 + 5, p33 - 13, p33 + 5, 1 << 40}
	if !reflect.DeepEqual(s.starts, wantStarts) {
		t.Fatalf("block starts %v\nwant %v", s.starts, wantStarts)
	}
	// The gaps and blocks must tile the index space. START restarts the
	// index at 0 (docs/hub-protocol.md), so the samples before the first
	// block are a gap too.
	gotGaps := s.gaps
	want := []struct{ start, count uint64 }{
		{0, p32 - 25},                     // never received
		{p32 - 5, 10},                     // the CRC-damaged frame
		{p32 + 15, p33 - 13 - (p32 + 15)}, // between blocks: more than 2³¹ samples
		{p33 - 3, 8},                      // the overrun across 2³³
		{p33 + 15, 1<<40 - (p33 + 15)},    // a jump far ahead
	}
	if len(gotGaps) != len(want) {
		t.Fatalf("gaps %+v\nwant %+v", gotGaps, want)
	}
	for k, w := range want {
		if g := gotGaps[k]; g.Start != w.start || g.Count != w.count || g.Channel != -1 {
			t.Errorf("gap %d = %+v, want start %d count %d on every channel", k, g, w.start, w.count)
		}
	}
	if gotGaps[1].Reason != "crc" || gotGaps[3].Reason != "overrun" {
		t.Errorf("gap reasons %q, %q; want crc, overrun", gotGaps[0].Reason, gotGaps[2].Reason)
	}
	var lostSum uint64
	for _, g := range s.gaps {
		lostSum += g.Count
	}
	if st.SamplesLost != lostSum {
		t.Errorf("Stats.SamplesLost %d, gaps add up to %d", st.SamplesLost, lostSum)
	}
}
