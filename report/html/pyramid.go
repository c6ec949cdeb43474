package html

import (
	"math"

	"github.com/idlewatt/idlewatt/analysis"
	"github.com/idlewatt/idlewatt/meter"
	"github.com/idlewatt/idlewatt/units"
)

// Budget sizes the embedded data. The defaults keep a 10-minute two-drive
// run at 10 kS/s under 5 MB of HTML and a 1-hour one under 20 MB.
type Budget struct {
	// ShortBytes is the bucket data allowed for a run up to ShortS long;
	// LongBytes for one of LongS or more; linear in between.
	ShortBytes, LongBytes int
	ShortS, LongS         float64
	// RawShare is the part of the budget full-resolution windows may take
	// besides the buckets (0: 0.15).
	RawShare float64
}

func (b Budget) rawShare() float64 {
	if b.RawShare > 0 {
		return b.RawShare
	}
	return rawShare
}

// DefaultBudget is the budget Write uses when Options.Budget is zero.
var DefaultBudget = Budget{ShortBytes: 7 << 19, LongBytes: 14 << 20, ShortS: 600, LongS: 3600} // 3.5 MiB, 14 MiB

func (b Budget) bytes(durS float64) float64 {
	switch {
	case durS <= b.ShortS:
		return float64(b.ShortBytes)
	case durS >= b.LongS:
		return float64(b.LongBytes)
	}
	f := (durS - b.ShortS) / (b.LongS - b.ShortS)
	return float64(b.ShortBytes) + f*float64(b.LongBytes-b.ShortBytes)
}

// Embedded bytes per base bucket of one drive, as base64 text: total power
// min, max, energy (float32) and sample count (uint32), plus two rails'
// min, max, energy, charge and count at railFactor times the width.
const (
	railFactor     = 4
	bytesPerBucket = (16 + 2*20/railFactor) * 4 / 3
)

// level is one series of time buckets [k·w, (k+1)·w) on the report's
// timeline, k from k0. A bucket holds the min and max power of its
// samples, the sum of their power (so energy = sum·dt exactly as analysis
// integrates it), the sum of current (rails only) and the sample count.
//
// The extremes are kept as the page has them, float32: rounding keeps the
// order of values, so the least of rounded values is the rounded least,
// bucket by bucket and through halve alike. That and a drive's level
// holding no current sums make a bucket 20 bytes (a drive's) or 28 (a
// rail's), not 36: the levels are the largest thing the sample pass
// keeps, and the less it keeps, the less often the garbage collector runs
// under the command's memory limit.
type level struct {
	k0       int64
	min, max []float32
	sumW     []float64
	sumI     []float64 // rails only: nil for a drive's level
	n        []uint32
	rail     bool
}

// add puts sample power p (and current i) into bucket k.
func (l *level) add(k int64, p, i float64) { l.addRun(k, p, p, p, i, 1) }

// addRun puts n samples with the given min, max, power sum and current sum
// into bucket k.
func (l *level) addRun(k int64, mn, mx, sw, si float64, n uint32) {
	if len(l.n) == 0 {
		l.k0 = k
	}
	j := k - l.k0
	if j < 0 {
		// Samples arrive in time order per drive; an earlier one (clock
		// fit noise across a block edge) joins the first bucket.
		j = 0
	}
	if int64(len(l.n)) <= j {
		l.extend(int(j) + 1)
	}
	l.min[j] = min(l.min[j], float32(mn))
	l.max[j] = max(l.max[j], float32(mx))
	l.sumW[j] += sw
	if l.rail {
		l.sumI[j] += si
	}
	l.n[j] += n
}

// extend appends empty buckets up to n.
func (l *level) extend(n int) {
	for i := len(l.n); i < n; i++ {
		l.min = append(l.min, float32(math.Inf(1)))
		l.max = append(l.max, float32(math.Inf(-1)))
		l.sumW = append(l.sumW, 0)
		if l.rail {
			l.sumI = append(l.sumI, 0)
		}
		l.n = append(l.n, 0)
	}
}

// runs calls f for each stretch [j0, j1) of the n samples t + j·dt that
// share a bucket of width w, with the bucket's index: the bucket is found
// once per stretch, not once per sample. A sample's bucket is
// floor((t + j·dt)/w), as computed per sample.
func runs(t, dt, w float64, n int, f func(k int64, j0, j1 int)) {
	inv := 1 / w
	idx := func(j int) int64 { return int64(math.Floor((t + dt*float64(j)) * inv)) }
	if n <= 0 {
		return
	}
	// The bucket of a stretch's first sample is the one the last stretch
	// found past its end: it is carried over, not found again.
	for j, k := 0, idx(0); j < n; {
		e := int(math.Ceil((float64(k+1)*w - t) / dt))
		e = min(max(e, j+1), n)
		for e > j+1 && idx(e-1) > k {
			e--
		}
		next := k
		for e < n {
			if next = idx(e); next != k {
				break
			}
			e++
		}
		f(k, j, e)
		j, k = e, next
	}
}

// halve merges buckets in pairs (2k, 2k+1) → k: the width doubles.
func (l *level) halve() {
	if len(l.n) == 0 {
		return
	}
	nk0 := floorDiv2(l.k0)
	out := 0
	for j := 0; j < len(l.n); j++ {
		k := l.k0 + int64(j)
		o := int(floorDiv2(k) - nk0)
		if o >= out {
			l.min[o], l.max[o], l.sumW[o], l.n[o] = l.min[j], l.max[j], l.sumW[j], l.n[j]
			if l.rail {
				l.sumI[o] = l.sumI[j]
			}
			out = o + 1
			continue
		}
		l.min[o] = min(l.min[o], l.min[j])
		l.max[o] = max(l.max[o], l.max[j])
		l.sumW[o] += l.sumW[j]
		if l.rail {
			l.sumI[o] += l.sumI[j]
		}
		l.n[o] += l.n[j]
	}
	l.k0 = nk0
	l.min, l.max, l.sumW, l.n = l.min[:out], l.max[:out], l.sumW[:out], l.n[:out]
	if l.rail {
		l.sumI = l.sumI[:out]
	}
}

func floorDiv2(k int64) int64 { return k >> 1 }

// stateRun says a drive is in State from T (s) on.
type stateRun struct {
	T   float64
	S   analysis.State
	Gap bool // no samples from T on (the page draws nothing, residency skips it)
}

// Pyramid is an analysis.SampleSink that keeps, per drive, the base level
// of a min/max/sum pyramid (the page builds the coarser levels) and, per
// rail, the same at railFactor times the width. The base width starts at one
// sample period and doubles whenever the buckets would outgrow the budget
// for the run's length so far, so memory and file size are bounded however
// long the capture is.
type Pyramid struct {
	budget Budget
	clock  analysis.Clock
	t0Host float64
	dt     float64
	shift  uint // base width = dt·2^shift
	first  float64
	last   float64
	seen   bool
	drives map[int]*level
	// Rails are filled on analysis' reading goroutine, concurrently with
	// the drives: they keep their own width (dt·2^rshift) and time range,
	// and finish brings both to one grid.
	rails         map[int]*level // by channel
	rshift        uint
	rfirst, rlast float64
	rseen         bool
	states        map[int][]stateRun
	// maxStates bounds the state runs kept per drive; past it the page
	// says the shading is cut short.
	maxStates int
	cut       map[int]bool
	// Per drive: where its last run of samples ended, to mark gaps in the
	// state runs (states change only at DriveState calls).
	runEnd map[int]float64
	// Full-resolution windows (raw.go): pin edges found before the
	// samples (from analysis' first pass, or read from edgesFrom at Begin
	// when that pass handed none), windows per port once the clock is
	// known.
	edges      []pinEdge
	edgesFrom  string // NewPyramidFor's capture ("": none, NewPyramid)
	raw        map[int][]rawWin
	rawCursor  map[int]int
	rawN       int // samples kept
	rawDropped int // windows left out for the budget
	peaks      map[int]*peakWin
	// The capture's records from analysis' first pass (firstpass.go).
	fp firstPassRecords
}

// NewPyramid returns an empty Pyramid for analysis.Options.Samples.
func NewPyramid(b Budget) *Pyramid {
	if b.ShortBytes <= 0 {
		b = DefaultBudget
	}
	return &Pyramid{budget: b, drives: map[int]*level{}, rails: map[int]*level{}, states: map[int][]stateRun{}, maxStates: 200000, cut: map[int]bool{}, runEnd: map[int]float64{}, peaks: map[int]*peakWin{}}
}

// Begin implements analysis.SampleSink.
func (p *Pyramid) Begin(c analysis.Clock, t0Host float64) {
	p.clock, p.t0Host, p.dt = c, t0Host, c.NsPerSample/1e9
	if p.edgesFrom != "" {
		if p.fp.done {
			p.edges = p.fp.edges.edges
		} else {
			p.edges = readEdges(p.edgesFrom)
		}
	}
	p.rawWindows()
}

// width is the base bucket width in seconds.
func (p *Pyramid) width() float64 { return p.dt * float64(uint64(1)<<p.shift) }

// maxT bounds the times the pyramid accepts (s on the report's timeline,
// about 30 years): bucket indices stay far inside int64.
const maxT = 1e9

// usable reports whether a run at t, dt apart, fits the pyramid's grid: a
// finite time in range and the sample period Begin gave (energies are
// sums times that period).
func (p *Pyramid) usable(t, dt float64, n int) bool {
	end := t + dt*float64(n)
	return n > 0 && p.dt > 0 && math.Abs(dt-p.dt) <= 1e-6*p.dt && !math.IsNaN(t) && math.Abs(t) < maxT && math.Abs(end) < maxT
}

// DriveSamples implements analysis.SampleSink.
func (p *Pyramid) DriveSamples(port int, t, dt float64, w []float64) {
	if !p.usable(t, dt, len(w)) {
		return
	}
	l := p.drives[port]
	if l == nil {
		l = &level{}
		p.drives[port] = l
	}
	if !p.seen {
		p.seen, p.first = true, t
	}
	p.last = max(p.last, t+dt*float64(len(w)-1))
	if end, ok := p.runEnd[port]; ok && t > end+dt/2 {
		if rs := p.states[port]; len(rs) > 0 && len(rs)+2 <= p.maxStates {
			last := rs[len(rs)-1]
			p.states[port] = append(rs, stateRun{T: end, Gap: true}, stateRun{T: t, S: last.S})
		}
	}
	p.runEnd[port] = t + dt*float64(len(w))
	p.keepRaw(port, t, dt, w)
	p.followPeak(port, t, dt, w)
	// A run far past the last one (a long gap in the capture) must not
	// allocate its empty buckets at the current width: coarsen first.
	for p.span(l, t+dt*float64(len(w)-1), p.width()) > p.limit() && p.shift < maxShift {
		p.coarsen()
	}
	// The builtin min and max give what math.Min and math.Max give (NaN,
	// -0 and ±Inf alike) without a call per sample.
	runs(t, dt, p.width(), len(w), func(k int64, j0, j1 int) {
		if mn, mx, sum, n := finiteStats(w[j0:j1]); n > 0 {
			l.addRun(k, mn, mx, sum, 0, n)
		}
	})
	p.grow()
}

// RailBlock implements analysis.SampleSink. It runs on analysis' reading
// goroutine, concurrently with DriveSamples, and touches only the rail
// fields.
func (p *Pyramid) RailBlock(t, dt float64, b *meter.Block) {
	n := min(len(b.V), len(b.I))
	if !p.usable(t, dt, n) {
		return
	}
	l := p.rails[b.Channel]
	if l == nil {
		l = &level{rail: true}
		p.rails[b.Channel] = l
	}
	if !p.rseen {
		p.rseen, p.rfirst = true, t
	}
	p.rlast = max(p.rlast, t+dt*float64(n-1))
	rlimit := func() float64 {
		return 2 * p.budget.bytes(p.rlast-p.rfirst) / float64(bytesPerBucket) / railFactor * float64(len(p.rails)) / 2
	}
	for p.span(l, t+dt*float64(n-1), p.railWidth()) > rlimit() && p.rshift < maxShift {
		p.rshift++
		for _, l := range p.rails {
			l.halve()
		}
	}
	bv, bi := b.V[:n], b.I[:n]
	runs(t, dt, p.railWidth(), n, func(k int64, j0, j1 int) {
		if mn, mx, sw, si, c := railStats(bv[j0:j1], bi[j0:j1]); c > 0 {
			l.addRun(k, mn, mx, sw, si, c)
		}
	})
	// Rails may hold up to twice their share of the budget while they
	// grow, so that they end no coarser than railFactor drive buckets.
	for {
		total := 0
		for _, l := range p.rails {
			total += len(l.n)
		}
		if float64(total) <= rlimit() || p.rshift >= maxShift {
			return
		}
		p.rshift++
		for _, l := range p.rails {
			l.halve()
		}
	}
}

// finiteStats is the least, the greatest and the sum (in order) of the
// finite values of w, and how many there are (mn +Inf, mx −Inf with
// none). The builtin min and max give what math.Min and math.Max give
// (−0 below +0) without a call per sample; over finite values they are
// exact and their order does not matter, so they run as two chains
// (even and odd samples), the sum as one, in order: the bits of the
// sample-by-sample loop (TestBucketStats).
func finiteStats(w []float64) (mn, mx, sum float64, n uint32) {
	mn, mx = math.Inf(1), math.Inf(-1)
	mn1, mx1 := mn, mx
	j := 0
	for ; j+2 <= len(w); j += 2 {
		x0, x1 := w[j], w[j+1]
		if x0-x0 == 0 { // finite: NaN and ±Inf give NaN
			mn, mx, sum, n = min(mn, x0), max(mx, x0), sum+x0, n+1
		}
		if x1-x1 == 0 {
			mn1, mx1, sum, n = min(mn1, x1), max(mx1, x1), sum+x1, n+1
		}
	}
	if j < len(w) {
		if x := w[j]; x-x == 0 {
			mn, mx, sum, n = min(mn, x), max(mx, x), sum+x, n+1
		}
	}
	return min(mn, mn1), max(mx, mx1), sum, n
}

// railStats is finiteStats of a rail's power V·I, with the sum of the
// current of the samples whose power is finite.
func railStats(vs []units.Volts, is []units.Amps) (mn, mx, sw, si float64, c uint32) {
	is = is[:len(vs)]
	mn, mx = math.Inf(1), math.Inf(-1)
	mn1, mx1 := mn, mx
	j := 0
	for ; j+2 <= len(vs); j += 2 {
		i0, i1 := float64(is[j]), float64(is[j+1])
		p0, p1 := float64(units.Power(vs[j], is[j])), float64(units.Power(vs[j+1], is[j+1]))
		if p0-p0 == 0 {
			mn, mx, sw, si, c = min(mn, p0), max(mx, p0), sw+p0, si+i0, c+1
		}
		if p1-p1 == 0 {
			mn1, mx1, sw, si, c = min(mn1, p1), max(mx1, p1), sw+p1, si+i1, c+1
		}
	}
	if j < len(vs) {
		i0 := float64(is[j])
		if p0 := float64(units.Power(vs[j], is[j])); p0-p0 == 0 {
			mn, mx, sw, si, c = min(mn, p0), max(mx, p0), sw+p0, si+i0, c+1
		}
	}
	return min(mn, mn1), max(mx, mx1), sw, si, c
}

func (p *Pyramid) railWidth() float64 { return p.dt * float64(uint64(1)<<p.rshift) }

// finish puts the rails on railFactor times the drives' grid (coarsening
// the drives instead if the rails ended up coarser). Call after Analyze
// has returned.
func (p *Pyramid) finish() {
	for p.rshift > p.shift+2 {
		p.shift++
		for _, l := range p.drives {
			l.halve()
		}
	}
	for p.rshift < p.shift+2 {
		p.rshift++
		for _, l := range p.rails {
			l.halve()
		}
	}
}

// DriveState implements analysis.SampleSink.
func (p *Pyramid) DriveState(port int, t float64, s analysis.State) {
	if math.IsNaN(t) || math.Abs(t) >= maxT {
		return
	}
	rs := p.states[port]
	if len(rs) >= p.maxStates {
		p.cut[port] = true
		return
	}
	p.states[port] = append(rs, stateRun{T: t, S: s})
}

// limit is the most drive buckets the budget allows for the run so far.
func (p *Pyramid) limit() float64 {
	return p.budget.bytes(p.last-p.first) / float64(bytesPerBucket)
}

// span is how many buckets of width w level l would hold with a sample
// at t added.
func (p *Pyramid) span(l *level, t, w float64) float64 {
	if len(l.n) == 0 {
		return 1
	}
	return math.Floor(t/w) - float64(l.k0) + 1
}

// maxShift bounds the width's doublings (dt·2^maxShift is far beyond maxT
// for any sample period).
const maxShift = 60

// coarsen doubles the drives' base width.
func (p *Pyramid) coarsen() {
	p.shift++
	for _, l := range p.drives {
		l.halve()
	}
}

// grow doubles the base width while the buckets exceed the budget for the
// time covered so far. Rails follow at Finish (they are filled on another
// goroutine), so rail levels are merged there to the final width.
func (p *Pyramid) grow() {
	for {
		total := 0
		for _, l := range p.drives {
			total += len(l.n)
		}
		if float64(total) <= p.limit() || p.shift >= maxShift {
			return
		}
		p.coarsen()
	}
}
