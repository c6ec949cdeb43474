package analysis

import (
	"fmt"
	"math"
	"sort"
	"strings"

	"github.com/idlewatt/idlewatt/capture"
	"github.com/idlewatt/idlewatt/hostclock"
	"github.com/idlewatt/idlewatt/meter"
	"github.com/idlewatt/idlewatt/units"
)

// Window restricts a report to [FromS, ToS) seconds on the report's
// timeline (meter sample 0 is 0 s; ToS 0 = the end): `idlewatt report
// --from --to`. Every figure is then of that interval: the samples outside
// it are not read (they are neither counted nor missing), an I/O is in it
// by its issue time, the phase and DEVSLP pin state in force at FromS
// carry over to FromS, and a DevSlp cycle that the interval cuts is not
// judged (its phase is renamed "cut devslp-cycle:N"). The clock is fitted
// over the whole capture's marks, so the interval's times are the full
// report's.
type Window struct {
	FromS, ToS units.Seconds
}

// CutCyclePrefix names a DevSlp cycle's phase that a Window cuts.
const CutCyclePrefix = "cut "

func (w *Window) check() error {
	from, to := float64(w.FromS), float64(w.ToS)
	if math.IsNaN(from) || math.IsInf(from, 0) || math.IsNaN(to) || math.IsInf(to, 0) || from < 0 || to < 0 {
		return fmt.Errorf("%w: interval %g–%g s: want finite seconds from the first sample", ErrOptions, w.FromS, w.ToS)
	}
	if w.ToS != 0 && w.ToS <= w.FromS {
		return fmt.Errorf("%w: interval end %g s is not after its start %g s", ErrOptions, w.ToS, w.FromS)
	}
	return nil
}

// windowed analyses the window of the capture: a first pass over the
// whole capture fits the clock and finds the phases, then the analysis
// proper reads the capture through a filter.
func windowed(open Opener, opts Options) (*Report, error) {
	w := *opts.Window
	if err := w.check(); err != nil {
		return nil, err
	}
	full := opts
	full.Window, full.Samples, full.NewClassifier, full.States = nil, nil, nil, nil
	p1, err := firstPass(open, full, recordSink(opts)) // the sink's records are the whole capture's
	if err != nil {
		return nil, err
	}
	clock := p1.fitter.Fit(p1.hdr.StartHost)
	t0 := clock.HostF(0)
	f := &windowFilter{hFrom: int64(t0 + float64(w.FromS)*1e9), hTo: math.MaxInt64}
	f.iFrom = uint64(math.Max(0, math.Ceil(clock.Index(hostclock.Time(f.hFrom)))))
	f.iTo = math.MaxUint64
	if w.ToS > 0 {
		f.hTo = int64(t0 + float64(w.ToS)*1e9)
		f.iTo = uint64(math.Max(0, math.Ceil(clock.Index(hostclock.Time(f.hTo)))))
	}
	f.cut = cutCycles(p1.phases.events, f.hFrom, f.hTo)
	inner := opts
	inner.Window = nil
	inner.recordsSeen = true
	rep, err := AnalyzeSource(func() (Source, error) {
		src, err := open()
		if err != nil {
			return nil, err
		}
		return &windowSource{Source: src, f: f, lastPin: map[int]bool{}, lastHostPin: map[int]bool{}, lastPhase: map[int]capture.StateEvent{}}, nil
	}, inner)
	if rep != nil {
		to := w.ToS
		if to == 0 {
			to = rep.Capture.StartS + rep.Capture.DurationS
		}
		rep.Interval = &IntervalReport{FromS: w.FromS, ToS: to}
		rep.Notes = append([]string{fmt.Sprintf("this report covers only %.6g–%.6g s of the capture (--from/--to): every figure is of that interval", w.FromS, to)}, rep.Notes...)
		if len(f.cut) > 0 {
			rep.note(fmt.Sprintf("%d DevSlp cycles cut by the interval are not judged (their phases are named %q…)", len(f.cut), CutCyclePrefix+"devslp-cycle:"))
		}
	}
	return rep, err
}

// cutCycles finds the DevSlp cycle phases (host time and port) the window
// [from, to) does not hold whole: one that starts before from and runs
// into it, or starts in it and ends at or after to.
func cutCycles(evs []phaseEvent, from, to int64) map[phaseEvent]bool {
	ev := append([]phaseEvent(nil), evs...)
	sort.SliceStable(ev, func(i, j int) bool { return ev[i].t < ev[j].t })
	cut := map[phaseEvent]bool{}
	for i, e := range ev {
		if !strings.HasPrefix(e.name, "devslp-cycle:") {
			continue
		}
		end := int64(math.MaxInt64)
		for _, f := range ev[i+1:] {
			if f.port == e.port || f.port == 0 || e.port == 0 {
				end = f.t
				break
			}
		}
		if end > from && e.t < to && (e.t < from || end > to) {
			cut[e] = true
		}
	}
	return cut
}

type windowFilter struct {
	hFrom, hTo int64  // host ns
	iFrom, iTo uint64 // meter sample indices
	cut        map[phaseEvent]bool
}

// windowSource passes the records of the window: samples and gaps
// clipped to its indices, I/O issued in it, host and meter events in it,
// and, at its start, the phase and pin state then in force; marks, stats
// and notes whole.
type windowSource struct {
	Source
	f           *windowFilter
	blk         meter.Block
	io          []capture.IOEvent
	carried     bool
	queue       []capture.Record
	lastPin     map[int]bool // meter DEVSLP pin per port before the window
	pinSeen     []int
	lastHostPin map[int]bool
	hostSeen    []int
	lastPhase   map[int]capture.StateEvent
	phaseOrder  []int
	endErr      error
}

// SkipSamples passes the choice on (the first pass skips samples).
func (s *windowSource) SkipSamples(skip bool) {
	if x, ok := s.Source.(interface{ SkipSamples(bool) }); ok {
		x.SkipSamples(skip)
	}
}

// Account passes the reader's account on.
func (s *windowSource) Account() capture.Account {
	if a, ok := s.Source.(accounter); ok {
		return a.Account()
	}
	return capture.Account{}
}

// carry queues, once, the state in force at the window's start.
func (s *windowSource) carry() {
	if s.carried {
		return
	}
	s.carried = true
	for _, port := range s.phaseOrder {
		e := s.lastPhase[port]
		e.Host = hostclock.Time(s.f.hFrom)
		s.queue = append(s.queue, capture.Record{Kind: capture.KindState, State: e})
	}
	for _, port := range s.hostSeen {
		if s.lastHostPin[port] {
			s.queue = append(s.queue, capture.Record{Kind: capture.KindState, State: capture.StateEvent{Host: hostclock.Time(s.f.hFrom), Port: port, Kind: capture.StateDevSlpPin, Value: "1"}})
		}
	}
	for _, port := range s.pinSeen {
		if s.lastPin[port] {
			s.queue = append(s.queue, capture.Record{Kind: capture.KindEvent, Event: meter.Event{Kind: meter.EventDevSlp, Port: port, Index: s.f.iFrom, Value: 1}})
		}
	}
}

func (s *windowSource) Next() (capture.Record, error) {
	for {
		if len(s.queue) > 0 {
			r := s.queue[0]
			s.queue = s.queue[1:]
			return r, nil
		}
		if s.endErr != nil {
			return capture.Record{}, s.endErr
		}
		rec, err := s.Source.Next()
		if err != nil {
			if !s.carried {
				s.carry()
				s.endErr = err
				continue
			}
			return rec, err
		}
		out, keep := s.filter(rec)
		if !keep {
			continue
		}
		if len(s.queue) > 0 { // the carried state goes first
			s.queue = append(s.queue, out)
			continue
		}
		return out, nil
	}
}

// inHost reports where host time t lies: -1 before the window, 0 in it, 1
// after it.
func (s *windowSource) inHost(t int64) int {
	switch {
	case t < s.f.hFrom:
		return -1
	case t >= s.f.hTo:
		return 1
	}
	return 0
}

func (s *windowSource) inIndex(i uint64) int {
	switch {
	case i < s.f.iFrom:
		return -1
	case i >= s.f.iTo:
		return 1
	}
	return 0
}

// clip cuts [start, start+n) to the window's indices.
func (s *windowSource) clip(start uint64, n int) (uint64, int, int) {
	a, z := max(start, s.f.iFrom), min(start+uint64(n), s.f.iTo)
	if z <= a {
		return 0, 0, 0
	}
	return a, int(a - start), int(z - start)
}

func (s *windowSource) filter(rec capture.Record) (capture.Record, bool) {
	f := s.f
	switch rec.Kind {
	case capture.KindSamples, capture.KindRejected:
		b := rec.Block
		if b == nil {
			return rec, false
		}
		n := min(len(b.V), len(b.I))
		a, j0, j1 := s.clip(b.Start, n)
		if j1 == j0 {
			return rec, false
		}
		s.carry()
		s.blk = meter.Block{Channel: b.Channel, Start: a, V: b.V[j0:j1], I: b.I[j0:j1]}
		rec.Block = &s.blk
		return rec, true
	case capture.KindGap:
		g := rec.Gap
		if g.Count == 0 {
			return rec, false
		}
		a, z := max(g.Start, f.iFrom), min(g.Start+g.Count, f.iTo)
		if z <= a {
			return rec, false
		}
		rec.Gap.Start, rec.Gap.Count = a, z-a
		return rec, true
	case capture.KindSummary:
		return rec, false // a chart's decimated view of the whole capture
	case capture.KindIO:
		s.io = s.io[:0]
		for _, e := range rec.IO {
			if s.inHost(int64(e.Issue)) == 0 {
				s.io = append(s.io, e)
			}
		}
		if len(s.io) == 0 {
			return rec, false
		}
		s.carry()
		rec.IO = s.io
		return rec, true
	case capture.KindEvent:
		e := rec.Event
		switch s.inIndex(e.Index) {
		case -1:
			if e.Kind == meter.EventDevSlp {
				if _, ok := s.lastPin[e.Port]; !ok {
					s.pinSeen = append(s.pinSeen, e.Port)
				}
				s.lastPin[e.Port] = e.Value != 0
			}
			return rec, false
		case 1:
			return rec, false
		}
		s.carry()
		return rec, true
	case capture.KindState:
		e := rec.State
		if e.Kind == capture.StateNote || e.Kind == capture.StatePolicy {
			return rec, true // settings and criteria: whole
		}
		where := s.inHost(int64(e.Host))
		if where < 0 {
			switch e.Kind {
			case capture.StatePhase:
				if _, ok := s.lastPhase[e.Port]; !ok {
					s.phaseOrder = append(s.phaseOrder, e.Port)
				}
				if f.cut[phaseEvent{int64(e.Host), e.Port, e.Value}] {
					e.Value = CutCyclePrefix + e.Value
				}
				s.lastPhase[e.Port] = e
			case capture.StateDevSlpPin:
				if _, ok := s.lastHostPin[e.Port]; !ok {
					s.hostSeen = append(s.hostSeen, e.Port)
				}
				s.lastHostPin[e.Port] = e.Value == "1"
			}
			return rec, false
		}
		if where > 0 {
			return rec, false
		}
		s.carry()
		if e.Kind == capture.StatePhase && f.cut[phaseEvent{int64(e.Host), e.Port, e.Value}] {
			rec.State.Value = CutCyclePrefix + e.Value
		}
		return rec, true
	}
	return rec, true
}
