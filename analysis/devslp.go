package analysis

import (
	"encoding/json"
	"strconv"

	"math"
	"sort"
	"strings"
	"time"

	"github.com/idlewatt/idlewatt/analysis/judge"
	"github.com/idlewatt/idlewatt/hostclock"
	"github.com/idlewatt/idlewatt/states/devslp"
	"github.com/idlewatt/idlewatt/units"
)

// DevSlp cycles in a capture: each "devslp-cycle:N" phase of a port (until
// the port's next phase) is one cycle; its pin changes are the meter's
// DEVSLP events (else the host's requests), its read the first I/O issued
// after the release. The measuring rig records, as StateNote events on the
// port, the cycle criteria ("devslp-criteria {json}"), what the drive and
// host claim ("devslp-support yes|no …|unknown") and host-side problems
// ("devslp-host …"). Analysis judges every cycle in its own sample pass, on
// its own clock fit (analysis/judge has the estimators).

// Note prefixes the rig writes (capture.StateNote values).
const (
	NoteDevSlpCriteria = "devslp-criteria "
	NoteDevSlpSupport  = "devslp-support "
	NoteDevSlpHost     = "devslp-host "
	// NoteDevSlpHostStall is the host's worst scheduling stall (ms) while a
	// cycle's read was out, at the read's issue time.
	NoteDevSlpHostStall = "devslp-host-stall-ms "
)

// devslpIO is one I/O of a DevSlp phase.
type devslpIO struct {
	issue, complete hostclock.Time
	err             bool
}

// devslpInfo is pass 1's DevSlp bookkeeping, by port.
type devslpInfo struct {
	io       map[int][]devslpIO
	criteria map[int]judge.Criteria
	support  map[int]string
	host     map[int][]string
	stalls   map[int][]stall
	inPhase  map[int]bool // the port's current phase is a DevSlp one
	// since is when the port's current DevSlp phase began (in[port]);
	// spans are its DevSlp phases that have ended, on the host clock. A
	// capture's records are in file order, and a writer may put an I/O
	// chunk after a later phase's event (one that rewrote the capture,
	// as repair does): an I/O is the DevSlp phase's by its time.
	since map[int]int64
	spans map[int][]span
	// loose are a port's I/O outside DevSlp phases, up to maxLooseIO: the
	// probe reads of cycles found from the pin alone (pinCycles), in a
	// capture without the rig's phases.
	loose map[int][]devslpIO
}

// maxLooseIO bounds the I/O kept per port outside DevSlp phases (24 B
// each): past it, a pin-only cycle after the last kept read has no probe
// and its exit is not judged.
const maxLooseIO = 1 << 17

// stall is a host stall note: at host time t, ms long.
type stall struct {
	t  hostclock.Time
	ms float64
}

func (di *devslpInfo) init() {
	di.io, di.criteria, di.support, di.host, di.inPhase = map[int][]devslpIO{}, map[int]judge.Criteria{}, map[int]string{}, map[int][]string{}, map[int]bool{}
	di.stalls, di.since, di.spans, di.loose = map[int][]stall{}, map[int]int64{}, map[int][]span{}, map[int][]devslpIO{}
}

// phase notes a phase change at host time t (port 0: every port).
func (di *devslpInfo) phase(port int, name string, t int64) {
	in := strings.HasPrefix(name, "devslp")
	set := func(p int) {
		was := di.inPhase[p]
		switch {
		case in && !was:
			di.since[p] = t
		case !in && was:
			di.spans[p] = append(di.spans[p], span{di.since[p], t})
		}
		di.inPhase[p] = in
	}
	if port == 0 {
		for p := range di.inPhase {
			if p != 0 {
				set(p)
			}
		}
	}
	set(port)
}

func (di *devslpInfo) ioEvent(port int, issue, complete hostclock.Time, err bool) {
	p := port
	if _, ok := di.inPhase[port]; !ok {
		p = 0
	}
	in := di.inPhase[p] && int64(issue) >= di.since[p]
	for _, q := range []int{port, 0} {
		for _, sp := range di.spans[q] {
			in = in || (int64(issue) >= sp.s && int64(issue) < sp.e)
		}
	}
	if in {
		di.io[port] = append(di.io[port], devslpIO{issue, complete, err})
	} else if len(di.loose[port]) < maxLooseIO {
		di.loose[port] = append(di.loose[port], devslpIO{issue, complete, err})
	}
}

func (di *devslpInfo) note(port int, t hostclock.Time, v string) {
	switch {
	case strings.HasPrefix(v, NoteDevSlpHostStall):
		if ms, err := strconv.ParseFloat(strings.TrimPrefix(v, NoteDevSlpHostStall), 64); err == nil && ms >= 0 && !math.IsInf(ms, 0) {
			di.stalls[port] = append(di.stalls[port], stall{t, ms})
		}
	case strings.HasPrefix(v, NoteDevSlpCriteria):
		var c judge.Criteria
		if json.Unmarshal([]byte(strings.TrimPrefix(v, NoteDevSlpCriteria)), &c) == nil {
			di.criteria[port] = c
		}
	case strings.HasPrefix(v, NoteDevSlpSupport):
		di.support[port] = strings.TrimSpace(strings.TrimPrefix(v, NoteDevSlpSupport))
	case strings.HasPrefix(v, NoteDevSlpHost):
		di.host[port] = append(di.host[port], strings.TrimSpace(strings.TrimPrefix(v, NoteDevSlpHost)))
	}
}

// devslpCycles finds a port's cycles: phases, pins (host-time spans) and reads.
// A meter pin span that does not close inside the cycle (an event lost at
// the end of the stream) gives way to the host's requests.
func devslpCycles(ps *phaseSet, port int, pins, hostPins []span, ios, loose []devslpIO, stalls []stall) (cycles []judge.Timing, unjudged int) {
	var ev []phaseEvent
	for _, e := range ps.events {
		if e.port == 0 || e.port == port {
			ev = append(ev, e)
		}
	}
	sort.SliceStable(ev, func(i, j int) bool { return ev[i].t < ev[j].t })
	sort.Slice(ios, func(a, b int) bool { return ios[a].issue < ios[b].issue })
	var out []judge.Timing
	n, phased := 0, false
	for i, e := range ev {
		phased = phased || strings.Contains(e.name, "devslp-cycle:") // also a cycle a window cut (CutCyclePrefix)
		if !strings.HasPrefix(e.name, "devslp-cycle:") {
			continue
		}
		n++
		tm := judge.Timing{Cycle: n, Start: hostclock.Time(e.t), End: math.MaxInt64 - 1, EntryOnly: strings.HasSuffix(e.name, devslp.EntryPhaseSuffix)}
		if i+1 < len(ev) {
			tm.End = hostclock.Time(ev[i+1].t)
		}
		out = append(out, cycleTiming(tm, pins, hostPins, ios, stalls))
	}
	if !phased {
		all := append(append([]devslpIO(nil), ios...), loose...)
		sort.Slice(all, func(a, b int) bool { return all[a].issue < all[b].issue })
		return pinCycles(pins, hostPins, all, stalls)
	}
	return out, 0
}

// maxPinCycles bounds the cycles pinCycles judges: a line toggling every
// few samples (a hostile or miswired file) made 50 000 cycles of a 20 s
// export, 5 s of judging and a 34 MB report.json. As many as a rig runs
// at most (devslp.max_cycles ≤ 1000); the rest are counted in a note.
const maxPinCycles = 1000

// pinCycleSettle is how far before its assertion a cycle found from the
// pin alone begins, at most: the judge reads the resting level over the
// 300 ms before the pin and, when the cycle reaches back further, checks
// it against the whole stretch.
const pinCycleSettle = 2 * time.Second

// pinCycles are the cycles of a capture whose pin moved without any of
// the rig's devslp-cycle phases (a cycle a window cuts still has one,
// renamed, and is not judged) — another meter's file imported with a
// DEVSLP line (idlewatt import --devslp-line), a recording of a system
// whose host drove the pin: each assertion of the pin is a cycle, from
// pinCycleSettle before it (not before the previous release) to the next
// assertion or pinCycleSettle after its release, whichever is first. The
// meter's pin events are preferred to the host's.
func pinCycles(pins, hostPins []span, ios []devslpIO, stalls []stall) (out []judge.Timing, unjudged int) {
	set := pins
	if len(set) == 0 {
		set = hostPins
	}
	for k, sp := range set {
		s, e := hostclock.Time(sp.s), hostclock.Time(sp.e)
		if e <= s {
			continue
		}
		if len(out) == maxPinCycles {
			unjudged++
			continue
		}
		start := max(0, s.Add(-pinCycleSettle))
		if k > 0 {
			start = max(start, hostclock.Time(set[k-1].e))
		}
		// To the next assertion, but not past pinCycleSettle after the
		// release: the read and the return to the resting level come within
		// it, and a cycle's samples are held until it ends (a capture with
		// a pin cycle a minute held a minute of samples per drive).
		end := e.Add(pinCycleSettle)
		if k+1 < len(set) {
			end = min(end, hostclock.Time(set[k+1].s))
		}
		tm := judge.Timing{Cycle: len(out) + 1, Start: start, End: end}
		out = append(out, cycleTiming(tm, []span{sp}, nil, ios, stalls))
	}
	return out, unjudged
}

// cycleTiming fills tm's pin edges (the first pin span inside it, the
// meter's before the host's), the probe read after the release and the
// host's longest stall.
func cycleTiming(tm judge.Timing, pins, hostPins []span, ios []devslpIO, stalls []stall) judge.Timing {
	for _, set := range [][]span{pins, hostPins} {
		for _, sp := range set {
			if s, e := hostclock.Time(sp.s), hostclock.Time(sp.e); s >= tm.Start && s < tm.End && e < tm.End {
				tm.Assert, tm.Deassert = s, e
				break
			}
		}
		if tm.Assert != 0 {
			break
		}
	}
	if tm.Assert != 0 {
		// The host sends the release before the meter sees it, and reads
		// after its command returns: allow for the transit.
		const slack = 50 * time.Millisecond
		for _, x := range ios {
			if x.issue >= tm.Deassert.Add(-slack) && x.issue < tm.End {
				tm.ProbeIssue, tm.ProbeComplete, tm.ProbeErr = x.issue, x.complete, x.err
				break
			}
		}
	}
	for _, s := range stalls {
		if s.t >= tm.Start && s.t < tm.End {
			tm.HostStallMs = units.Milliseconds(math.Max(float64(tm.HostStallMs), s.ms))
		}
	}
	return tm
}

// devslpProc collects one drive's samples cycle by cycle and judges each
// when it ends, so memory holds one cycle (and the chart's).
type devslpProc struct {
	cycles []judge.Timing
	i      int
	buf    []judge.Sample
	next   []judge.Sample // the next cycle's samples while this one is collected
	jo     judge.JudgeOptions
	judged []judge.Cycle
	// chart: the first cycle that did not pass, else the first.
	chartCycle   int // index into judged, -1 none
	chartSamples []judge.Sample
	chartTiming  judge.Timing
}

func (p *devslpProc) add(w []float64, dt float64, t0 float64) {
	if p.i >= len(p.cycles) || len(w) == 0 {
		return
	}
	// A run wholly before the current cycle (and the next) adds nothing.
	last := hostclock.Time(t0 + dt*float64(len(w)-1))
	if last < p.cycles[p.i].Start && (p.i+1 >= len(p.cycles) || last < p.cycles[p.i+1].Start) {
		return
	}
	for k, x := range w {
		tk := hostclock.Time(math.Round(t0 + dt*float64(k))) // as Clock.Host rounds: a pin event's sample has the pin's time
		for p.i < len(p.cycles) && tk > p.cycles[p.i].End {
			p.flush()
		}
		if p.i >= len(p.cycles) {
			return
		}
		if tk >= p.cycles[p.i].Start {
			p.buf = append(p.buf, judge.Sample{T: tk, W: x})
		}
		// A pin-only cycle begins before the one before it ends (its
		// settle reaches back to that release): its samples are kept as
		// they come, whatever runs they come in. Before, only those of the
		// run that ended the cycle before were, so a cycle's resting level
		// and entry changed with the capture's chunking (an imported PPK2
		// export read a floor of 0.52–0.62 mW, run to run).
		if n := p.i + 1; n < len(p.cycles) && tk >= p.cycles[n].Start && tk <= p.cycles[n].End {
			p.next = append(p.next, judge.Sample{T: tk, W: x})
		}
	}
}

// flush judges the current cycle.
func (p *devslpProc) flush() {
	if p.i >= len(p.cycles) {
		return
	}
	tm := p.cycles[p.i]
	c := judge.Judge(tm, p.buf, p.jo)
	p.judged = append(p.judged, c)
	if p.chartCycle < 0 || (c.Outcome != judge.Pass && p.judged[p.chartCycle].Outcome == judge.Pass) {
		p.chartCycle = len(p.judged) - 1
		p.chartSamples = append(p.chartSamples[:0], p.buf...)
		p.chartTiming = tm
	}
	p.buf, p.next = p.next, p.buf[:0]
	p.i++
}

// finish judges the cycles not judged yet, on the samples they have.
func (p *devslpProc) finish() {
	for p.i < len(p.cycles) {
		p.flush()
	}
}

// devslpReport builds the drive's DevSlp section from its judged cycles.
func (d *driveProc) devslpReport(pass *pass1, port int) DevSlp {
	ds := DevSlp{Cycles: d.cycles, PinAssertedS: units.Seconds(float64(d.pinN) * d.clock.NsPerSample / 1e9), PinSource: d.pinSource,
		PowerW: judge.NoneW}
	p := d.ds
	support := pass.devslp.support[port]
	host := strings.Join(pass.devslp.host[port], "; ")
	cr, planned := pass.devslp.criteria[port]
	if p == nil {
		if planned || support != "" {
			// A DevSlp phase was planned for the drive but ran no cycle: not
			// supported, or a host cause (no pin), or it was cut short.
			if support == "" {
				support = "unknown"
			}
			if !planned {
				cr = judge.DefaultCriteria()
			}
			ds.Verdict = judge.Summarise(nil, cr, support, host)
		}
		ds.fill()
		return ds
	}
	p.finish()
	if support == "" {
		support = "unknown"
	}
	ds.Verdict = judge.Summarise(p.judged, p.jo.Criteria, support, host)
	for _, c := range p.judged {
		if c.EntryMs.Ok() {
			ds.CyclesEntered++
		}
	}
	if p.chartCycle >= 0 {
		d.devslpChart = &devslpChart{timing: p.chartTiming, cycle: p.judged[p.chartCycle], samples: p.chartSamples, limit: p.jo.Criteria.LimitW}
	}
	ds.fill()
	return ds
}

// fill copies the verdict's pooled quantities into the flat keys.
func (ds *DevSlp) fill() {
	v := &ds.Verdict
	if v.Outcome == "" {
		w, ms := judge.NoneW, judge.NoneMs
		*v = judge.Verdict{PreCycleW: w, PreCycleU95W: w, FloorW: w, FloorU95W: w, EntryMs: ms, EntryU95Ms: ms, RiseMs: ms, RiseU95Ms: ms, ExitMs: ms, ExitU95Ms: ms}
	}
	ds.Outcome, ds.Reason, ds.Support, ds.HostCause = v.Outcome, v.Reason, v.Support, v.HostCause
	ds.PreCycleW, ds.PreCycleU95W, ds.FloorW, ds.FloorU95W = v.PreCycleW, v.PreCycleU95W, v.FloorW, v.FloorU95W
	ds.EntryMs, ds.EntryU95Ms, ds.RiseMs, ds.RiseU95Ms, ds.ExitMs, ds.ExitU95Ms = v.EntryMs, v.EntryU95Ms, v.RiseMs, v.RiseU95Ms, v.ExitMs, v.ExitU95Ms
	ds.Entered = ds.CyclesEntered > 0
	ds.PowerW = ds.FloorW
	if len(v.Cycles) > 0 {
		ds.CycleResults = v.Cycles
		c := v.Criteria
		ds.Criteria = &c
	}
}

// devslpChart is what the DevSlp cycle chart draws.
type devslpChart struct {
	timing  judge.Timing
	cycle   judge.Cycle
	samples []judge.Sample
	limit   units.Watts
}

type namedDevSlpChart struct {
	name string
	port int
	c    *devslpChart
}

func (r *Report) addDevSlpChart(name string, port int, c *devslpChart) {
	if c != nil && len(c.samples) > 0 {
		r.devslpCharts = append(r.devslpCharts, namedDevSlpChart{name, port, c})
	}
}
