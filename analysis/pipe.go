package analysis

import (
	"math"
	"runtime"
	"slices"
	"sync"

	"github.com/idlewatt/idlewatt/capture"
	"github.com/idlewatt/idlewatt/meter"
)

// MaxPlausibleW bounds the power of one rail sample: a sample whose V·I is
// not finite or exceeds it in magnitude (no drive rail carries a megawatt;
// it is a meter or file fault) is counted as invalid and treated as missing,
// so it never reaches a reported figure.
const MaxPlausibleW = 1e6

// GapInvalid is the reason analysis gives samples it treats as missing
// because their values are not finite or not plausible.
const GapInvalid = "invalid value"

// feed reads the second pass's records in a goroutine of its own, so that
// reading, checking and decoding the capture overlaps with the per-drive
// accumulation (on two cores each takes about half the work). It hands over
// what the accumulators need, already reduced: per analysed channel the
// power V·I of each block in a recycled []float64 (the Reader reuses its
// buffers, so something has to be copied, and one power value is half of a
// V and I pair), gaps, and I/O events.
//
// Memory stays bounded: batches carry at most feedSamples samples, at most
// feedDepth batches wait in the channel, and power buffers are recycled.
type feed struct {
	out   chan *feedBatch
	free  chan []float64
	spare chan *feedBatch
	rail  func(*meter.Block) // Options.Samples' RailBlock; nil = none
}

type feedBatch struct {
	items   []feedItem
	samples int
	// Set on the last batch: what ended the stream (io.EOF after a clean
	// end), whether the end chunk was seen, and the offset of the last
	// record read.
	end       bool
	err       error
	complete  bool
	endOffset int64
	acc       *capture.Account // the reader's account, when the source keeps one
}

// accounter is a Source that keeps a capture.Account (*capture.Reader does).
type accounter interface{ Account() capture.Account }

type feedItem struct {
	kind  capture.Kind // KindSamples, KindGap, KindIO or KindRejected
	ch    int
	start uint64
	p     []float64 // KindSamples: the channel's power from index start
	n     int       // KindRejected: samples
	sumW  float64   // KindRejected: their summed power, W
	why   capture.Reject
	gap   meter.Gap
	io    []capture.IOEvent
}

// feedDepth is 2, not 4: the reading goroutine still fills a batch while
// one waits, and the report's sample pass holds 2 × 512 KiB less power
// under the command's memory limit, where its live heap sits close to the
// limit and every MB of it is collections (the 5-minute gencap capture:
// ≈ 56 → 47 a report).
const (
	feedSamples = 1 << 16
	feedDepth   = 2
)

// startFeed reads src to its end in a new goroutine; want says which
// channels' samples are needed. Receive from out until a batch with end
// set; after that the goroutine has finished with src.
func startFeed(src Source, want []bool, rail func(*meter.Block)) *feed {
	f := &feed{
		rail:  rail,
		out:   make(chan *feedBatch, feedDepth),
		free:  make(chan []float64, 4*feedDepth*feedSamples/1000),
		spare: make(chan *feedBatch, feedDepth+2),
	}
	go f.run(src, want)
	return f
}

func (f *feed) run(src Source, want []bool) {
	b := f.batch()
	var last int64
	for {
		rec, err := src.Next()
		if err != nil {
			b.end, b.err, b.complete, b.endOffset = true, err, src.Complete(), last
			if a, ok := src.(accounter); ok {
				acc := a.Account()
				b.acc = &acc
			}
			f.out <- b
			return
		}
		last = rec.Offset
		switch rec.Kind {
		case capture.KindSamples:
			blk := rec.Block
			if blk == nil || blk.Channel < 0 || blk.Channel >= len(want) || !want[blk.Channel] {
				continue
			}
			n := min(len(blk.V), len(blk.I))
			if n == 0 {
				continue
			}
			if f.rail != nil {
				f.rail(blk)
			}
			p := f.buf(n)
			v, i := blk.V[:len(p)], blk.I[:len(p)]
			bad := false
			for k := range p {
				p[k] = float64(v[k]) * float64(i[k])
				bad = bad || !(math.Abs(p[k]) <= MaxPlausibleW) // NaN fails too
			}
			if bad {
				b.items = f.splitInvalid(b.items, blk.Channel, blk.Start, p)
			} else {
				b.items = append(b.items, feedItem{kind: capture.KindSamples, ch: blk.Channel, start: blk.Start, p: p})
			}
			b.samples += n
		case capture.KindRejected:
			blk := rec.Block
			if blk == nil || blk.Channel < 0 || blk.Channel >= len(want) || !want[blk.Channel] {
				continue
			}
			it := feedItem{kind: capture.KindRejected, ch: blk.Channel, start: blk.Start, why: rec.Rejected}
			for k := range min(len(blk.V), len(blk.I)) {
				if p := float64(blk.Power(k)); math.Abs(p) <= MaxPlausibleW {
					it.sumW += p
				}
				it.n++
			}
			b.items = append(b.items, it)
		case capture.KindGap:
			b.items = append(b.items, feedItem{kind: capture.KindGap, gap: rec.Gap})
		case capture.KindIO:
			b.items = append(b.items, feedItem{kind: capture.KindIO, io: append([]capture.IOEvent(nil), rec.IO...)})
		default:
			continue
		}
		if b.samples >= feedSamples || len(b.items) >= 1024 {
			f.out <- b
			b = f.batch()
		}
	}
}

// splitInvalid appends the samples of p (channel ch, from index start) as
// runs of valid power, each in a buffer of its own, and the invalid ones as
// gaps with reason GapInvalid; p goes back to the pool.
func (f *feed) splitInvalid(items []feedItem, ch int, start uint64, p []float64) []feedItem {
	ok := func(x float64) bool { return math.Abs(x) <= MaxPlausibleW }
	for k := 0; k < len(p); {
		e := k
		for e < len(p) && ok(p[e]) == ok(p[k]) {
			e++
		}
		if ok(p[k]) {
			q := f.buf(e - k)
			copy(q, p[k:e])
			items = append(items, feedItem{kind: capture.KindSamples, ch: ch, start: start + uint64(k), p: q})
		} else {
			items = append(items, feedItem{kind: capture.KindGap, ch: ch,
				gap: meter.Gap{Channel: ch, Start: start + uint64(k), Count: uint64(e - k), Reason: GapInvalid}})
		}
		k = e
	}
	f.recycle(p)
	return items
}

func (f *feed) batch() *feedBatch {
	select {
	case b := <-f.spare:
		return b
	default:
		return &feedBatch{}
	}
}

// done returns a batch whose items have been used.
func (f *feed) done(b *feedBatch) {
	clear(b.items) // drop references to I/O slices and power buffers
	b.items, b.samples = b.items[:0], 0
	select {
	case f.spare <- b:
	default:
	}
}

func (f *feed) buf(n int) []float64 {
	select {
	case p := <-f.free:
		if cap(p) >= n {
			return p[:n]
		}
	default:
	}
	return make([]float64, n, max(n, 1024))
}

// recycle returns a power buffer the accumulators no longer need.
func (f *feed) recycle(p []float64) {
	select {
	case f.free <- p[:0]:
	default:
	}
}

// drivePool runs the sample pass's per-drive work — driveProc.run and
// missing, where nearly all of the pass's time goes — on worker goroutines
// (about one per core, drive i on worker i%workers), while the goroutine
// that assembles the drives' power goes on with the next records. Each
// drive's runs still reach its driveProc one after another in sample order
// on one worker, and drives share nothing while streaming, so every figure
// is what the assembling goroutine computed itself (TestSamplePassParallel).
//
// The work goes in epochs: consecutive runs and missing stretches of every
// drive, in the order the assembler gave them, each run's power copied
// into the epoch. Every worker takes its drives' share of an epoch; the
// replaying goroutine then waits for the epoch and hands the sink the
// calls the drives made on it, in the same order as if the assembling
// goroutine had made them (see SampleSink), and recycles it. At most
// poolEpochs epochs exist, so memory stays bounded and a fast reader waits
// for the drives.
//
// While the pool runs, the assembling goroutine still owns what it counts
// itself on a driveProc (late, invalid, rejected, rejectedW, restartW and
// the I/O totals, total.io and phases[i].io); everything else of a
// driveProc is its worker's until close returns.
type drivePool struct {
	group  map[*driveProc]int // the worker of each drive
	in     []chan *epoch
	replay chan *epoch
	free   chan *epoch
	cur    *epoch
	sink   SampleSink
	done   sync.WaitGroup
	caught workerPanic
}

const (
	poolEpochs  = 4
	epochSample = 1 << 15 // samples per epoch (more if one run is longer)
	epochOps    = 1024
)

// epoch is a stretch of the drives' work.
type epoch struct {
	parts        []epochPart // by worker
	order        []int32     // with a sink: each op's worker, in the order given
	ops, samples int
	done         sync.WaitGroup
}

// epochPart is one worker's share of an epoch.
type epochPart struct {
	ops []driveOp
	p   []float64 // the runs' power
	log sinkLog   // the sink calls its drives made (with a sink)
}

// driveOp is a run (p[off:off+n], the first at index start) or a missing
// stretch (count samples from index start) of drive d.
type driveOp struct {
	d      *driveProc
	miss   bool
	start  uint64
	count  uint64
	off, n int
	calls  int // with a sink: log.calls[:calls] were made up to this op's end
}

// startDrivePool starts the workers of drives; sink is Options.Samples
// (nil: none). The drives' own sink becomes a recorder until close.
func startDrivePool(drives []*driveProc, sink SampleSink) *drivePool {
	n := max(1, min(len(drives), runtime.GOMAXPROCS(0)))
	p := &drivePool{group: map[*driveProc]int{}, in: make([]chan *epoch, n),
		replay: make(chan *epoch, poolEpochs), free: make(chan *epoch, poolEpochs), sink: sink}
	recs := make([]*sinkRecorder, n)
	for g := range n {
		p.in[g] = make(chan *epoch, poolEpochs)
		recs[g] = &sinkRecorder{}
	}
	for i, d := range drives {
		g := i % n
		p.group[d] = g
		if sink != nil {
			d.sink = recs[g]
		}
	}
	for range poolEpochs - 1 {
		p.free <- &epoch{parts: make([]epochPart, n)}
	}
	p.cur = &epoch{parts: make([]epochPart, n)}
	p.done.Add(n + 1)
	for g := range n {
		go p.work(g, recs[g])
	}
	go p.replayer()
	return p
}

// run gives drive d's n samples from index start to its worker: the caller
// fills the slice returned before it next calls the pool.
func (p *drivePool) run(d *driveProc, start uint64, n int) []float64 {
	if p.cur.ops >= epochOps || (p.cur.samples > 0 && p.cur.samples+n > epochSample) {
		p.flush()
	}
	g := p.group[d]
	part := &p.cur.parts[g]
	off := len(part.p)
	part.p = slices.Grow(part.p, n)[:off+n]
	p.add(g, driveOp{d: d, start: start, off: off, n: n})
	p.cur.samples += n
	return part.p[off:]
}

// missing gives drive d's count missing samples from index start to its
// worker.
func (p *drivePool) missing(d *driveProc, start, count uint64) {
	if p.cur.ops >= epochOps {
		p.flush()
	}
	p.add(p.group[d], driveOp{d: d, miss: true, start: start, count: count})
}

func (p *drivePool) add(g int, op driveOp) {
	part := &p.cur.parts[g]
	part.ops = append(part.ops, op)
	p.cur.ops++
	if p.sink != nil {
		p.cur.order = append(p.cur.order, int32(g))
	}
}

// flush hands the epoch to the workers and the replayer, and takes a free
// one (waiting for it while poolEpochs are under way).
func (p *drivePool) flush() {
	e := p.cur
	if e.ops == 0 {
		return
	}
	e.done.Add(len(p.in))
	for _, c := range p.in {
		c <- e
	}
	p.replay <- e
	p.cur = <-p.free
}

func (p *drivePool) work(g int, rec *sinkRecorder) {
	defer p.done.Done()
	for e := range p.in[g] {
		p.caught.do(func() {
			part := &e.parts[g]
			rec.log = &part.log
			for i := range part.ops {
				op := &part.ops[i]
				if op.miss {
					op.d.missing(op.start, op.count)
				} else {
					op.d.run(op.start, part.p[op.off:op.off+op.n])
				}
				op.calls = len(part.log.calls)
			}
			rec.log = nil
		})
		e.done.Done()
	}
}

// replayer waits for each epoch in turn, makes its sink calls in order and
// recycles it.
func (p *drivePool) replayer() {
	defer p.done.Done()
	next := make([]int, len(p.in))  // per worker: its next op
	calls := make([]int, len(p.in)) // per worker: its next sink call
	for e := range p.replay {
		e.done.Wait()
		if p.sink != nil {
			p.caught.do(func() {
				clear(next)
				clear(calls)
				for _, g := range e.order {
					part := &e.parts[g]
					end := part.ops[next[g]].calls
					next[g]++
					for ; calls[g] < end; calls[g]++ {
						part.log.calls[calls[g]].replay(p.sink)
					}
				}
			})
		}
		for g := range e.parts {
			part := &e.parts[g]
			clear(part.ops) // drop the drives
			part.ops, part.p = part.ops[:0], part.p[:0]
			clear(part.log.calls) // drop the references to the epoch's power
			part.log.calls = part.log.calls[:0]
		}
		e.order, e.ops, e.samples = e.order[:0], 0, 0
		p.free <- e
	}
}

// close hands over the last epoch, waits for the workers and the sink's
// last calls, and gives the drives their sink back.
func (p *drivePool) close() {
	p.flush()
	for _, c := range p.in {
		close(c)
	}
	close(p.replay)
	p.done.Wait()
	for d := range p.group {
		if p.sink != nil {
			d.sink = p.sink
		}
	}
	p.caught.raise()
}

// workerPanic keeps the first panic of a pass's worker goroutines, to be
// raised again by the goroutine that waits for them, where the command's
// handler of internal errors sees it (a panic on a goroutine of its own
// would end the process without it). Once one has panicked, do does
// nothing: the workers go on taking work, doing none, so that nothing
// waits on them forever.
type workerPanic struct {
	mu     sync.Mutex
	caught any
	failed bool
}

func (w *workerPanic) do(f func()) {
	w.mu.Lock()
	failed := w.failed
	w.mu.Unlock()
	if failed {
		return
	}
	defer func() {
		if p := recover(); p != nil {
			w.mu.Lock()
			if !w.failed {
				w.caught, w.failed = p, true
			}
			w.mu.Unlock()
		}
	}()
	f()
}

// raise panics with the panic caught, if any; call once the workers are
// done.
func (w *workerPanic) raise() {
	if w.failed {
		panic(w.caught)
	}
}
