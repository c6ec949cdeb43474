package analysis

import (
	"math"
	"math/rand/v2"
	"path/filepath"
	"reflect"
	"testing"
	"time"

	"github.com/idlewatt/idlewatt/analysis/synthcap"
	"github.com/idlewatt/idlewatt/capture"
	"github.com/idlewatt/idlewatt/meter"
	"github.com/idlewatt/idlewatt/units"
)

// humSink adds a 50 Hz hum (1 mA fundamental, a second and a third
// harmonic) to the current of one channel of what it writes.
type humSink struct {
	*capture.Writer
	ch   int
	rate float64
}

func (s humSink) Samples(b *meter.Block) error {
	if b.Channel == s.ch {
		for k := range b.I {
			ph := 2 * math.Pi * 50 * float64(b.Start+uint64(k)) / s.rate
			b.I[k] += units.Amps(1e-3*math.Cos(ph+0.3) + 0.5e-3*math.Cos(2*ph+1) + 0.3e-3*math.Cos(3*ph-2))
		}
	}
	return s.Writer.Samples(b)
}

// refLearnLevels is the learning pass as it was before it shared its read
// with the hum pass: a read of its own, after the hum pass, the hum known.
func refLearnLevels(open Opener, p *pass1, c *Clock, opts Options, hum map[int]*humModel) map[int]LevelLearning {
	ports, rails, _ := drivePorts(p.hdr, opts.Ports)
	var drives []capture.DriveInfo
	for _, port := range ports {
		for _, d := range p.hdr.Drives {
			if d.Port == port {
				drives = append(drives, d)
			}
		}
	}
	ls := levelLearners(p, c, opts, drives, rails, hum)
	out := map[int]LevelLearning{}
	if len(ls) == 0 {
		return out
	}
	eachRun(open, func(run *capture.Run) { takeLevels(ls, run, c) })
	for _, l := range ls {
		out[l.port] = l.learn(p.hdr, opts)
	}
	return out
}

// TestLearnHumLevelsOneRead: the hum and the levels learned in one shared
// read (and one more for the levels of a drive with hum) are exactly those
// of a read for the hum and another for the levels, on a capture without
// hum (read once) and on one with hum on one of its two drives (read
// twice).
func TestLearnHumLevelsOneRead(t *testing.T) {
	for _, withHum := range []bool{false, true} {
		s := synthcap.Review(20*time.Second, 10000, 50)
		s.NoiseA, s.CurrentLSB = 2e-4, 50e-6
		path := filepath.Join(t.TempDir(), "c.iwcap")
		w, err := capture.Create(path, s.Header(), capture.Options{})
		if err != nil {
			t.Fatal(err)
		}
		var sink synthcap.Sink = w
		if withHum {
			sink = humSink{Writer: w, ch: 0, rate: s.RateHz}
		}
		if err := synthcap.Generate(s, sink); err != nil {
			t.Fatal(err)
		}
		if err := w.Close(); err != nil {
			t.Fatal(err)
		}
		opens := 0
		open := func() (Source, error) { opens++; return capture.Open(path) }
		opts := DefaultOptions()
		opts.States = &StateOptions{}
		p1, err := firstPass(open, opts, nil)
		if err != nil {
			t.Fatal(err)
		}
		clock := p1.fitter.Fit(p1.hdr.StartHost)
		refHum, _, err := learnHum(open, p1, &clock, nil, true)
		if err != nil {
			t.Fatal(err)
		}
		ref := refLearnLevels(open, p1, &clock, opts, refHum)
		if _, ok := refHum[1]; ok != withHum {
			t.Fatalf("hum %v: the hum pass found hum on port 1: %v", withHum, ok)
		}
		if _, ok := refHum[2]; ok {
			t.Fatalf("hum %v: the hum pass found hum on port 2", withHum)
		}
		if len(ref) != 2 || ref[1].Err != "" || ref[2].Err != "" {
			t.Fatalf("hum %v: levels not learned: %+v", withHum, ref)
		}
		opens = 0
		sd := newStateDetector()
		hum, _, err := sd.learnHumLevels(open, p1, &clock, opts)
		if err != nil {
			t.Fatal(err)
		}
		want := 1
		if withHum {
			want = 2
		}
		if opens != want {
			t.Errorf("hum %v: %d reads, want %d", withHum, opens, want)
		}
		if !reflect.DeepEqual(hum, refHum) {
			t.Errorf("hum %v: hum models differ:\n%+v\n%+v", withHum, hum, refHum)
		}
		if !reflect.DeepEqual(sd.learned, ref) {
			t.Errorf("hum %v: levels differ:\n%+v\n%+v", withHum, sd.learned, ref)
		}
	}
}

// TestRailPower: railPower, rail by rail over a run, is bit for bit the
// sum the learners made row by row (from 0, over the rails in order, NaN
// at the first reading not plausible) — −0 readings, NaN, ±Inf and
// readings past MaxPlausibleW among them, over one to three rails.
func TestRailPower(t *testing.T) {
	rng := rand.New(rand.NewPCG(8, 9))
	odd := []float64{math.Copysign(0, -1), 0, math.NaN(), math.Inf(1), math.Inf(-1), 2e6, -2e6, MaxPlausibleW, 1e-300}
	for trial := range 300 {
		nr := 1 + trial%3
		n := 1 + rng.IntN(500)
		run := &capture.Run{Index: 7, N: n, Present: make([]bool, 4), V: make([][]units.Volts, 4), I: make([][]units.Amps, 4)}
		rails := rng.Perm(4)[:nr]
		for _, ch := range rails {
			run.Present[ch] = true
			run.V[ch], run.I[ch] = make([]units.Volts, n), make([]units.Amps, n)
			for j := range n {
				run.V[ch][j], run.I[ch][j] = units.Volts(5+rng.NormFloat64()), units.Amps(rng.NormFloat64())
				if rng.IntN(20) == 0 {
					run.I[ch][j] = units.Amps(odd[rng.IntN(len(odd))])
				}
			}
		}
		var buf []float64
		got := railPower(run, rails, &buf)
		for j := range n {
			var w float64
			for _, ch := range rails {
				x := float64(run.V[ch][j]) * float64(run.I[ch][j])
				if !(math.Abs(x) <= MaxPlausibleW) {
					w = math.NaN()
					break
				}
				w += x
			}
			if math.Float64bits(got[j]) != math.Float64bits(w) && !(math.IsNaN(w) && math.IsNaN(got[j])) {
				t.Fatalf("trial %d, rails %v, row %d: %v (%x), row by row %v (%x)", trial, rails, j, got[j], math.Float64bits(got[j]), w, math.Float64bits(w))
			}
		}
	}
}

// refHumTake is humLearner.take as it was before takePower asked the busy
// cursor once per run: every valid sample's host time asked, the run's
// power with NaN where busy or not plausible handed to the windows whole.
func (l *humLearner) refHumTake(run *capture.Run, c *Clock) {
	for _, ch := range l.rails {
		if !run.Present[ch] {
			l.reset()
			return
		}
	}
	ws := make([]float64, run.N)
	for j := range ws {
		var w float64
		ok := true
		for _, ch := range l.rails {
			x := float64(run.V[ch][j]) * float64(run.I[ch][j])
			if !(math.Abs(x) <= MaxPlausibleW) {
				ok = false
				break
			}
			w += x
		}
		if !ok || l.busy.at(int64(c.Host(run.Index+uint64(j)))) == Busy {
			w = math.NaN()
		}
		ws[j] = w
	}
	for _, h := range l.cands {
		h.addRun(run.Index, ws)
	}
}

// TestHumTakeIsPerSample: a hum learner that asks the busy cursor once
// per run of samples and hands the windows each quiet run whole ends up
// exactly as one that asked per sample and handed them the run with NaN
// where busy — over random I/O (messy spans too), NaN readings, absent
// rails, skipped indices, and clocks that run backwards or stand still.
func TestHumTakeIsPerSample(t *testing.T) {
	r := rand.New(rand.NewPCG(13, 14))
	for trial := range 100 {
		const n = 60_000
		c := &Clock{Base: 1e6 * r.Float64(), NsPerSample: []float64{100, 99.7, 0.3, 0, -100}[trial%5]}
		end := int64(max(1, math.Abs(c.NsPerSample))*n) + 1
		busy := randSpans(r, 1+r.IntN(60), end, trial%3 == 2)
		mk := func() *humLearner {
			l := &humLearner{rails: []int{0, 1}, busy: activityCursor{spans: busy}}
			for _, hz := range humCandidatesHz {
				l.cands = append(l.cands, newHumWindows(hz, 10000))
			}
			return l
		}
		a, b := mk(), mk()
		for idx := uint64(0); idx < n; {
			m := 1 + r.IntN(3000)
			run := &capture.Run{Index: idx, N: m, Present: []bool{r.IntN(30) > 0, true},
				V: [][]units.Volts{make([]units.Volts, m), make([]units.Volts, m)}, I: [][]units.Amps{make([]units.Amps, m), make([]units.Amps, m)}}
			for j := range m {
				ph := 2 * math.Pi * 50 * float64(idx+uint64(j)) / 10000
				run.V[0][j], run.I[0][j] = 5, units.Amps(0.08+1e-3*math.Cos(ph)+1e-4*r.NormFloat64())
				run.V[1][j], run.I[1][j] = 12, units.Amps(0.01+1e-4*r.NormFloat64())
				if r.IntN(4000) == 0 {
					run.I[r.IntN(2)][j] = units.Amps(math.NaN())
				}
			}
			a.take(run, c)
			b.refHumTake(run, c)
			idx += uint64(m)
			if r.IntN(8) == 0 {
				idx += uint64(r.IntN(500))
			}
		}
		a.pw = nil                                    // scratch
		a.pole, b.pole = poleLearner{}, poleLearner{} // the sensor response's learner: not the hum's (pole_internal_test.go)
		if !reflect.DeepEqual(a, b) {
			t.Fatalf("trial %d (ns/sample %v): the learners differ: windows %d/%d, %d/%d", trial, c.NsPerSample,
				len(a.cands[0].starts), len(b.cands[0].starts), len(a.cands[1].starts), len(b.cands[1].starts))
		}
	}
}
