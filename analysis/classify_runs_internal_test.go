package analysis

import (
	"fmt"
	"math/rand/v2"
	"reflect"
	"testing"
	"time"

	"github.com/idlewatt/idlewatt/capture"
	"github.com/idlewatt/idlewatt/hostclock"
	"github.com/idlewatt/idlewatt/meter"
	"github.com/idlewatt/idlewatt/states/detect"
	"github.com/idlewatt/idlewatt/units"
)

// refClassify is driveProc.classify as it was before it went by runs of
// one label: the classifier asked sample by sample (Classify), and every
// accumulator fed each sample as it was labelled.
func (d *driveProc) refClassify(start uint64, k int, run []float64, a Activity, pin bool, m *metricSet) {
	dt := d.clock.NsPerSample
	t0 := d.clock.HostF(float64(start))
	for j, p := range run {
		tj := int64(t0 + dt*float64(k+j))
		st := d.cls.Classify(Sample{Index: start + uint64(k+j), Host: hostclock.Time(tj), Power: units.Watts(p), Activity: a, DevSlpPin: pin})
		d.latency(st, tj)
		if st == StateUnknown {
			st = StateIdle
			if a == Busy {
				st = StateActive
			}
		}
		switch {
		case a == Idle && !pin && (st == StateIdle || st == StatePartial || st == StateSlumber):
			d.spans.add(p, st)
		default:
			d.spans.end()
		}
		if a == Idle && !pin {
			d.noise.Add(p)
			d.rest.add1(p)
			m.rest.add1(p)
			if st == StateIdle {
				d.quiet.add1(p)
				m.quiet.add1(p)
			}
		}
		d.states[st].add(p)
		d.sinkState(tj, st)
		if st == StateDevSlp {
			d.dsHist.Add(p)
		}
	}
}

// stateLog is a SampleSink that records the states it is told.
type stateLog struct{ s []string }

func (l *stateLog) Begin(Clock, float64)                          {}
func (l *stateLog) DriveSamples(int, float64, float64, []float64) {}
func (l *stateLog) RailBlock(float64, float64, *meter.Block)      {}
func (l *stateLog) DriveState(port int, t float64, s State) {
	l.s = append(l.s, fmt.Sprint(port, t, s))
}

// unknownEvery is a plain StateClassifier (no classifyRun): a fixed label
// by power, Unknown for every seventh sample.
type unknownEvery struct{ n int }

func (u *unknownEvery) Classify(s Sample) State {
	u.n++
	switch {
	case u.n%7 == 0:
		return StateUnknown
	case s.Power < 0.01:
		return StateDevSlp
	case s.Power < 0.1:
		return StateSlumber
	case s.Power < 0.35:
		return StatePartial
	}
	return StateIdle
}

// TestClassifyByRuns: driveProc.classify, which labels a run with the
// classifier at once (classifyRun) and feeds each accumulator the runs of
// one label, leaves the drive, its phase's set, its classifier and the
// sink's states exactly as classifying and feeding sample by sample did —
// with the learned-levels classifier (offline and online) and with a plain
// one, over busy, settle and idle runs, the DEVSLP pin asserted and
// released (entry and exit latencies), and levels stepping under noise.
func TestClassifyByRuns(t *testing.T) {
	lv := detect.Levels{Idle: 0.40, Partial: 0.30, Slumber: 0.060, DevSlp: 0.0025}
	for trial := range 8 {
		r := rand.New(rand.NewPCG(uint64(trial), 31))
		clock := &Clock{NsPerSample: 1e5, RateHz: 10000, Base: 1e12}
		var pins []span
		for p := int64(2e8); p < 5e9; p += int64(5e8 + r.IntN(1e9)) {
			pins = append(pins, span{1e12 + p, 1e12 + p + int64(1e8+r.IntN(3e8))})
		}
		mk := func() (*driveProc, *stateLog) {
			var cls StateClassifier = &unknownEvery{}
			if trial%4 != 3 {
				sd := &stateDetector{learned: map[int]LevelLearning{1: {Levels: lv}}, cols: map[int]*stateCollector{}}
				cls = sd.classifier(capture.DriveInfo{Port: 1}, 10000)
			}
			d := newDriveProc(capture.DriveInfo{Port: 1}, []int{0}, clock, nil, 0, pins, int64(5*time.Millisecond), &phaseSet{}, cls)
			log := &stateLog{}
			d.sink, d.t0 = log, 1e12
			return d, log
		}
		a, logA := mk()
		b, logB := mk()
		levels := []float64{0.40, 0.30, 0.060, 0.0025, 2.2}
		w := levels[0]
		for idx := uint64(0); idx < 50_000; {
			n := 1 + r.IntN(2000)
			ps := make([]float64, n)
			for j := range ps {
				if r.IntN(300) == 0 {
					w = levels[r.IntN(len(levels))]
				}
				ps[j] = w + 2e-3*r.NormFloat64()
			}
			act := []Activity{Idle, Idle, Idle, Busy, Settle}[r.IntN(5)]
			t := int64(clock.HostF(float64(idx)))
			for _, d := range []*driveProc{a, b} {
				pin := d.pin.at(t) != Idle
				d.pinEdge(pin, t)
				if d == a {
					d.classify(idx, 0, ps, act, pin, &d.outside)
				} else {
					d.refClassify(idx, 0, ps, act, pin, &d.outside)
				}
			}
			idx += uint64(n)
		}
		for name, x := range map[string][2]any{
			"states": {a.states, b.states}, "quiet": {a.quiet, b.quiet}, "rest": {a.rest, b.rest},
			"outside.quiet": {a.outside.quiet, b.outside.quiet}, "outside.rest": {a.outside.rest, b.outside.rest},
			"spans": {a.spans, b.spans}, "noise": {a.noise, b.noise}, "dsHist": {a.dsHist, b.dsHist},
			"latency": {[]any{a.entries, a.exits, a.nEntered, a.entered, a.awaitExit, a.cycles}, []any{b.entries, b.exits, b.nEntered, b.entered, b.awaitExit, b.cycles}},
			"sink":    {logA.s, logB.s},
		} {
			if !reflect.DeepEqual(x[0], x[1]) {
				t.Errorf("trial %d: %s differs", trial, name)
			}
		}
		if ca, ok := a.cls.(*stateCollector); ok {
			cb := b.cls.(*stateCollector)
			if !reflect.DeepEqual(ca.spans, cb.spans) || fmt.Sprintf("%+v", *ca.online) != fmt.Sprintf("%+v", *cb.online) {
				t.Errorf("trial %d: the classifiers differ: %d / %d spans", trial, len(ca.spans), len(cb.spans))
			}
			if len(ca.spans) < 5 || a.nEntered == 0 || a.exits.n == 0 {
				t.Errorf("trial %d: %d spans, %d entries, %d exits: the trace does not exercise classify", trial, len(ca.spans), a.nEntered, a.exits.n)
			}
		}
	}
}

// add1 adds one sample to the series (the reference addEach is held to).
func (b *blockSeries) add1(x float64) {
	if b.L == 0 {
		return
	}
	b.cur.n++
	b.cur.sum += x
	if b.cur.n >= b.L {
		b.push()
	}
}

// add takes one quiet, unpinned sample the classifier labelled st (the
// reference addRun is held to).
func (s *spanNoise) add(p float64, st State) {
	if s.L == 0 {
		return
	}
	if !s.on || st != s.st {
		s.end()
		s.on, s.st, s.left = true, st, s.skip
	}
	if s.left > 0 {
		s.left--
		return
	}
	s.cur.n++
	s.cur.sum += p
	if s.cur.n < s.L {
		return
	}
	s.blocks = append(s.blocks, s.cur.sum/float64(s.cur.n))
	s.cur = blk{}
	if len(s.blocks) >= spanMaxBlocks {
		s.flush(false)
	}
}
