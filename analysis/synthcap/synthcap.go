package synthcap

import (
	"math"
	"math/rand"
	"sort"
	"time"

	"github.com/idlewatt/idlewatt/capture"
	"github.com/idlewatt/idlewatt/hostclock"
	"github.com/idlewatt/idlewatt/meter"
	"github.com/idlewatt/idlewatt/units"
)

// Drive is a simulated drive on a port with two rails (5 V, 12 V).
type Drive struct {
	Port                  int
	Name                  string
	IdleW, BusyW, DevSlpW float64
	Split5V               float64 // fraction of power on 5 V; 0 means 1 (5 V only)
	// Background bursts while idle: GCW more than IdleW for GCDur, every
	// GCEvery from GCFirst (GCEvery 0 = none).
	GCW                     float64
	GCFirst, GCEvery, GCDur time.Duration
	// A DIPM link (PartialW > 0): after each I/O the drive stays at IdleW
	// for PartialAfter, then PartialW until SlumberAfter, then SlumberW
	// until the next I/O. Before the first I/O it is at IdleW.
	PartialW, SlumberW         float64
	PartialAfter, SlumberAfter time.Duration
}

// IO is one I/O of Dur starting at Start (host time since StartHost).
type IO struct {
	Port       int
	Start, Dur time.Duration
	Op         capture.Op
	Size       int32
}

// Phase starts a named phase at At (port 0 = all drives).
type Phase struct {
	At   time.Duration
	Port int
	Name string
}

// Pin asserts DEVSLP on Port over [From, To).
type Pin struct {
	Port     int
	From, To time.Duration
}

// Gap removes samples [Start, Start+Count) of Channel (-1 = all).
type Gap struct {
	Channel      int
	Start, Count uint64
}

// Bursts generates periodic I/O on Port: every Every, Ops I/Os of OpDur
// back to back, starting at First.
type Bursts struct {
	Port         int
	First, Every time.Duration
	Ops          int
	OpDur        time.Duration
	Size         int32
}

// Scenario is a whole synthetic capture.
type Scenario struct {
	RateHz    float64
	Duration  time.Duration
	Drives    []Drive
	IO        []IO
	Bursts    []Bursts
	Phases    []Phase
	Pins      []Pin
	Gaps      []Gap
	StartHost hostclock.Time
	DriftPPM  float64
	// Marks every MarkEvery (0 = none), each way delayed by RTTMin/2 plus an
	// exponential jitter of mean Jitter.
	MarkEvery, RTTMin, Jitter time.Duration
	Seed                      int64
	BlockLen                  int // samples per block (default 1000)
	CRCErrors                 uint64
	// Retransmit makes the meter a hub on protocol v2, whose link counts
	// Recovered samples and Refused frames (written with the stats).
	Retransmit         bool
	Recovered, Refused uint64
	// Sensor noise (σ of each rail's current, A; drawn from Seed+1) and
	// quantisation steps (0 = none).
	NoiseA              float64
	CurrentLSB, VoltLSB float64
	// LSBUnstated quantises to the LSBs but leaves them out of the header,
	// as a file whose meter does not say its resolution.
	LSBUnstated bool
	// Level steps on each drive's 5 V current (a meter's popcorn noise, a
	// random telegraph, as drivesim's step_ma/step_ms): an offset of
	// ±StepA/2, redrawn with probability period/StepEvery at each sample
	// (half the draws keep it), from Seed+2. 0 = none.
	StepA     float64
	StepEvery time.Duration
}

// Sink is what a scenario is written to; *capture.Writer is one.
type Sink interface {
	meter.Sink
	IO(evs ...capture.IOEvent) error
	State(e capture.StateEvent) error
	Stats(s meter.Stats) error
}

// Header returns the capture header for s.
func (s *Scenario) Header() capture.Header {
	h := capture.Header{Created: "2025-01-01T00:00:00Z", RateHz: units.Hertz(s.RateHz), StartHost: s.StartHost, Tool: "synthcap"}
	h.Meter = meter.Info{Kind: "synthetic", Model: "synthcap", Ports: len(s.Drives)}
	if s.Retransmit {
		h.Meter.ProtocolVersion = 2
	}
	for _, d := range s.Drives {
		lv, li := units.Volts(s.VoltLSB), units.Amps(s.CurrentLSB)
		if s.LSBUnstated {
			lv, li = 0, 0
		}
		h.Channels = append(h.Channels, meter.Channel{Port: d.Port, Rail: meter.Rail5V, VoltLSB: lv, CurrentLSB: li},
			meter.Channel{Port: d.Port, Rail: meter.Rail12V, VoltLSB: lv, CurrentLSB: li})
		h.Drives = append(h.Drives, capture.DriveInfo{Port: d.Port, Name: d.Name})
	}
	h.Meter.Channels = h.Channels
	return h
}

// HostNs returns the host time of sample n relative to StartHost.
func (s *Scenario) HostNs(n uint64) float64 {
	return float64(n) * 1e9 / s.RateHz * (1 + s.DriftPPM*1e-6)
}

// AllIO returns the scenario's I/O, bursts expanded, sorted by start.
func (s *Scenario) AllIO() []IO {
	out := append([]IO(nil), s.IO...)
	for _, b := range s.Bursts {
		for t := b.First; t < s.Duration; t += b.Every {
			for k := 0; k < b.Ops; k++ {
				op := capture.OpRead
				if k%3 == 2 {
					op = capture.OpWrite
				}
				out = append(out, IO{Port: b.Port, Start: t + time.Duration(k)*b.OpDur, Dur: b.OpDur, Op: op, Size: b.Size})
			}
		}
	}
	sort.SliceStable(out, func(i, j int) bool { return out[i].Start < out[j].Start })
	return out
}

// Write writes s to the capture file at path.
func Write(path string, s Scenario) error {
	w, err := capture.Create(path, s.Header(), capture.Options{})
	if err != nil {
		return err
	}
	if err := Generate(s, w); err != nil {
		w.Close()
		return err
	}
	return w.Close()
}

// Generate streams s into sink in roughly the order a live run writes it.
func Generate(s Scenario, sink Sink) error {
	if s.BlockLen <= 0 {
		s.BlockLen = 1000
	}
	g := newGenerator(&s, sink)
	total := s.Samples()
	for n0 := uint64(0); n0 < total; n0 += uint64(s.BlockLen) {
		L := int(min(uint64(s.BlockLen), total-n0))
		tEnd := time.Duration(s.HostNs(n0 + uint64(L)))
		if err := g.events(tEnd); err != nil {
			return err
		}
		if err := g.samples(n0, L); err != nil {
			return err
		}
	}
	if s.CRCErrors > 0 || s.Retransmit {
		return sink.Stats(meter.Stats{CRCErrors: s.CRCErrors, Recovered: s.Recovered, Refused: s.Refused})
	}
	return nil
}

type pinEdge struct {
	at   time.Duration
	port int
	on   bool
}

// generator is Generate's position in the scenario: the next phase, pin
// edge, completed I/O and mark, with the two random streams (mark jitter,
// sensor noise) and the block buffers.
type generator struct {
	s      *Scenario
	sink   Sink
	rng    *rand.Rand // mark round trips
	noise  *rand.Rand // sensor noise
	steps  *rand.Rand // level steps (nil: none)
	step   []float64  // each drive's level-step offset (A)
	ports  map[int]*portState
	done   []IO // every I/O, in completion order
	phases []Phase
	edges  []pinEdge
	period float64 // ns per sample, drift included

	di, phi, ei int // next done, phase, edge
	nextMark    time.Duration
	markID      uint32
	V           []units.Volts
	I           []units.Amps
	pw          []float64
}

func newGenerator(s *Scenario, sink Sink) *generator {
	g := &generator{s: s, sink: sink,
		rng:      rand.New(rand.NewSource(s.Seed)),
		noise:    rand.New(rand.NewSource(s.Seed + 1)),
		ports:    map[int]*portState{},
		nextMark: s.MarkEvery,
		period:   1e9 / s.RateHz * (1 + s.DriftPPM*1e-6),
		V:        make([]units.Volts, s.BlockLen),
		I:        make([]units.Amps, s.BlockLen),
		pw:       make([]float64, s.BlockLen),
	}
	if s.StepA > 0 && s.StepEvery > 0 {
		g.steps, g.step = rand.New(rand.NewSource(s.Seed+2)), make([]float64, len(s.Drives))
		for i := range g.step {
			g.step[i] = s.StepA / 2
		}
	}
	ios := s.AllIO()
	// Per port: I/O spans in start order (for power), and a completion-ordered
	// queue (for events).
	for _, d := range s.Drives {
		g.ports[d.Port] = &portState{d: d}
	}
	for _, io := range ios {
		if p := g.ports[io.Port]; p != nil {
			p.busy = append(p.busy, io)
		}
	}
	for _, pn := range s.Pins {
		if p := g.ports[pn.Port]; p != nil {
			p.pins = append(p.pins, pn)
		}
	}
	g.done = append([]IO(nil), ios...)
	done := g.done
	sort.SliceStable(done, func(i, j int) bool { return done[i].Start+done[i].Dur < done[j].Start+done[j].Dur })
	g.phases = append([]Phase(nil), s.Phases...)
	phases := g.phases
	sort.SliceStable(phases, func(i, j int) bool { return phases[i].At < phases[j].At })
	for _, pn := range s.Pins {
		g.edges = append(g.edges, pinEdge{pn.From, pn.Port, true}, pinEdge{pn.To, pn.Port, false})
	}
	edges := g.edges
	sort.SliceStable(edges, func(i, j int) bool { return edges[i].at < edges[j].at })
	return g
}

func (g *generator) jit() time.Duration {
	return g.s.RTTMin/2 + time.Duration(g.rng.ExpFloat64()*float64(g.s.Jitter))
}

// events writes the phases, pin edges, completed I/O and marks before
// tEnd (since the start).
func (g *generator) events(tEnd time.Duration) error {
	s, sink := g.s, g.sink
	for ; g.phi < len(g.phases) && g.phases[g.phi].At < tEnd; g.phi++ {
		ph := g.phases[g.phi]
		if err := sink.State(capture.StateEvent{Host: s.StartHost.Add(ph.At), Port: ph.Port, Kind: capture.StatePhase, Value: ph.Name}); err != nil {
			return err
		}
	}
	for ; g.ei < len(g.edges) && g.edges[g.ei].at < tEnd; g.ei++ {
		e := g.edges[g.ei]
		v := "0"
		var mv int64
		if e.on {
			v, mv = "1", 1
		}
		if err := sink.State(capture.StateEvent{Host: s.StartHost.Add(e.at), Port: e.port, Kind: capture.StateDevSlpPin, Value: v}); err != nil {
			return err
		}
		idx := uint64(math.Ceil(float64(e.at) / g.period))
		if err := sink.Event(meter.Event{Kind: meter.EventDevSlp, Port: e.port, Index: idx, Value: mv, HostRecv: s.StartHost.Add(e.at)}); err != nil {
			return err
		}
	}
	var batch []capture.IOEvent
	for ; g.di < len(g.done) && g.done[g.di].Start+g.done[g.di].Dur < tEnd; g.di++ {
		io := g.done[g.di]
		batch = append(batch, capture.IOEvent{Port: io.Port, Op: io.Op, Size: io.Size, Offset: int64(g.di) * 4096,
			Issue: s.StartHost.Add(io.Start), Complete: s.StartHost.Add(io.Start + io.Dur)})
	}
	if len(batch) > 0 {
		if err := sink.IO(batch...); err != nil {
			return err
		}
	}
	for ; s.MarkEvery > 0 && g.nextMark < tEnd; g.nextMark += s.MarkEvery {
		g.markID++
		h := s.StartHost.Add(g.nextMark)
		m := meter.MarkEcho{ID: g.markID, HostSent: h.Add(-g.jit()), HostRecv: h.Add(g.jit()), MeterIndex: uint64(float64(g.nextMark) / g.period)}
		if err := sink.Mark(m); err != nil {
			return err
		}
	}
	return nil
}

// samples writes every drive's two rails (5 V, 12 V) for the L samples
// from index n0.
func (g *generator) samples(n0 uint64, L int) error {
	s, pw, V, I := g.s, g.pw, g.V, g.I
	for di, d := range s.Drives {
		p := g.ports[d.Port]
		for k := 0; k < L; k++ {
			t := time.Duration(s.HostNs(n0 + uint64(k)))
			pw[k] = p.power(t)
		}
		split := d.Split5V
		if split == 0 {
			split = 1
		}
		for r := 0; r < 2; r++ {
			ch := 2*di + r
			volt, frac := units.Volts(5), split
			if r == 1 {
				volt, frac = 12, 1-split
			}
			for k := 0; k < L; k++ {
				V[k] = units.Volts(quantise(float64(volt), s.VoltLSB))
				i := pw[k] * frac / float64(volt)
				if s.NoiseA > 0 {
					i += s.NoiseA * g.noise.NormFloat64()
				}
				if g.steps != nil && r == 0 {
					if g.steps.Float64() < g.period/float64(s.StepEvery) {
						g.step[di] = s.StepA / 2
						if g.steps.Intn(2) == 0 {
							g.step[di] = -s.StepA / 2
						}
					}
					i += g.step[di]
				}
				I[k] = units.Amps(quantise(i, s.CurrentLSB))
			}
			if err := emit(g.sink, s.Gaps, ch, n0, V[:L], I[:L]); err != nil {
				return err
			}
		}
	}
	return nil
}

func quantise(x, lsb float64) float64 {
	if lsb <= 0 {
		return x
	}
	return math.Round(x/lsb) * lsb
}

// Samples returns the number of meter samples s holds.
func (s *Scenario) Samples() uint64 { return uint64(s.Duration.Seconds() * s.RateHz) }

// TruePower returns, per sample, the noise-free power of the drive on port
// (nil for a port s lacks): the truth the meter's readings scatter around.
func (s *Scenario) TruePower(port int) []float64 {
	var p *portState
	for _, d := range s.Drives {
		if d.Port == port {
			p = &portState{d: d}
		}
	}
	if p == nil {
		return nil
	}
	for _, io := range s.AllIO() {
		if io.Port == port {
			p.busy = append(p.busy, io)
		}
	}
	for _, pn := range s.Pins {
		if pn.Port == port {
			p.pins = append(p.pins, pn)
		}
	}
	out := make([]float64, s.Samples())
	for n := range out {
		out[n] = p.power(time.Duration(s.HostNs(uint64(n))))
	}
	return out
}

type portState struct {
	d    Drive
	busy []IO // by start
	bi   int  // busy[:bi] ended before the last t asked
	pins []Pin
}

// power returns the drive's power at t; calls come in time order.
func (p *portState) power(t time.Duration) float64 {
	for _, pn := range p.pins {
		if t >= pn.From && t < pn.To {
			return p.d.DevSlpW
		}
	}
	for p.bi < len(p.busy) && p.busy[p.bi].Start+p.busy[p.bi].Dur <= t {
		p.bi++
	}
	// I/Os may overlap, so look at the few that started before t.
	for k := p.bi; k < len(p.busy) && p.busy[k].Start <= t; k++ {
		if t < p.busy[k].Start+p.busy[k].Dur {
			return p.d.BusyW
		}
	}
	if g := p.d.GCEvery; g > 0 && t >= p.d.GCFirst && (t-p.d.GCFirst)%g < p.d.GCDur {
		return p.d.IdleW + p.d.GCW
	}
	if p.d.PartialW > 0 && p.bi > 0 {
		since := t - (p.busy[p.bi-1].Start + p.busy[p.bi-1].Dur)
		switch {
		case since >= p.d.SlumberAfter:
			return p.d.SlumberW
		case since >= p.d.PartialAfter:
			return p.d.PartialW
		}
	}
	return p.d.IdleW
}

// emit writes channel ch's block at n0, minus any gaps, as blocks and gaps.
func emit(sink Sink, gaps []Gap, ch int, n0 uint64, V []units.Volts, I []units.Amps) error {
	end := n0 + uint64(len(V))
	cur := n0
	for _, g := range gaps {
		if g.Channel != -1 && g.Channel != ch {
			continue
		}
		gs, ge := max(g.Start, n0), min(g.Start+g.Count, end)
		if gs >= ge || gs < cur {
			continue
		}
		if gs > cur {
			if err := sink.Samples(&meter.Block{Channel: ch, Start: cur, V: V[cur-n0 : gs-n0], I: I[cur-n0 : gs-n0]}); err != nil {
				return err
			}
		}
		if gs == g.Start || gs == n0 {
			if err := sink.Gap(meter.Gap{Channel: ch, Start: gs, Count: ge - gs, Reason: "synthetic"}); err != nil {
				return err
			}
		}
		cur = ge
	}
	if cur < end {
		return sink.Samples(&meter.Block{Channel: ch, Start: cur, V: V[cur-n0:], I: I[cur-n0:]})
	}
	return nil
}
