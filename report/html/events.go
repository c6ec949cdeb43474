package html

import (
	"fmt"
	"math"
	"sort"

	"github.com/idlewatt/idlewatt/capture"
	"github.com/idlewatt/idlewatt/meter"
)

// timeline is what the page draws besides power, read from the capture's
// event records (samples skipped) and put on the report's timeline.
type timeline struct {
	io       map[int]*ioBuckets // by port
	pins     map[int][][2]float64
	phases   []phaseBand
	marks    []mark
	channels []meter.Channel // the capture header's, for rail names
	// unattributed counts I/O on port 0 in a capture with several drives.
	unattributed uint64
}

// ioBuckets counts I/O by issue time per base bucket (sparse) and keeps the
// busy intervals [issue, complete], merged across gaps shorter than a
// bucket, for the activity strip.
type ioBuckets struct {
	k          []int64
	ops        []uint64
	bytes      []uint64
	busy       [][2]float64
	maxBusyCut bool
}

type phaseBand struct {
	Port       int     `json:"port"` // 0 = every drive
	Name       string  `json:"name"`
	Start, End float64 // s
}

type mark struct {
	T    float64 `json:"t"`
	Port int     `json:"port"`
	Text string  `json:"text"`
}

// maxBusy bounds the busy intervals kept per drive; past it the page says so.
const maxBusy = 200000

// readTimeline reads the capture's events. t0Host and width come from the
// pyramid (the report's timeline and its base bucket width).
func readTimeline(path string, p *Pyramid, ports []int, stop func() error) (*timeline, error) {
	if !regular(path) {
		return nil, fmt.Errorf("%s: not a regular file: its events cannot be read a second time", path)
	}
	r, err := capture.Open(path)
	if err != nil {
		return nil, err
	}
	defer r.Close()
	r.SkipSamples(true)
	tr := newTimelineReader(p, ports, r.Header().Channels)
	for {
		if stop != nil {
			if err := stop(); err != nil {
				return nil, err
			}
		}
		rec, err := r.Next()
		if err != nil {
			// At EOF, or where analysis has already reported the capture
			// ends: draw what was read.
			break
		}
		switch rec.Kind {
		case capture.KindIO:
			for _, e := range rec.IO {
				tr.io(e)
			}
		case capture.KindState:
			tr.state(rec.State)
		case capture.KindEvent:
			tr.event(rec.Event)
		}
	}
	return tr.end(ports), nil
}

// newTimelineReader starts the timeline of a capture with channels, for
// the drives of ports.
func newTimelineReader(p *Pyramid, ports []int, channels []meter.Channel) *timelineReader {
	tr := &timelineReader{p: p, w: p.width(), hostPins: map[int][]pinEv{}, meterPins: map[int][]pinEv{},
		tl: &timeline{io: map[int]*ioBuckets{}, pins: map[int][][2]float64{}, channels: channels}}
	if len(ports) == 1 {
		tr.single = ports[0]
	}
	for _, port := range ports {
		tr.tl.io[port] = &ioBuckets{}
	}
	return tr
}

// end is the timeline once every record has been taken.
func (tr *timelineReader) end(ports []int) *timeline {
	tr.pinSpans(ports)
	tr.phaseBands()
	return tr.tl
}

type pinEv struct {
	t        float64
	asserted bool
}

type phEv struct {
	t    float64
	port int
	name string
}

// timelineReader gathers a timeline from the capture's records.
type timelineReader struct {
	p         *Pyramid
	w         float64 // base bucket width (s)
	single    int     // the one drive port, if only one: where port-0 I/O goes
	tl        *timeline
	hostPins  map[int][]pinEv
	meterPins map[int][]pinEv
	phs       []phEv
}

// sec is a host time in seconds on the report's timeline.
func (tr *timelineReader) sec(host float64) float64 { return (host - tr.p.t0Host) / 1e9 }

// io adds one I/O to its drive's per-bucket counts and busy intervals.
func (tr *timelineReader) io(e capture.IOEvent) {
	port := e.Port
	if port == 0 {
		port = tr.single
	}
	b := tr.tl.io[port]
	if b == nil {
		if e.Port == 0 {
			tr.tl.unattributed++
		}
		return
	}
	w := tr.w
	a, z := tr.sec(float64(e.Issue)), tr.sec(float64(e.Complete))
	k := int64(math.Floor(a / w))
	if n := len(b.k); n > 0 && b.k[n-1] == k {
		b.ops[n-1]++
		b.bytes[n-1] += uint64(max(e.Size, 0))
	} else {
		b.k = append(b.k, k)
		b.ops = append(b.ops, 1)
		b.bytes = append(b.bytes, uint64(max(e.Size, 0)))
	}
	z = math.Max(z, a)
	if n := len(b.busy); n > 0 && a-b.busy[n-1][1] < w {
		b.busy[n-1][1] = math.Max(b.busy[n-1][1], z)
	} else if n < maxBusy {
		b.busy = append(b.busy, [2]float64{a, z})
	} else {
		b.maxBusyCut = true
	}
}

func (tr *timelineReader) state(e capture.StateEvent) {
	tl := tr.tl
	t := tr.sec(float64(e.Host))
	switch e.Kind {
	case capture.StateDevSlpPin:
		tr.hostPins[e.Port] = append(tr.hostPins[e.Port], pinEv{t, e.Value == "1"})
	case capture.StatePhase:
		tr.phs = append(tr.phs, phEv{t, e.Port, e.Value})
	case capture.StatePolicy:
		tl.marks = append(tl.marks, mark{t, e.Port, "policy " + e.Value})
	case capture.StateNote:
		tl.marks = append(tl.marks, mark{t, e.Port, e.Value})
	case capture.StatePortPower:
		tl.marks = append(tl.marks, mark{t, e.Port, "port power " + map[bool]string{true: "on", false: "off"}[e.Value == "1"]})
	}
}

// drawnState reports whether the timeline uses host state events of kind
// k (state's cases).
func drawnState(k capture.StateKind) bool {
	switch k {
	case capture.StateDevSlpPin, capture.StatePhase, capture.StatePolicy, capture.StateNote, capture.StatePortPower:
		return true
	}
	return false
}

// drawnEvent reports whether the timeline uses meter events of kind k
// (event's cases).
func drawnEvent(k meter.EventKind) bool {
	switch k {
	case meter.EventDevSlp, meter.EventOverCurrent, meter.EventOverrun, meter.EventDisconnect, meter.EventReconnect:
		return true
	}
	return false
}

func (tr *timelineReader) event(e meter.Event) {
	t := tr.sec(tr.p.clock.HostF(float64(e.Index)))
	switch e.Kind {
	case meter.EventDevSlp:
		tr.meterPins[e.Port] = append(tr.meterPins[e.Port], pinEv{t, e.Value == 1})
	case meter.EventOverCurrent, meter.EventOverrun, meter.EventDisconnect, meter.EventReconnect:
		tr.tl.marks = append(tr.tl.marks, mark{t, e.Port, fmt.Sprintf("meter: %v %d", e.Kind, e.Value)})
	}
}

// pinSpans: the meter's own pin events when it reported them, else the
// host's requests (port 0 = every drive), as analysis does.
func (tr *timelineReader) pinSpans(ports []int) {
	tl, end := tr.tl, tr.p.last
	for _, port := range ports {
		ev := tr.meterPins[port]
		if len(ev) == 0 {
			ev = append(append([]pinEv(nil), tr.hostPins[port]...), tr.hostPins[0]...)
			sort.SliceStable(ev, func(i, j int) bool { return ev[i].t < ev[j].t })
		}
		open, from := false, 0.0
		for _, e := range ev {
			switch {
			case e.asserted && !open:
				open, from = true, e.t
			case !e.asserted && open:
				open = false
				tl.pins[port] = append(tl.pins[port], [2]float64{from, e.t})
			}
		}
		if open {
			tl.pins[port] = append(tl.pins[port], [2]float64{from, math.Max(end, from)})
		}
	}
}

// phaseBands: each phase runs until the next phase event for its port (or
// for every port); "end" only ends one.
func (tr *timelineReader) phaseBands() {
	phs, end := tr.phs, tr.p.last
	sort.SliceStable(phs, func(i, j int) bool { return phs[i].t < phs[j].t })
	for i, e := range phs {
		if e.name == "end" {
			continue
		}
		stop := math.Max(end, e.t)
		for _, f := range phs[i+1:] {
			if f.port == e.port || f.port == 0 || e.port == 0 {
				stop = f.t
				break
			}
		}
		tr.tl.phases = append(tr.tl.phases, phaseBand{Port: e.port, Name: e.name, Start: e.t, End: stop})
	}
}
