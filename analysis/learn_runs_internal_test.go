package analysis

import (
	"math"
	"math/rand/v2"
	"reflect"
	"slices"
	"testing"

	"github.com/idlewatt/idlewatt/capture"
	"github.com/idlewatt/idlewatt/units"
)

// refTake and refAdd are levelLearner.take and add as they were before
// take asked the host's record once per run of samples (addFrom): every
// cursor asked about every sample. The learner must end up the same.
func (l *levelLearner) refTake(run *capture.Run, c *Clock) {
	for _, ch := range l.rails {
		if !run.Present[ch] {
			l.breakStretch()
			return
		}
	}
	for k, ch := range l.rails {
		l.seeRails(k, run.V[ch], run.I[ch])
	}
	ws := make([]float64, run.N)
	for j := range ws {
		var w float64
		for _, ch := range l.rails {
			x := float64(run.V[ch][j]) * float64(run.I[ch][j])
			if !(math.Abs(x) <= MaxPlausibleW) {
				w = math.NaN()
				break
			}
			w += x
		}
		ws[j] = w
	}
	l.hum.remove(run.Index, ws)
	for j, w := range ws {
		if math.IsNaN(w) {
			l.breakStretch()
			continue
		}
		l.refAdd(int64(c.Host(run.Index+uint64(j))), w)
	}
}

func (l *levelLearner) refAdd(t int64, w float64) {
	l.samples++
	l.totalMin, l.totalMax = math.Min(l.totalMin, w), math.Max(l.totalMax, w)
	pol := l.policyAt(t)
	if io := l.busy.at(t) == Busy; io || l.entry.at(t) == Busy {
		l.breakStretch()
		l.postT.busy(io)
		l.lastIO = io
		return
	}
	ctx := pol
	var cy *[]float64
	if l.pin.at(t) == Busy {
		ctx = ctxPin
		cy = &l.cycles[l.pin.i].pin
	}
	pre := l.pre.at(t) == Busy
	if pre {
		if k := l.nextPin(t); k < len(l.cycles) {
			cy = &l.cycles[k].pre
		}
	}
	l.quietN++
	if !l.inQuiet || ctx != l.bctx || pre != l.bpre {
		l.stretch(ctx, pre)
	}
	for i := range l.scales {
		if m, ok := l.scales[i].add(w, ctx, pre); ok && i == 0 && cy != nil && len(*cy) < cycleBlocks {
			*cy = append(*cy, m)
		}
	}
	l.postAdd(t, w, ctx)
}

// randSpans is n spans over [0, end) ns: sorted and disjoint, or (messy)
// in any order, overlapping and nested.
func randSpans(r *rand.Rand, n int, end int64, messy bool) []span {
	var ss []span
	t := int64(0)
	for range n {
		if messy {
			s := r.Int64N(end)
			ss = append(ss, span{s, s + r.Int64N(end/8)})
			continue
		}
		t += r.Int64N(2 * end / int64(n))
		e := t + r.Int64N(end/int64(4*n))
		ss = append(ss, span{t, e})
		t = e + 1
	}
	return ss
}

// learnerPair is two learners alike: I/O, entry allowances, pins (the
// last one left asserted), pre-pin windows and policy changes drawn at
// random over end ns.
func learnerPair(r *rand.Rand, end int64, messy bool) (a, b *levelLearner) {
	busy := randSpans(r, 1+r.IntN(40), end, messy)
	pins := randSpans(r, 1+r.IntN(6), end, false)
	pins[len(pins)-1].e = math.MaxInt64 - 1
	var entry, pre []span
	last := int64(math.MinInt64)
	for _, sp := range pins {
		entry = append(entry, span{sp.s, min(sp.e, sp.s+end/50)})
		if from := max(last+1, sp.s-end/20); from < sp.s {
			pre = append(pre, span{from, sp.s - 1})
		}
		last = sp.e
	}
	var pol []policyEvent
	for range r.IntN(8) {
		pol = append(pol, policyEvent{t: r.Int64N(end), policy: []string{"max_performance", "medium_power", "min_power", "med_power_with_dipm"}[r.IntN(4)]})
	}
	slices.SortStableFunc(pol, func(x, y policyEvent) int { return int(min(max(x.t-y.t, -1), 1)) })
	settle := r.Int64N(2) * end / 100
	mk := func() *levelLearner {
		l := &levelLearner{port: 1, rails: []int{0}, totalMin: math.Inf(1), totalMax: math.Inf(-1),
			busy: activityCursor{spans: busy, settle: settle}, pin: activityCursor{spans: pins},
			entry: activityCursor{spans: entry}, pre: activityCursor{spans: pre}, pol: policyCursor{pol: pol},
			rng: rand.New(rand.NewPCG(1, 0x1e4e15)), cycles: make([]pinCycle, len(pins)), rail: []railSeen{{constant: true}}}
		l.scales[0].per, l.scales[1].per = 100, 10
		l.scales[0].keepSteps = true
		l.postT.per = 20
		return l
	}
	return mk(), mk()
}

// TestAddFromIsPerSample: a learner fed runs of samples whose context is
// found once per stretch of like samples ends up exactly as one that asked
// per sample — over random I/O, pins, policies, NaN readings, absent
// rails, and clocks that run backwards or stand still.
func TestAddFromIsPerSample(t *testing.T) {
	r := rand.New(rand.NewPCG(11, 12))
	for trial := range 200 {
		const n = 40_000
		c := &Clock{Base: 1e6 * r.Float64(), NsPerSample: []float64{100, 99.7, 0.3, 0, -100}[trial%5]}
		end := int64(max(1, math.Abs(c.NsPerSample))*n) + 1
		a, b := learnerPair(r, end, trial%3 == 2)
		w := 0.4
		for idx := uint64(0); idx < n; {
			m := 1 + r.IntN(5000)
			run := &capture.Run{Index: idx, N: m, Present: []bool{r.IntN(20) > 0},
				V: [][]units.Volts{make([]units.Volts, m)}, I: [][]units.Amps{make([]units.Amps, m)}}
			for j := range m {
				if r.IntN(50) == 0 {
					w = []float64{0.4, 0.3, 0.06, 0.0025, 0.7}[r.IntN(5)] + 0.001*r.NormFloat64()
				}
				run.V[0][j], run.I[0][j] = 1, units.Amps(w)
				if r.IntN(3000) == 0 {
					run.I[0][j] = units.Amps(math.NaN())
				}
			}
			a.take(run, c)
			b.refTake(run, c)
			idx += uint64(m)
		}
		a.ws = nil // scratch
		if !reflect.DeepEqual(a, b) {
			for _, f := range []struct {
				name string
				x, y any
			}{{"scales0", a.scales[0], b.scales[0]}, {"scales1", a.scales[1], b.scales[1]}, {"post", a.post, b.post}, {"postT", a.postT, b.postT},
				{"cycles", a.cycles, b.cycles}, {"rail", a.rail, b.rail}, {"cursors", []activityCursor{a.busy, a.entry, a.pin, a.pre}, []activityCursor{b.busy, b.entry, b.pin, b.pre}},
				{"flags", []any{a.inQuiet, a.lastIO, a.bctx, a.bpre, a.pol.ctx, a.pol.i}, []any{b.inQuiet, b.lastIO, b.bctx, b.bpre, b.pol.ctx, b.pol.i}}, {"rng", a.rng, b.rng},
				{"min", []float64{a.totalMin, a.totalMax}, []float64{b.totalMin, b.totalMax}}} {
				if !reflect.DeepEqual(f.x, f.y) {
					t.Logf("%s differs: %v / %v", f.name, f.x, f.y)
				}
			}
			t.Fatalf("trial %d (ns/sample %v): the learners differ: quiet %d/%d, samples %d/%d, blocks %d/%d", trial,
				c.NsPerSample, a.quietN, b.quietN, a.samples, b.samples, a.scales[0].blocks, b.scales[0].blocks)
		}
	}
}

// add takes one sample, as addRun takes a run: a block completes every
// per samples, and add returns its mean (refAdd's, the reference).
func (b *blockScale) add(w float64, ctx learnCtx, pre bool) (float64, bool) {
	if b.skip > 0 {
		b.skip--
		return 0, false
	}
	b.sum += w
	b.n++
	if b.n < b.per {
		return 0, false
	}
	return b.block(ctx, pre), true
}
