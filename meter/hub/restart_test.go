package hub

// Backward sample indices (issue 13): a repeat of the block just delivered
// is a duplicate, counted and dropped; an index further back is the hub
// counting again, a new epoch that continues the timeline after a
// "restart" gap. Nothing is dropped silently.

import (
	"bytes"
	"reflect"
	"testing"

	"github.com/idlewatt/idlewatt/hostclock"
	"github.com/idlewatt/idlewatt/meter"
)

// timelineSink records what the decoder delivers on channel 0.
type timelineSink struct {
	blocks [][2]uint64 // start, count
	gaps   []meter.Gap
	events []meter.Event
}

func (s *timelineSink) Samples(b *meter.Block) error {
	if b.Channel == 0 {
		s.blocks = append(s.blocks, [2]uint64{b.Start, uint64(b.Len())})
	}
	return nil
}
func (s *timelineSink) Gap(g meter.Gap) error     { s.gaps = append(s.gaps, g); return nil }
func (s *timelineSink) Mark(meter.MarkEcho) error { return nil }
func (s *timelineSink) Event(e meter.Event) error { s.events = append(s.events, e); return nil }

// delivered is the number of samples delivered on channel 0.
func (s *timelineSink) delivered() (n uint64) {
	for _, b := range s.blocks {
		n += b[1]
	}
	return n
}

// TestIndexRestartIsANewEpoch is the case: a hub streaming 0–99
// whose index restarts at 0 (a second START) and runs to 99 again. Before,
// the second half was dropped as duplicates without a word (100 of 200
// samples kept, no gap). Now every sample is kept, the new count continues
// at 100, and the restart is counted and is an event.
func TestIndexRestartIsANewEpoch(t *testing.T) {
	var frames [][]byte
	for first := uint64(0); first < 100; first += 10 {
		frames = append(frames, samplesFrame(first, 10))
	}
	for first := uint64(0); first < 100; first += 10 {
		frames = append(frames, samplesFrame(first, 10))
	}
	var s timelineSink
	_, st, err := DecodeStream(bytes.NewReader(stream(header(), stream(frames...))), &s)
	if err != nil {
		t.Fatal(err)
	}
	if n := s.delivered(); n != 200 || s.blocks[10] != [2]uint64{100, 10} || s.blocks[19] != [2]uint64{190, 10} {
		t.Fatalf("%d samples delivered, blocks %v", n, s.blocks)
	}
	// A replay has no host clock: the new epoch follows at once, no gap.
	if len(s.gaps) != 0 || st.Restarts != 1 || st.Duplicates != 0 || st.SamplesLost != 0 {
		t.Fatalf("gaps %+v, stats %+v", s.gaps, st)
	}
	want := []meter.Event{{Kind: meter.EventRestart, Index: 100, Value: 0}}
	if !reflect.DeepEqual(s.events, want) {
		t.Fatalf("events %+v, want %+v", s.events, want)
	}
}

// TestRestartWithLostBlock: the first block after the restart (0–9) is
// lost to a CRC error, so the new count is first seen at 10: samples 0–9
// of the new epoch are a "restart" gap, exactly, and the rest follow.
func TestRestartWithLostBlock(t *testing.T) {
	lost := bytes.Clone(samplesFrame(0, 10))
	lost[30] ^= 1
	data := stream(header(), samplesFrame(0, 10), samplesFrame(10, 10), samplesFrame(20, 10),
		lost, samplesFrame(10, 10), samplesFrame(20, 10))
	var s timelineSink
	_, st, err := DecodeStream(bytes.NewReader(data), &s)
	if err != nil {
		t.Fatal(err)
	}
	wantBlocks := [][2]uint64{{0, 10}, {10, 10}, {20, 10}, {40, 10}, {50, 10}}
	wantGaps := []meter.Gap{{Channel: -1, Start: 30, Count: 10, Reason: "restart"}}
	if !reflect.DeepEqual(s.blocks, wantBlocks) || !reflect.DeepEqual(s.gaps, wantGaps) {
		t.Fatalf("blocks %v gaps %+v", s.blocks, s.gaps)
	}
	if st.Restarts != 1 || st.SamplesLost != 10 || st.CRCErrors != 1 {
		t.Fatalf("stats %+v", st)
	}
	if len(s.events) != 1 || s.events[0].Kind != meter.EventRestart || s.events[0].Index != 40 || s.events[0].Value != 10 {
		t.Fatalf("events %+v", s.events)
	}
}

// TestDuplicatesAreCounted: an exact repeat of the last block is dropped,
// a block overlapping its end has its new tail kept; both are counted and
// are events, and neither moves the timeline.
func TestDuplicatesAreCounted(t *testing.T) {
	data := stream(header(), samplesFrame(0, 10), samplesFrame(10, 10), samplesFrame(10, 10),
		samplesFrame(15, 10), samplesFrame(25, 10))
	var s timelineSink
	_, st, err := DecodeStream(bytes.NewReader(data), &s)
	if err != nil {
		t.Fatal(err)
	}
	wantBlocks := [][2]uint64{{0, 10}, {10, 10}, {20, 5}, {25, 10}}
	wantEvents := []meter.Event{{Kind: meter.EventDuplicate, Index: 10, Value: 10}, {Kind: meter.EventDuplicate, Index: 15, Value: 5}}
	if !reflect.DeepEqual(s.blocks, wantBlocks) || !reflect.DeepEqual(s.events, wantEvents) || len(s.gaps) != 0 {
		t.Fatalf("blocks %v events %+v gaps %+v", s.blocks, s.events, s.gaps)
	}
	if st.Duplicates != 15 || st.Restarts != 0 || st.SamplesLost != 0 {
		t.Fatalf("stats %+v", st)
	}
}

// TestLiveRestartGapFromHostClock: on a live link the new epoch is placed
// by the host clock. Blocks of 10 at 1 kS/s; the restarted hub's first
// block (0–9) arrives 1 s after the last old one (89–99 ended at 100), so
// its 10 samples took the last 10 ms and the gap is 1000 − 10 = 990.
func TestLiveRestartGapFromHostClock(t *testing.T) {
	id, cal := sampleIdentity(), sampleCal()
	var st meter.Stats
	d := newDecoder(id.Info(&cal), meter.StreamConfig{Rate: 1000, Ports: []int{1, 2}}, &st)
	var s timelineSink
	payload := func(first uint64) []byte {
		f := samplesFrame(first, 10)
		return f[HeaderLen : len(f)-TrailerLen]
	}
	now := hostclock.Time(1e9)
	for first := uint64(0); first < 100; first += 10 {
		now += 10e6
		if err := d.samples(payload(first), now, &s); err != nil {
			t.Fatal(err)
		}
	}
	now += 1e9
	if err := d.samples(payload(0), now, &s); err != nil {
		t.Fatal(err)
	}
	if err := d.samples(payload(10), now+10e6, &s); err != nil {
		t.Fatal(err)
	}
	wantGaps := []meter.Gap{{Channel: -1, Start: 100, Count: 990, Reason: "restart"}}
	if !reflect.DeepEqual(s.gaps, wantGaps) || s.blocks[10] != [2]uint64{1090, 10} || s.blocks[11] != [2]uint64{1100, 10} {
		t.Fatalf("gaps %+v blocks %v", s.gaps, s.blocks[10:])
	}
	if st.Restarts != 1 || st.SamplesLost != 990 || len(s.events) != 1 || s.events[0].Index != 1090 {
		t.Fatalf("stats %+v events %+v", st, s.events)
	}
}

// FuzzTimeline decodes SAMPLES blocks at arbitrary indices (with overruns
// between) and checks the decoder's account: blocks and gaps tile the index
// space in order without overlap, every sample the hub sent is delivered or
// counted as a duplicate, and the counters match the gaps and events.
func FuzzTimeline(f *testing.F) {
	f.Add([]byte{0, 10, 10, 10, 0, 10, 5, 3})
	f.Add([]byte{0, 10, 10, 10, 10, 10, 15, 10, 200, 1, 3, 4})
	f.Fuzz(func(t *testing.T, data []byte) {
		var frames [][]byte
		sent := uint64(0)
		for len(data) >= 2 {
			first, count := uint64(data[0])*7, int(data[1]%40)+1
			data = data[2:]
			if first%5 == 4 && len(data) > 0 { // sometimes an overrun EVENT instead
				ev := Event{Kind: EvOverrun, Index: first, Value: uint32(data[0])}
				frames = append(frames, AppendFrame(nil, TypeEvent, 0, ev.Append(nil)))
				data = data[1:]
				continue
			}
			frames = append(frames, samplesFrame(first, count))
			sent += uint64(count)
		}
		var s timelineSink
		_, st, err := DecodeStream(bytes.NewReader(stream(header(), stream(frames...))), &s)
		if err != nil {
			t.Fatal(err)
		}
		type span struct{ start, count uint64 }
		var spans []span
		for _, b := range s.blocks {
			spans = append(spans, span{b[0], b[1]})
		}
		// Blocks are in order and, with the gaps, tile [0, end).
		next := uint64(0)
		gi := 0
		var lost, dups, restarts uint64
		for _, g := range s.gaps {
			lost += g.Count
		}
		for _, e := range s.events {
			switch e.Kind {
			case meter.EventDuplicate:
				dups += uint64(e.Value)
			case meter.EventRestart:
				restarts++
			}
		}
		for _, sp := range spans {
			for gi < len(s.gaps) && s.gaps[gi].Start == next {
				next += s.gaps[gi].Count
				gi++
			}
			if sp.start != next {
				t.Fatalf("block at %d, timeline at %d; blocks %v gaps %+v", sp.start, next, spans, s.gaps)
			}
			next += sp.count
		}
		if s.delivered()+dups != sent {
			t.Fatalf("sent %d, delivered %d + duplicates %d", sent, s.delivered(), dups)
		}
		if st.SamplesLost != lost || st.Duplicates != dups || st.Restarts != restarts {
			t.Fatalf("stats %+v; gaps add to %d, events: %d duplicates, %d restarts", st, lost, dups, restarts)
		}
	})
}
