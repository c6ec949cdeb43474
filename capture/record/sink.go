package record

import (
	"fmt"
	"strings"
	"sync"
	"time"

	"github.com/idlewatt/idlewatt/capture"
	"github.com/idlewatt/idlewatt/hostclock"
	"github.com/idlewatt/idlewatt/meter"
	"github.com/idlewatt/idlewatt/units"
)

// Totals count a recording so far.
type Totals struct {
	Samples uint64
	Gaps    uint64
	Lost    uint64            // samples in gaps
	LostBy  map[string]uint64 // Lost by gap reason ("crc", "overrun", "disconnect", …)
	Marks   uint64            // mark echoes recorded
	// Disconnects counts the times the meter vanished mid-run; Down is how
	// long it was gone in all (an outage still open included), DownNow how
	// long the open one has lasted (0 when connected).
	Disconnects uint64
	Down        time.Duration
	DownNow     time.Duration
	// The sample indices the recording covers, samples and gaps alike:
	// [FirstIndex, EndIndex) on the meter's clock, Covered false while
	// nothing has arrived. Span is their length in seconds at a rate.
	FirstIndex, EndIndex uint64
	Covered              bool
}

// Span is the length of the stream recorded, in seconds of the meter's
// clock at rate: the indices from the first sample (or gap) to the end of
// the last, gaps included; 0 when nothing was recorded.
func (t Totals) Span(rate units.Hertz) units.Seconds {
	if !t.Covered || rate <= 0 {
		return 0
	}
	return rate.Span(float64(t.EndIndex - t.FirstIndex))
}

// cover widens the indices covered by [start, start+n). Call with mu held.
func (t *Totals) cover(start, n uint64) {
	if n == 0 {
		return
	}
	if !t.Covered {
		t.FirstIndex, t.EndIndex, t.Covered = start, start+n, true
		return
	}
	t.FirstIndex, t.EndIndex = min(t.FirstIndex, start), max(t.EndIndex, start+n)
}

// PortPower is one port's mean power over a progress interval.
type PortPower struct {
	Port int
	W    units.Watts
	OK   bool // false: no sample of the port arrived in the interval
}

// Progress is a snapshot of a recording.
type Progress struct {
	Totals
	Stats      meter.Stats // as of the last tick (zero while a replay runs)
	MarkErrors uint64
	Ports      []PortPower // in channel order, since the previous Progress
}

// Progress returns the recording's snapshot; each call starts a new power
// interval.
func (r *Recorder) Progress() Progress {
	r.mu.Lock()
	p := Progress{Stats: r.stats, MarkErrors: r.markErrs}
	r.mu.Unlock()
	p.Totals = r.sink.totals()
	p.Ports = r.sink.takePower()
	return p
}

// sink passes everything to the capture (and the observer) and counts.
type sink struct {
	w     *capture.Writer
	chans []meter.Channel
	obs   Observer

	mu        sync.Mutex
	t         Totals
	pSum      []float64 // per channel, since the last takePower
	pN        []uint64
	downNs    int64
	downSince hostclock.Time // of the open outage, 0 if the link is up
	lostBy    map[string]uint64
}

func newSink(w *capture.Writer, chans []meter.Channel, obs Observer) *sink {
	return &sink{w: w, chans: chans, obs: obs, pSum: make([]float64, len(chans)), pN: make([]uint64, len(chans)),
		lostBy: map[string]uint64{}}
}

func (s *sink) Samples(b *meter.Block) error {
	if err := s.w.Samples(b); err != nil {
		return err
	}
	if s.obs != nil {
		s.obs.Samples(b)
	}
	sum := b.PowerSum()
	s.mu.Lock()
	s.t.Samples += uint64(len(b.V))
	s.t.cover(b.Start, uint64(len(b.V)))
	if b.Channel >= 0 && b.Channel < len(s.pSum) {
		s.pSum[b.Channel] += sum
		s.pN[b.Channel] += uint64(min(len(b.V), len(b.I)))
	}
	s.mu.Unlock()
	return nil
}

func (s *sink) Gap(g meter.Gap) error {
	s.mu.Lock()
	s.t.Gaps++
	s.t.Lost += g.Count
	s.t.cover(g.Start, g.Count)
	s.lostBy[g.Reason] += g.Count
	s.mu.Unlock()
	if s.obs != nil {
		s.obs.Gap(g)
	}
	return s.w.Gap(g)
}

func (s *sink) Mark(m meter.MarkEcho) error {
	s.mu.Lock()
	s.t.Marks++
	s.mu.Unlock()
	if o, ok := s.obs.(MarkObserver); ok {
		o.Mark(m)
	}
	return s.w.Mark(m)
}

func (s *sink) Event(e meter.Event) error {
	s.mu.Lock()
	switch e.Kind {
	case meter.EventDisconnect:
		if s.downSince == 0 {
			s.t.Disconnects++
			s.downSince = max(e.HostRecv, 1)
		}
	case meter.EventReconnect:
		if s.downSince != 0 {
			s.downNs += int64(max(e.HostRecv.Sub(s.downSince), 0))
			s.downSince = 0
		}
	}
	s.mu.Unlock()
	if s.obs != nil {
		s.obs.Event(e)
	}
	return s.w.Event(e)
}

// totals returns a copy of the counters, outages measured now.
func (s *sink) totals() Totals {
	s.mu.Lock()
	defer s.mu.Unlock()
	t := s.t
	t.LostBy = make(map[string]uint64, len(s.lostBy))
	for r, n := range s.lostBy {
		t.LostBy[r] = n
	}
	t.Down = time.Duration(s.downNs)
	if s.downSince != 0 {
		t.DownNow = hostclock.Since(s.downSince)
		t.Down += t.DownNow
	}
	return t
}

// takePower returns each port's mean power since the last call: the sum
// over its rails of each rail's mean.
func (s *sink) takePower() []PortPower {
	s.mu.Lock()
	defer s.mu.Unlock()
	var out []PortPower
	for c := 0; c < len(s.chans); {
		pp := PortPower{Port: s.chans[c].Port}
		for ; c < len(s.chans) && s.chans[c].Port == pp.Port; c++ {
			if s.pN[c] > 0 {
				pp.W, pp.OK = pp.W+units.Watts(s.pSum[c]/float64(s.pN[c])), true
			}
			s.pSum[c], s.pN[c] = 0, 0
		}
		out = append(out, pp)
	}
	return out
}

// PowerString is the ports' power as every progress line shows it:
// "  p1 0.400 W  p2 -" (a dash for a port without samples in the interval).
func (p Progress) PowerString() string {
	var b strings.Builder
	for _, pp := range p.Ports {
		if pp.OK {
			fmt.Fprintf(&b, "  p%d %s", pp.Port, pp.W.Readout())
		} else {
			fmt.Fprintf(&b, "  p%d -", pp.Port)
		}
	}
	return b.String()
}
