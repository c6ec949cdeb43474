package rig

import (
	"fmt"
	"math"
	"sync"
	"time"

	"github.com/idlewatt/idlewatt/analysis/judge"
	"github.com/idlewatt/idlewatt/capture"
	"github.com/idlewatt/idlewatt/hostclock"
	"github.com/idlewatt/idlewatt/internal/stat"
	"github.com/idlewatt/idlewatt/meter"
	"github.com/idlewatt/idlewatt/states/devslp"
	"github.com/idlewatt/idlewatt/units"
)

// liveDevSlp estimates, while the DevSlp cycles run, the entry latency the
// cycles so far give, so that devslp.Run can run more of them
// (devslp.max_cycles) until it is resolved to devslp.entry_u95. It watches
// what the recorder writes (a record.Observer): each cycling drive's
// samples, summed over its rails, and the meter's DEVSLP edges, both by
// meter sample index — so it needs no clock fit, and works only with a
// meter that reports the pin's edges (the hub). The estimate is the one
// analysis computes (analysis/judge: JudgeCycle and Summarise on the
// same samples); it only decides when to stop. The reported figures are
// analysis's, from the capture, over every cycle run.
type liveDevSlp struct {
	mu     sync.Mutex
	period float64       // ns per sample
	port   []int         // channel → port
	ports  map[int]*live // cycling drives
}

type live struct {
	chans  map[int]*liveChan // by channel index
	pins   []meter.Event     // DEVSLP edges, in order
	judged []judge.Cycle     // cycles judged so far, in order
}

// liveChan is one rail's power by sample index from start; NaN where
// nothing arrived (yet).
type liveChan struct {
	start uint64
	w     []float64
	began bool
}

// liveKeep bounds a rail's buffer should cycles not be judged (a drive
// whose cycles ended while another's go on, a meter without pin edges):
// entry drops what judged cycles used, so it holds about one cycle. The
// buffer keeps at least the last liveKeep samples (60 s at 10 kS/s) and at
// most liveKeep + liveSlack (90 s, 7.2 MB): past that it is cut back to
// liveKeep at once, so the copy is paid once per liveSlack samples. Cut
// back by each block's worth instead, a full buffer cost a 4.8 MB copy
// per block per rail (0.2–0.5 ms) in the goroutine that reads the meter:
// at 10 kS/s the hub's reader fell behind the stream, and once the
// answers to SET_DEVSLP queued behind more than 10 s of samples the host
// gave up on the hub (issue 25's lost hubs).
const (
	liveKeep  = 600_000
	liveSlack = liveKeep / 2
)

func newLiveDevSlp() *liveDevSlp { return &liveDevSlp{ports: map[int]*live{}} }

// watch starts buffering a drive's samples and pin edges.
func (l *liveDevSlp) watch(port int) {
	l.mu.Lock()
	defer l.mu.Unlock()
	lv := &live{chans: map[int]*liveChan{}}
	for ch, p := range l.port {
		if p == port {
			lv.chans[ch] = &liveChan{}
		}
	}
	l.ports[port] = lv
}

// unwatch drops a drive's buffers.
func (l *liveDevSlp) unwatch(port int) {
	l.mu.Lock()
	delete(l.ports, port)
	l.mu.Unlock()
}

// Start implements record.Observer.
func (l *liveDevSlp) Start(h capture.Header) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.period = 1e9 / float64(h.RateHz)
	l.port = l.port[:0]
	for _, c := range h.Channels {
		l.port = append(l.port, c.Port)
	}
}

// Samples implements record.Observer.
func (l *liveDevSlp) Samples(b *meter.Block) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if b.Channel < 0 || b.Channel >= len(l.port) {
		return
	}
	lv := l.ports[l.port[b.Channel]]
	if lv == nil {
		return
	}
	c := lv.chans[b.Channel]
	if c == nil {
		return
	}
	n := min(len(b.V), len(b.I))
	if !c.began {
		c.start, c.began = b.Start, true
	}
	if b.Start < c.start {
		return // before the buffer (a late resend)
	}
	off := int(b.Start - c.start)
	for len(c.w) < off+n {
		c.w = append(c.w, math.NaN())
	}
	for k := range n {
		c.w[off+k] = float64(b.Power(k))
	}
	if len(c.w) > liveKeep+liveSlack {
		c.dropTo(c.start + uint64(len(c.w)-liveKeep))
	}
}

// dropTo drops the samples before index idx.
func (c *liveChan) dropTo(idx uint64) {
	if idx > c.start {
		drop := min(int(idx-c.start), len(c.w))
		c.w = append(c.w[:0], c.w[drop:]...)
		c.start += uint64(drop)
	}
}

// Event implements record.Observer: a cycling drive's pin edges.
func (l *liveDevSlp) Event(e meter.Event) {
	if e.Kind != meter.EventDevSlp {
		return
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	if lv := l.ports[e.Port]; lv != nil {
		lv.pins = append(lv.pins, e)
	}
}

func (*liveDevSlp) Gap(meter.Gap)            {}
func (*liveDevSlp) Stats(meter.Stats)        {}
func (*liveDevSlp) State(capture.StateEvent) {}

// entry judges the cycles whose pin was released since the last call and
// returns the pooled entry latency and its 95 % half-width (ms) over all
// cycles so far, the cycles judged and the sample period (ns); ok is false
// when there is none (no pin edges: the meter does not report them; or no
// cycle reached a floor). The samples of a
// cycle are those from settle before its assertion to ret after its
// release.
func (l *liveDevSlp) entry(port int, settle, ret time.Duration, jo judge.JudgeOptions) (ms, u95 float64, ok bool, cycles []judge.Cycle, period float64) {
	l.mu.Lock()
	lv := l.ports[port]
	if lv == nil || l.period <= 0 {
		l.mu.Unlock()
		return 0, 0, false, nil, 0
	}
	period = l.period
	var todo []judge.Timing
	var windows [][]judge.Sample
	k := 0
	for i := 0; i+1 < len(lv.pins); i++ {
		a, d := lv.pins[i], lv.pins[i+1]
		if a.Value != 1 || d.Value != 0 || d.Index <= a.Index {
			continue
		}
		k++
		i++
		if k <= len(lv.judged) {
			continue
		}
		at := func(idx uint64) hostclock.Time { return hostclock.Time(math.Round(float64(idx) * period)) }
		from := a.Index - min(a.Index, uint64(float64(settle)/period))
		to := d.Index + uint64(float64(ret)/period)
		tm := judge.Timing{Cycle: k, Start: at(from), Assert: at(a.Index), Deassert: at(d.Index), End: at(to)}
		todo = append(todo, tm)
		windows = append(windows, lv.sum(from, to, at))
	}
	l.mu.Unlock()
	// Judge outside the lock: the meter goroutine must not wait.
	var judged []judge.Cycle
	for i, tm := range todo {
		judged = append(judged, judge.JudgeCycle(tm, windows[i], jo))
	}
	l.mu.Lock()
	lv.judged = append(lv.judged, judged...)
	if len(todo) > 0 {
		lv.trim(uint64(math.Round(float64(todo[len(todo)-1].Deassert) / period)))
	}
	all := append([]judge.Cycle(nil), lv.judged...)
	l.mu.Unlock()
	v := judge.Summarise(all, jo.Criteria, "yes", "")
	if !v.EntryMs.Ok() || !v.EntryU95Ms.Ok() {
		return 0, 0, false, all, period
	}
	return float64(v.EntryMs), float64(v.EntryU95Ms), true, all, period
}

// power is a watched drive's power (W, all rails) over the samples
// buffered since watch, skipping samples some rail lacks, and the sample
// rate.
func (l *liveDevSlp) power(port int) ([]float64, units.Hertz) {
	l.mu.Lock()
	defer l.mu.Unlock()
	lv := l.ports[port]
	if lv == nil || l.period <= 0 {
		return nil, 0
	}
	var from, to uint64
	first := true
	for _, c := range lv.chans {
		if first || c.start > from {
			from = c.start
		}
		if e := c.start + uint64(len(c.w)); first || e < to {
			to = e
		}
		first = false
	}
	var out []float64
	for _, s := range lv.sum(from, to, func(uint64) hostclock.Time { return 0 }) {
		out = append(out, s.W)
	}
	return out, units.Hertz(1e9 / l.period)
}

// trim drops the samples before index idx (a judged cycle's release: the
// next cycle's window starts a return period after it).
func (lv *live) trim(idx uint64) {
	for _, c := range lv.chans {
		c.dropTo(idx)
	}
}

// sum is the drive's power (all rails) over sample indices [from, to), the
// samples every rail has. Called with l.mu held.
func (lv *live) sum(from, to uint64, at func(uint64) hostclock.Time) []judge.Sample {
	var out []judge.Sample
	for idx := from; idx < to; idx++ {
		w, ok := 0.0, len(lv.chans) > 0
		for _, c := range lv.chans {
			if idx < c.start || idx-c.start >= uint64(len(c.w)) || math.IsNaN(c.w[idx-c.start]) {
				ok = false
				break
			}
			w += c.w[idx-c.start]
		}
		if ok {
			out = append(out, judge.Sample{T: at(idx), W: w})
		}
	}
	return out
}

// livePin is a drive's pin for devslp.Run that is also a devslp.Extender:
// after the planned cycles it asks liveDevSlp whether the entry latency is
// resolved, and notes in the capture why the cycles stopped.
type livePin struct {
	*drivePin
	l   *liveDevSlp
	opt devslp.Options
	jo  judge.JudgeOptions
}

// Resolved implements devslp.Extender.
func (p *livePin) Resolved(done []devslp.Timing, want time.Duration) (bool, time.Duration) {
	port := p.d.Config.Port
	ms, u95, ok, cycles, period := p.l.entry(port, p.opt.Settle, p.opt.Return, p.jo)
	n := len(done)
	note := func(format string, a ...any) {
		v := fmt.Sprintf(format, a...)
		p.r.state(capture.StateEvent{Host: hostclock.Now(), Port: port, Kind: capture.StateNote, Value: NoteDevSlpCycles + v})
		p.r.note("port %d: DevSlp cycles %s", port, v)
	}
	switch {
	case !ok:
		note("%d: no live entry estimate (no cycle reached a floor, or the meter reports no pin edges)", n)
		return true, 0
	case u95 <= liveMargin*float64(want)/1e6:
		if n > p.opt.Cycles {
			note("%d: entry %.2f ± %.2f ms, resolved to %v", n, ms, u95, want)
		}
		return true, 0
	case n >= p.opt.MaxCycles:
		note("%d: entry %.2f ± %.2f ms, not resolved to %v in devslp.max_cycles", n, ms, u95, want)
		return true, 0
	}
	if h := entryHold(cycles[:min(len(cycles), p.opt.Cycles)], ms+u95, period); h > 0 {
		return false, h
	}
	return false, p.opt.Hold
}

// entryHold is how long an entry cycle must hold the pin (devslp.entry_hold)
// for its own judgement to see the drive fall to a floor, so that it
// counts in the entry fit: the entry's upper bound upperMs, then as many
// floor samples as make the fall clear — the floor's mean 3 standard
// errors below the pre-cycle level ÷ √2 (judge.JudgeCycle's test), with
// half the gap to spare: n = (6σ / (pre/√2 − floor))² — and at least
// 100 ms of floor. σ, the floor and the pre-cycle level are the medians
// (upper medians, stat.UpperMedian) of the full cycles' (σ from the floor's standard error and its sample
// count). 0 when they do not say (the cycle then holds for devslp.hold).
func entryHold(full []judge.Cycle, upperMs, period float64) time.Duration {
	var sig, pre, floor []float64
	for _, c := range full {
		if c.FloorW.Ok() && c.FloorU95W.Ok() && c.PreCycleW.Ok() && c.FloorSamples > 0 {
			sig = append(sig, float64(c.FloorU95W)/1.96*math.Sqrt(float64(c.FloorSamples)))
			pre, floor = append(pre, float64(c.PreCycleW)), append(floor, float64(c.FloorW))
		}
	}
	if len(sig) == 0 || period <= 0 {
		return 0
	}
	gap := stat.UpperMedian(pre)/math.Sqrt2 - stat.UpperMedian(floor)
	if !(gap > 0) {
		return 0
	}
	n := math.Pow(6*stat.UpperMedian(sig)/gap, 2)
	floorNs := math.Max(float64(100*time.Millisecond), n*period)
	d := time.Duration(upperMs*1e6 + floorNs)
	if d < 0 || d > time.Hour {
		return 0
	}
	return d
}

// liveMargin: the live interval must be this much inside the resolution
// asked. The report's interval is computed afresh from the capture, on
// samples cut by the clock fit's times rather than by index, and its
// bootstrap (1000 refits) has a Monte Carlo error of several per cent: in
// TestDevSlpCyclesExtendUntilEntryResolved it came out 0.1–0.2 ms wider
// than the live one that stopped the cycles at 0.8–0.9 ms.
const liveMargin = 0.85

// NoteDevSlpCycles is the capture note that says why the DevSlp cycles
// stopped after more than devslp.cycles ("devslp-cycles 7: entry 0.10 ±
// 0.93 ms, resolved to 1ms").
const NoteDevSlpCycles = "devslp-cycles "
