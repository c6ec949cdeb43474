package analysis

import (
	"math"

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

const (
	feedSamples = 1 << 16
	feedDepth   = 4
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
