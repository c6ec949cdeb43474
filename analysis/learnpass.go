package analysis

import (
	"fmt"
	"math"
	"runtime"
	"sync"
	"sync/atomic"

	"github.com/idlewatt/idlewatt/capture"
	"github.com/idlewatt/idlewatt/units"
)

// The reads of the samples before the sample pass: the hum pass (hum.go)
// and, with state detection, the learning pass (learn.go, levels.go) in the
// same read (learnHumLevels) — each drive's power computed once for both —
// and the passes' learners taking the capture's runs of rows.

// levelLearners are the learning pass's learners: one per drive the
// report covers but NVMe ones, each subtracting its drive's hum (none
// while hum is nil).
func levelLearners(p *pass1, c *Clock, opts Options, drives []capture.DriveInfo, rails map[int][]int, hum map[int]*humModel) []*levelLearner {
	var ls []*levelLearner
	for _, d := range drives {
		if d.Interface == capture.InterfaceNVMe {
			continue
		}
		l := newLevelLearner(d.Port, d.Name, rails[d.Port], p, c, opts)
		l.hum = hum[d.Port]
		ls = append(ls, l)
	}
	return ls
}

// takeLevels hands a run of rows (a gap: Gap > 0) to each level learner.
func takeLevels(ls []*levelLearner, run *capture.Run, c *Clock) {
	for _, l := range ls {
		if run.Gap > 0 {
			l.breakStretch()
		} else {
			l.take(run, c)
		}
	}
}

// learnHumLevels is the hum pass and the learning pass in one read of the
// capture's samples (with state detection): every drive's quiet windows
// gathered for its hum, and its quiet blocks for its levels as if it had
// none; then each drive's hum fitted and each drive's levels learned. The
// levels of a drive that turns out to have hum are learned again, in one
// more read, with the hum subtracted: a capture without hum is read once
// here, not twice, and learns exactly what it learned with a read for each
// (TestLearnHumLevelsOneRead). It returns the hum models by port (drives
// with none are not in the map), the sensor responses by port (pole.go)
// and sets sd.learned.
func (sd *stateDetector) learnHumLevels(open Opener, p *pass1, c *Clock, opts Options) (map[int]*humModel, map[int]*sensorPole, error) {
	hl := humLearners(p, opts.Ports)
	ports, rails, err := drivePorts(p.hdr, opts.Ports)
	if err != nil {
		return nil, nil, err
	}
	names := map[int]capture.DriveInfo{}
	for _, d := range p.hdr.Drives {
		names[d.Port] = d
	}
	var drives []capture.DriveInfo
	for _, port := range ports {
		d, ok := names[port]
		if !ok {
			d = capture.DriveInfo{Name: fmt.Sprintf("port %d", port)}
		}
		d.Port = port
		drives = append(drives, d)
	}
	ll := levelLearners(p, c, opts, drives, rails, nil)
	if len(hl) > 0 || len(ll) > 0 {
		if err := learnRuns(open, pairLearners(ports, hl, ll), c, opts.serial); err != nil {
			return nil, nil, err
		}
	}
	hum, poles := humModels(hl, opts.serial), poleModels(hl, opts.serial)
	var again []learnPair
	for i, l := range ll {
		if m := hum[l.port]; m != nil {
			ll[i] = newLevelLearner(l.port, l.name, l.rails, p, c, opts)
			ll[i].hum = m
			again = append(again, learnPair{l: ll[i]})
		}
	}
	if len(again) > 0 {
		if err := learnRuns(open, again, c, opts.serial); err != nil {
			return nil, nil, err
		}
	}
	shareQuantum(ll)
	learned := make([]LevelLearning, len(ll))
	eachDrive(len(ll), opts.serial, func(i int) { learned[i] = ll[i].learn(p.hdr, opts) })
	sd.learned = map[int]LevelLearning{}
	for i, l := range ll {
		sd.learned[l.port] = learned[i]
	}
	return hum, poles, nil
}

// learnPair is one drive's learners in the shared read: its hum's, its
// levels' or both (nil: none).
type learnPair struct {
	h *humLearner
	l *levelLearner
}

// pairLearners pairs the hum and level learners of each drive, port by
// port (both are of ports' drives, with their rails).
func pairLearners(ports []int, hl []*humLearner, ll []*levelLearner) []learnPair {
	out := make([]learnPair, 0, len(ports))
	for _, port := range ports {
		var b learnPair
		for _, h := range hl {
			if h.port == port {
				b.h = h
			}
		}
		for _, l := range ll {
			if l.port == port {
				b.l = l
			}
		}
		if b.h != nil || b.l != nil {
			out = append(out, b)
		}
	}
	return out
}

// take hands the pair a run of rows (a gap: Gap > 0). A drive with both
// learners has its power computed once for both: the level learner's
// take and the hum learner's, but for the rows read once.
func (b learnPair) take(run *capture.Run, c *Clock) {
	switch {
	case b.l == nil:
		takeHum([]*humLearner{b.h}, run, c)
	case b.h == nil:
		takeLevels([]*levelLearner{b.l}, run, c)
	case run.Gap > 0:
		b.h.brk()
		b.l.breakStretch()
	case !railsPresent(run, b.l.rails):
		b.h.brk()
		b.l.breakStretch()
	default:
		for k, ch := range b.l.rails {
			b.l.seeRails(k, run.V[ch], run.I[ch])
		}
		pw := railPower(run, b.l.rails, &b.l.ws)
		b.h.takePower(run.Index, pw, c) // before the level learner subtracts any hum from pw
		b.l.takePower(run.Index, pw, c)
	}
}

// rails are the drive's channels (its learners share them).
func (b learnPair) rails() []int {
	if b.l != nil {
		return b.l.rails
	}
	return b.h.rails
}

// power is take's part that needs the run's rows, on the reading
// goroutine of learnRuns: the level learner sees the rails' readings and
// the drive's power goes into *buf (railPower's). ok is false where take
// breaks (a gap, a rail missing).
func (b learnPair) power(run *capture.Run, buf *[]float64) (pw []float64, ok bool) {
	if run.Gap > 0 || !railsPresent(run, b.rails()) {
		return nil, false
	}
	if b.l != nil {
		for k, ch := range b.l.rails {
			b.l.seeRails(k, run.V[ch], run.I[ch])
		}
	}
	return railPower(run, b.rails(), buf), true
}

// takePower is the rest of take, on a worker of learnRuns: the drive's
// power pw of the samples from index i0 on; ok false is a break.
func (b learnPair) takePower(i0 uint64, pw []float64, ok bool, c *Clock) {
	if !ok {
		if b.h != nil {
			b.h.brk()
		}
		if b.l != nil {
			b.l.breakStretch()
		}
		return
	}
	if b.h != nil {
		b.h.takePower(i0, pw, c) // before the level learner subtracts any hum from pw
	}
	if b.l != nil {
		b.l.takePower(i0, pw, c)
	}
}

// learnRuns reads the capture once for the pairs' learners: take of every
// run of rows for each pair, as eachRun would hand it, with the drives'
// learning spread over worker goroutines (about one per core) while the
// reading goroutine decodes, assembles rows and computes each drive's
// power. Every learner still takes its drive's runs one after another in
// sample order, and drives share nothing, so what each learns is what
// take run by run learns (TestLearnRunsParallel); serial does exactly that
// on the reading goroutine (the tests' reference).
//
// Memory stays bounded: each worker has learnBatches batches of at most
// learnBatchSamples power values (or one run, if longer) and
// learnBatchOps runs, recycled.
func learnRuns(open Opener, pairs []learnPair, c *Clock, serial bool) error {
	if serial {
		return eachRun(open, func(run *capture.Run) {
			for _, b := range pairs {
				b.take(run, c)
			}
		})
	}
	w := startLearnWorkers(pairs, c)
	err := eachRun(open, w.add)
	w.close()
	return err
}

const (
	learnBatchSamples = 1 << 15
	learnBatchOps     = 1024
	learnBatches      = 4
)

// learnWorkers are learnRuns' workers: pair i is worker i%len(in)'s.
type learnWorkers struct {
	pairs  []learnPair
	in     []chan *learnBatch
	free   []chan *learnBatch
	cur    []*learnBatch
	done   sync.WaitGroup
	caught workerPanic
}

// learnBatch is a worker's share of consecutive runs: each of its pairs'
// power or break, run by run, in order.
type learnBatch struct {
	ops []learnOp
	pw  []float64
}

type learnOp struct {
	pair   int
	i0     uint64
	off, n int  // the power: pw[off:off+n]
	ok     bool // false: a break
}

func startLearnWorkers(pairs []learnPair, c *Clock) *learnWorkers {
	n := min(len(pairs), runtime.GOMAXPROCS(0))
	w := &learnWorkers{pairs: pairs, in: make([]chan *learnBatch, n), free: make([]chan *learnBatch, n), cur: make([]*learnBatch, n)}
	for g := range n {
		w.in[g] = make(chan *learnBatch, learnBatches)
		w.free[g] = make(chan *learnBatch, learnBatches)
		for range learnBatches - 1 {
			w.free[g] <- &learnBatch{pw: make([]float64, 0, learnBatchSamples)}
		}
		w.cur[g] = &learnBatch{pw: make([]float64, 0, learnBatchSamples)}
		w.done.Add(1)
		go w.work(g, c)
	}
	return w
}

// add is a run for every pair (on the reading goroutine).
func (w *learnWorkers) add(run *capture.Run) {
	for i, b := range w.pairs {
		g := i % len(w.cur)
		bt := w.cur[g]
		if len(bt.pw)+run.N > cap(bt.pw) {
			if len(bt.pw) > 0 {
				w.flush(g)
				bt = w.cur[g]
			}
			if run.N > cap(bt.pw) {
				bt.pw = make([]float64, 0, run.N) // a run longer than a batch
			}
		}
		buf := bt.pw[len(bt.pw):] // room for the run: railPower fills it in place
		pw, ok := b.power(run, &buf)
		op := learnOp{pair: i, i0: run.Index, ok: ok}
		if ok {
			op.off, op.n = len(bt.pw), len(pw)
			bt.pw = bt.pw[:len(bt.pw)+len(pw)]
		}
		bt.ops = append(bt.ops, op)
		if len(bt.ops) >= learnBatchOps || len(bt.pw) >= learnBatchSamples {
			w.flush(g)
		}
	}
}

// flush hands worker g its batch and takes a free one.
func (w *learnWorkers) flush(g int) {
	if len(w.cur[g].ops) == 0 {
		return
	}
	w.in[g] <- w.cur[g]
	w.cur[g] = <-w.free[g]
}

func (w *learnWorkers) work(g int, c *Clock) {
	defer w.done.Done()
	for bt := range w.in[g] {
		w.caught.do(func() {
			for _, op := range bt.ops {
				w.pairs[op.pair].takePower(op.i0, bt.pw[op.off:op.off+op.n], op.ok, c)
			}
		})
		bt.ops, bt.pw = bt.ops[:0], bt.pw[:0]
		w.free[g] <- bt
	}
}

// close hands over what is left and waits for the workers to finish.
func (w *learnWorkers) close() {
	for g := range w.in {
		w.flush(g)
		close(w.in[g])
	}
	w.done.Wait()
	w.caught.raise()
}

// eachRun opens the capture and hands take every run of rows (a gap is a
// run with Gap > 0) until the end. A damaged or cut capture ends the runs
// where its damage starts: a pass learns from what was read, as the
// sample pass reports what was read; only a failure to open is an error.
func eachRun(open Opener, take func(*capture.Run)) error {
	src, err := open()
	if err != nil {
		return err
	}
	defer src.Close()
	rows := capture.NewRows(src)
	for {
		run, err := rows.NextRun()
		if err != nil {
			return nil
		}
		take(run)
	}
}

// take adds a run of rows to the drive: its samples where every rail is
// present and valid, a break in the stretch elsewhere.
func (l *levelLearner) take(run *capture.Run, c *Clock) {
	if !railsPresent(run, l.rails) {
		l.breakStretch()
		return
	}
	for k, ch := range l.rails {
		l.seeRails(k, run.V[ch], run.I[ch])
	}
	l.takePower(run.Index, railPower(run, l.rails, &l.ws), c)
}

// takePower adds the drive's power ws of the samples from index i0 on
// (railPower's: NaN where a rail's reading is not plausible, a break in
// the stretch); the hum is subtracted from ws in place.
func (l *levelLearner) takePower(i0 uint64, ws []float64, c *Clock) {
	l.hum.remove(i0, ws)
	for j := 0; j < len(ws); {
		if math.IsNaN(ws[j]) {
			l.breakStretch()
			j++
			continue
		}
		j = l.addFrom(ws, j, i0, c)
	}
}

// railsPresent reports whether every one of rails has samples in run.
func railsPresent(run *capture.Run, rails []int) bool {
	for _, ch := range rails {
		if !run.Present[ch] {
			return false
		}
	}
	return true
}

// railPower is the drive's power in each row of run (every one of rails
// present): the sum of its rails' V·I, rail by rail in order from 0, or
// NaN where a rail's V·I is not finite or beyond MaxPlausibleW. It is
// kept in *buf (grown as needed).
func railPower(run *capture.Run, rails []int, buf *[]float64) []float64 {
	if cap(*buf) < run.N {
		*buf = make([]float64, run.N)
	}
	ws := (*buf)[:run.N]
	if len(rails) == 0 {
		clear(ws)
		return ws
	}
	v, i := run.V[rails[0]][:len(ws)], run.I[rails[0]][:len(ws)]
	for j := range ws {
		x := float64(v[j]) * float64(i[j])
		if !(math.Abs(x) <= MaxPlausibleW) { // NaN fails too
			x = math.NaN()
		}
		ws[j] = 0 + x // the sum from 0, as it always was: −0 reads +0
	}
	for _, ch := range rails[1:] {
		v, i := run.V[ch][:len(ws)], run.I[ch][:len(ws)]
		for j := range ws {
			x := float64(v[j]) * float64(i[j])
			if !(math.Abs(x) <= MaxPlausibleW) {
				ws[j] = math.NaN()
			} else {
				ws[j] += x // a NaN stays NaN
			}
		}
	}
	return ws
}

// humLearner is one drive's hum pass, and the learner of its meter's
// sensor response (pole.go), which takes every valid sample.
type humLearner struct {
	port  int
	rails []int
	busy  activityCursor
	cands []*humWindows
	pole  poleLearner
	pw    []float64 // scratch: a run's power (railPower)
}

// take adds a run of rows: the quiet samples where every rail is present
// and valid; anything else ends the windows being filled.
func (l *humLearner) take(run *capture.Run, c *Clock) {
	if !railsPresent(run, l.rails) {
		l.brk()
		return
	}
	l.takePower(run.Index, railPower(run, l.rails, &l.pw), c)
}

// takePower adds the drive's power pw of the samples from index i0 on
// (railPower's: NaN where a rail's reading is not plausible): the quiet
// ones; a NaN or a busy sample ends the window being filled. The busy
// cursor is asked about the valid samples, once for each run of them its
// answer holds for (holdsUntil, runEnd: as per sample, the cursor only
// moving forward), and each quiet run goes to the windows whole (addRun
// over runs one after another is addRun over them joined).
func (l *humLearner) takePower(i0 uint64, pw []float64, c *Clock) {
	l.pole.take(pw)
	for j := 0; j < len(pw); {
		if math.IsNaN(pw[j]) {
			l.reset()
			j++
			continue
		}
		t := int64(c.Host(i0 + uint64(j)))
		busy := l.busy.at(t) == Busy
		e := runEnd(pw, j, i0, t, holdsUntil(&l.busy, t), c)
		if busy {
			l.reset()
		} else {
			for _, h := range l.cands {
				h.addRun(i0+uint64(j), pw[j:e])
			}
		}
		j = e
	}
}

// reset ends the hum windows being filled (a busy or invalid sample).
func (l *humLearner) reset() {
	for _, h := range l.cands {
		h.reset()
	}
}

// brk is a break in the drive's samples (a gap, a rail missing): the hum
// windows end and no step window of the sensor's response spans it.
func (l *humLearner) brk() {
	l.reset()
	l.pole.reset()
}

// model is the drive's hum: the candidate with the more hum power, nil
// when neither has any.
func (l *humLearner) model() *humModel {
	var best *humModel
	for _, h := range l.cands {
		f, re, im, delta, ok := h.fit()
		if !ok || (best != nil && f.RMSW <= best.fit.RMSW) {
			continue
		}
		f.OffsetHz = units.Hertz(delta * float64(h.n) / float64(h.m) * h.hz)
		hm := &humModel{fit: f, n: uint64(h.n), m: uint64(h.m), delta: delta}
		for _, t := range f.Harmonics {
			hm.k = append(hm.k, t.K)
			hm.re, hm.im = append(hm.re, re[t.K-1]), append(hm.im, im[t.K-1])
		}
		best = hm
	}
	return best
}

// humLearners are the hum pass's learners, one per drive that has rails
// (with no hum candidates when the rate shows neither: the sensor's
// response is learned all the same).
func humLearners(p *pass1, only []int) []*humLearner {
	ports, rails, err := drivePorts(p.hdr, only)
	if err != nil {
		return nil // the sample pass says why
	}
	rate := float64(p.hdr.RateHz)
	var bases []*humWindows
	for _, hz := range humCandidatesHz {
		if h := newHumWindows(hz, rate); h != nil {
			bases = append(bases, h)
		}
	}
	var ls []*humLearner
	for _, port := range ports {
		l := &humLearner{port: port, rails: rails[port]}
		if ss := p.busy[port]; ss != nil {
			l.busy = activityCursor{spans: ss.spans}
		}
		for _, h := range bases {
			l.cands = append(l.cands, h.twin())
		}
		if len(l.rails) > 0 {
			ls = append(ls, l)
		}
	}
	return ls
}

// takeHum hands a run of rows (a gap: Gap > 0) to each hum learner.
func takeHum(ls []*humLearner, run *capture.Run, c *Clock) {
	for _, l := range ls {
		if run.Gap > 0 {
			l.brk()
		} else {
			l.take(run, c)
		}
	}
}

// poleModels fits each learner's sensor response; drives with too few
// clean steps are not in the map.
func poleModels(ls []*humLearner, serial bool) map[int]*sensorPole {
	ms := make([]*sensorPole, len(ls))
	eachDrive(len(ls), serial, func(i int) { ms[i] = ls[i].pole.model() })
	out := map[int]*sensorPole{}
	for i, l := range ls {
		if ms[i] != nil {
			out[l.port] = ms[i]
		}
	}
	return out
}

// humModels fits each learner's hum. Drives with none are not in the map.
func humModels(ls []*humLearner, serial bool) map[int]*humModel {
	ms := make([]*humModel, len(ls))
	eachDrive(len(ls), serial, func(i int) { ms[i] = ls[i].model() })
	out := map[int]*humModel{}
	for i, l := range ls {
		if ms[i] != nil {
			out[l.port] = ms[i]
		}
	}
	return out
}

// eachDrive calls f(0) … f(n-1), each touching one drive's state only, on
// up to GOMAXPROCS goroutines (serial: on this one, in order): the drives'
// fits after a learning read. A panic in f is raised again here.
func eachDrive(n int, serial bool, f func(i int)) {
	workers := min(n, runtime.GOMAXPROCS(0))
	if serial || workers < 2 {
		for i := range n {
			f(i)
		}
		return
	}
	var next atomic.Int64
	var caught workerPanic
	var wg sync.WaitGroup
	wg.Add(workers)
	for range workers {
		go func() {
			defer wg.Done()
			for i := int(next.Add(1)) - 1; i < n; i = int(next.Add(1)) - 1 {
				caught.do(func() { f(i) })
			}
		}()
	}
	wg.Wait()
	caught.raise()
}

// learnHum is the hum pass on its own (without state detection; with it,
// learnHumLevels shares the read with level learning): one read of the
// samples, each drive's quiet windows gathered, then each drive's hum
// fitted, and its sensor response (pole.go). Drives with none are not in
// the maps.
func learnHum(open Opener, p *pass1, c *Clock, only []int, serial bool) (map[int]*humModel, map[int]*sensorPole, error) {
	ls := humLearners(p, only)
	if len(ls) == 0 {
		return map[int]*humModel{}, map[int]*sensorPole{}, nil
	}
	pairs := make([]learnPair, len(ls))
	for i, l := range ls {
		pairs[i].h = l
	}
	if err := learnRuns(open, pairs, c, serial); err != nil {
		return nil, nil, err
	}
	return humModels(ls, serial), poleModels(ls, serial), nil
}
