package live

import (
	"fmt"
	"math"
	"sync"
	"sync/atomic"
	"time"

	"github.com/idlewatt/idlewatt/capture"
	"github.com/idlewatt/idlewatt/capture/notes"
	"github.com/idlewatt/idlewatt/hostclock"
	"github.com/idlewatt/idlewatt/meter"
)

// Options configure a View. Zero values take the defaults.
type Options struct {
	// Fine is how far back the fine buckets (1 ms, or each sample below
	// 1 kS/s) reach (default 2 min).
	Fine time.Duration
	// Long is how far back the coarse buckets (64 fine ones) reach
	// (default 1 h).
	Long time.Duration
	// Capture is the capture being recorded: notes made on the page are
	// added to its notes file (capture/notes). "" = the page cannot
	// annotate.
	Capture string
	// Title heads the page.
	Title string
	// AnyHost serves requests for any host name (the view was opened
	// beyond loopback on purpose); otherwise only for IP addresses and
	// localhost, so a page on another site cannot reach it by DNS rebinding.
	AnyHost bool
	// Queue is how many blocks and events may wait for the view
	// (default 4096); past it they are skipped, never waited for.
	Queue int
}

const (
	fineTarget   = 1e-3 // s: the fine buckets' width at rates above 1 kS/s
	coarseFactor = 64   // fine buckets per coarse bucket
	chanRing     = 1 << 15
	maxEvents    = 1 << 16
	markKeep     = 32 // recent marks the clock offset is chosen from
)

// View is a recording's live view: a capture/record Observer (also an
// IOObserver and a MarkObserver) whose calls copy what they are given into
// a bounded queue and return — a full queue skips the block (counted, and
// drawn as missing), it never waits — and an http.Handler (Handler) that
// serves the page and its data. A goroutine of its own turns the queue
// into per-drive envelope buckets; Close stops it.
type View struct {
	o       Options
	in      chan item
	skipped atomic.Uint64 // samples skipped because the queue was full
	skipEv  atomic.Uint64 // events skipped likewise
	quit    chan struct{}
	wg      sync.WaitGroup
	once    sync.Once

	mu      sync.Mutex
	started bool
	ended   bool
	hdr     capture.Header
	dt      float64 // s per sample (the meter's nominal rate)
	per     uint64  // samples per fine bucket
	chans   []*chanBuf
	ports   []*portView
	byPort  map[int]*portView
	base    float64 // host ns of meter sample 0
	marks   []markEst
	ev      eventLog
	io      map[ioKey]*ioCount
	ioOrder []ioKey
	gaps    uint64 // samples the meter reported missing
}

type markEst struct{ rtt, base float64 }

type ioKey struct {
	port int
	k    int64
}

type ioCount struct{ ops, bytes uint64 }

// chanBuf holds a rail's recent samples by index, so a drive's total can
// be summed sample by sample across its rails.
type chanBuf struct {
	port     *portView
	store    *store
	p, i     []float32
	idx      []uint64 // sample index + 1; 0 = none
	frontier uint64   // every index before it has arrived or is missing
}

// portView is one drive: its rails and the sum over them.
type portView struct {
	port      int
	name      string
	nvme      bool
	rails     []*chanBuf
	railNames []string
	total     *store
	next      uint64 // the next sample index to total
	meterPins bool
	busyID    int
	busyOpen  bool
	busyA     float64
	busyB     float64
	busySent  float64 // the open interval's end as last logged
}

type itemKind uint8

const (
	itemBlock itemKind = iota + 1
	itemGap
	itemState
	itemEvent
	itemIO
	itemMark
	itemSync // tests: closes sync once everything before it is taken
)

type item struct {
	kind  itemKind
	ch    int
	start uint64
	p, i  []float32
	gap   meter.Gap
	state capture.StateEvent
	event meter.Event
	io    []capture.IOEvent
	mark  meter.MarkEcho
	sync  chan struct{}
}

// New returns a View; it starts working at the recording's Start.
func New(o Options) *View {
	if o.Fine <= 0 {
		o.Fine = 2 * time.Minute
	}
	if o.Long <= 0 {
		o.Long = time.Hour
	}
	if o.Queue <= 0 {
		o.Queue = 4096
	}
	v := &View{o: o, in: make(chan item, o.Queue), quit: make(chan struct{}), byPort: map[int]*portView{}, io: map[ioKey]*ioCount{}}
	v.ev.init(maxEvents)
	v.wg.Go(v.run)
	return v
}

// Close stops the view's goroutine; the handler keeps serving what it has.
func (v *View) Close() {
	v.once.Do(func() { close(v.quit); v.wg.Wait() })
}

func (v *View) put(it item, samples int) {
	select {
	case v.in <- it:
	default:
		if samples > 0 {
			v.skipped.Add(uint64(samples))
		} else {
			v.skipEv.Add(1)
		}
	}
}

// Start implements record.Observer: it lays out the drives of header h.
func (v *View) Start(h capture.Header) {
	v.mu.Lock()
	defer v.mu.Unlock()
	v.hdr, v.started = h, true
	rate := float64(h.RateHz)
	if !(rate > 0) || math.IsInf(rate, 0) {
		rate = 1
	}
	v.dt = 1 / rate
	v.per = max(1, uint64(math.Round(fineTarget*rate)))
	fineW := float64(v.per) * v.dt
	fineN := nextPow2(v.o.Fine.Seconds() / fineW)
	coarseN := nextPow2(v.o.Long.Seconds() / (fineW * coarseFactor))
	names := map[int]capture.DriveInfo{}
	for _, d := range h.Drives {
		names[d.Port] = d
	}
	for _, c := range h.Channels {
		pv := v.byPort[c.Port]
		if pv == nil {
			d := names[c.Port]
			name := d.Name
			if name == "" {
				name = fmt.Sprintf("port %d", c.Port)
			}
			pv = &portView{port: c.Port, name: name, nvme: d.Interface == capture.InterfaceNVMe, total: newStore(v.per, coarseFactor, fineN, coarseN)}
			v.byPort[c.Port] = pv
			v.ports = append(v.ports, pv)
		}
		cb := &chanBuf{port: pv, store: newStore(v.per, coarseFactor, fineN, coarseN),
			p: make([]float32, chanRing), i: make([]float32, chanRing), idx: make([]uint64, chanRing)}
		pv.rails = append(pv.rails, cb)
		pv.railNames = append(pv.railNames, c.Rail.String())
		v.chans = append(v.chans, cb)
	}
	v.base = float64(h.StartHost)
	if v.o.Capture != "" {
		if ns, err := notes.Read(v.o.Capture); err == nil {
			for _, n := range ns {
				v.noteEvent(n)
			}
		}
	}
}

// Samples implements record.Observer: the block's power and current are
// copied and queued.
func (v *View) Samples(b *meter.Block) {
	n := min(len(b.V), len(b.I))
	if n == 0 {
		return
	}
	it := item{kind: itemBlock, ch: b.Channel, start: b.Start, p: make([]float32, n), i: make([]float32, n)}
	for j := range n {
		it.p[j] = float32(b.Power(j))
		it.i[j] = float32(b.I[j])
	}
	v.put(it, n)
}

// Gap implements record.Observer.
func (v *View) Gap(g meter.Gap) { v.put(item{kind: itemGap, gap: g}, 0) }

// Stats implements record.Observer (the view shows no link counters).
func (v *View) Stats(meter.Stats) {}

// State implements record.Observer.
func (v *View) State(e capture.StateEvent) { v.put(item{kind: itemState, state: e}, 0) }

// Event implements record.Observer.
func (v *View) Event(e meter.Event) { v.put(item{kind: itemEvent, event: e}, 0) }

// IO implements record.IOObserver.
func (v *View) IO(evs []capture.IOEvent) {
	v.put(item{kind: itemIO, io: append([]capture.IOEvent(nil), evs...)}, 0)
}

// Mark implements record.MarkObserver.
func (v *View) Mark(m meter.MarkEcho) { v.put(item{kind: itemMark, mark: m}, 0) }

// End says the recording has stopped (the page says so).
func (v *View) End() {
	v.mu.Lock()
	v.ended = true
	v.mu.Unlock()
}

func (v *View) run() {
	for {
		select {
		case <-v.quit:
			return
		case it := <-v.in:
			if it.kind == itemSync {
				close(it.sync)
				continue
			}
			v.mu.Lock()
			if v.started {
				v.take(it)
			}
			v.mu.Unlock()
		}
	}
}

// host is a host time in seconds on the view's timeline (meter sample 0
// is 0 s, as in the report).
func (v *View) host(t hostclock.Time) float64 { return (float64(t) - v.base) / 1e9 }

func (v *View) take(it item) {
	switch it.kind {
	case itemBlock:
		if it.ch < 0 || it.ch >= len(v.chans) {
			return
		}
		c := v.chans[it.ch]
		for j := range it.p {
			idx := it.start + uint64(j)
			s := idx & (chanRing - 1)
			c.p[s], c.i[s], c.idx[s] = it.p[j], it.i[j], idx+1
			c.store.add(idx, it.p[j], it.i[j])
		}
		c.frontier = max(c.frontier, it.start+uint64(len(it.p)))
		c.store.setDone(c.frontier)
		v.total(c.port)
	case itemGap:
		g := it.gap
		v.gaps += g.Count
		for ch, c := range v.chans {
			if g.Channel == -1 || g.Channel == ch {
				c.frontier = max(c.frontier, g.Start+g.Count)
				c.store.setDone(c.frontier)
			}
		}
		for _, pv := range v.ports {
			v.total(pv)
		}
	case itemMark:
		m := it.mark
		rtt := float64(m.HostRecv - m.HostSent)
		if rtt < 0 {
			return
		}
		est := (float64(m.HostSent)+float64(m.HostRecv))/2 - float64(m.MeterIndex)*v.dt*1e9
		v.marks = append(v.marks, markEst{rtt, est})
		if len(v.marks) > markKeep {
			v.marks = v.marks[1:]
		}
		best := v.marks[0]
		for _, x := range v.marks {
			if x.rtt < best.rtt {
				best = x
			}
		}
		v.base = best.base
	case itemEvent:
		v.meterEvent(it.event)
	case itemState:
		v.stateEvent(it.state)
	case itemIO:
		for _, e := range it.io {
			v.ioEvent(e)
		}
	}
}

// total sums a drive's rails over every sample index all of them have
// reached; a rail more than half its buffer behind the others counts as
// missing there.
func (v *View) total(pv *portView) {
	lim, hi := uint64(math.MaxUint64), uint64(0)
	for _, c := range pv.rails {
		lim, hi = min(lim, c.frontier), max(hi, c.frontier)
	}
	if hi > lim+chanRing/2 {
		lim = hi - chanRing/2
	}
	if lim <= pv.next {
		return
	}
	if lim-pv.next > chanRing {
		pv.next = lim - chanRing
	}
	for idx := pv.next; idx < lim; idx++ {
		s := idx & (chanRing - 1)
		var sum float32
		ok := true
		for _, c := range pv.rails {
			if c.idx[s] != idx+1 {
				ok = false
				break
			}
			sum += c.p[s]
		}
		if ok {
			pv.total.add(idx, sum, 0)
		}
	}
	pv.next = lim
	pv.total.setDone(lim)
}

func (v *View) meterEvent(e meter.Event) {
	t := float64(e.Index) * v.dt
	switch e.Kind {
	case meter.EventDevSlp:
		if pv := v.byPort[e.Port]; pv != nil {
			pv.meterPins = true
		}
		v.ev.add(liveEvent{Kind: "pin", Port: e.Port, T: t, On: e.Value == 1, Src: "meter"})
	case meter.EventOverCurrent, meter.EventOverrun, meter.EventDisconnect, meter.EventReconnect:
		v.ev.add(liveEvent{Kind: "mark", Port: e.Port, T: t, Text: fmt.Sprintf("meter: %v %d", e.Kind, e.Value)})
	}
}

func (v *View) stateEvent(e capture.StateEvent) {
	t := v.host(e.Host)
	switch e.Kind {
	case capture.StatePhase:
		v.ev.add(liveEvent{Kind: "phase", Port: e.Port, T: t, Text: e.Value})
	case capture.StateDevSlpPin:
		v.ev.add(liveEvent{Kind: "pin", Port: e.Port, T: t, On: e.Value == "1", Src: "host"})
	case capture.StatePolicy:
		v.ev.add(liveEvent{Kind: "mark", Port: e.Port, T: t, Text: "policy " + e.Value})
	case capture.StateNote:
		v.ev.add(liveEvent{Kind: "mark", Port: e.Port, T: t, Text: e.Value})
	case capture.StatePortPower:
		v.ev.add(liveEvent{Kind: "mark", Port: e.Port, T: t, Text: "port power " + map[bool]string{true: "on", false: "off"}[e.Value == "1"]})
	}
}

// ioEvent counts an I/O by its issue time's fine bucket and extends its
// drive's busy interval (merged across gaps shorter than a fine bucket).
func (v *View) ioEvent(e capture.IOEvent) {
	pv := v.byPort[e.Port]
	if pv == nil && e.Port == 0 && len(v.ports) == 1 {
		pv = v.ports[0]
	}
	if pv == nil {
		return
	}
	a, z := v.host(e.Issue), v.host(e.Complete)
	z = math.Max(z, a)
	w := float64(v.per) * v.dt
	key := ioKey{pv.port, int64(math.Floor(a / w))}
	c := v.io[key]
	if c == nil {
		c = &ioCount{}
		v.io[key] = c
		v.ioOrder = append(v.ioOrder, key)
	}
	c.ops++
	c.bytes += uint64(max(e.Size, 0))
	if pv.busyOpen && a-pv.busyB < w {
		pv.busyB = math.Max(pv.busyB, z)
		return
	}
	if pv.busyOpen {
		v.ev.add(liveEvent{Kind: "busy", Port: pv.port, ID: pv.busyID, T: pv.busyA, T2: pv.busyB})
	}
	pv.busyID++
	pv.busyOpen, pv.busyA, pv.busyB = true, a, z
}

// flush moves the I/O counted since the last flush, and each drive's open
// busy interval, into the event log (the page polls; call with v.mu held).
func (v *View) flush() {
	for _, k := range v.ioOrder {
		c := v.io[k]
		v.ev.add(liveEvent{Kind: "io", Port: k.port, K: k.k, Ops: c.ops, Bytes: c.bytes})
	}
	clear(v.io)
	v.ioOrder = v.ioOrder[:0]
	for _, pv := range v.ports {
		if pv.busyOpen && pv.busyB != pv.busySent {
			pv.busySent = pv.busyB
			v.ev.add(liveEvent{Kind: "busy", Port: pv.port, ID: pv.busyID, T: pv.busyA, T2: pv.busyB})
		}
	}
}

func (v *View) noteEvent(n notes.Note) {
	e := liveEvent{Kind: "note", T: n.AtS, Text: n.Text}
	if n.ToS != nil {
		e.T2 = *n.ToS
	}
	v.ev.add(e)
}
