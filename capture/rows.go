package capture

import (
	"errors"
	"io"

	"github.com/idlewatt/idlewatt/units"
)

// Row is one sample time across all channels of a capture, or a stretch of
// sample indices no channel has.
type Row struct {
	Index uint64 // meter sample index
	// Gap > 0: indices [Index, Index+Gap) are missing on every channel, and
	// Present is all false.
	Gap     uint64
	Present []bool // per channel: a sample exists at Index
	V       []units.Volts
	I       []units.Amps
}

// Run is a stretch of consecutive rows in which the same channels are
// present: rows Index … Index+N-1 with N ≥ 1, where V[c] and I[c] hold
// channel c's N samples if Present[c] and are nil otherwise; or a gap
// (Gap > 0, N = 0), exactly as Row's.
type Run struct {
	Index   uint64
	N       int
	Gap     uint64
	Present []bool
	V       [][]units.Volts
	I       [][]units.Amps
}

// Rows merges a capture's per-channel sample chunks into rows by sample
// index, in bounded memory: it buffers only as far ahead as the channels'
// chunks are skewed in the file (one flush's worth when written by Writer),
// and at most maxAhead samples before it stops waiting for a channel.
// The Row's slices are reused by the next call to Next.
type Rows struct {
	r       RecordSource
	qs      []queue
	row     Row
	run     Run
	next    uint64 // first index not yet emitted
	started bool
	end     error // the reader's final error (io.EOF when clean)
	// Late counts samples dropped because their row had already been
	// emitted (out-of-order chunks; a Writer never produces them).
	Late uint64
}

const maxAhead = 1 << 20

// queue holds one channel's samples not yet emitted, as the runs of
// consecutive indices they arrived in (one per block, copied out of the
// Reader's reused buffers), so queueing costs a copy per block rather than
// work per sample.
type queue struct {
	segs []qseg
	head int // segs[:head] are used up
	n    int // samples queued
	free []qseg
}

type qseg struct {
	start uint64 // index of v[0]
	v     []units.Volts
	i     []units.Amps
	off   int // samples of the run already emitted
}

func (q *queue) len() int { return q.n }

// front returns the index of the oldest queued sample; q.n must be > 0.
func (q *queue) front() uint64 {
	s := &q.segs[q.head]
	return s.start + uint64(s.off)
}

// last returns the index of the newest queued sample; q.n must be > 0.
func (q *queue) last() uint64 {
	s := &q.segs[len(q.segs)-1]
	return s.start + uint64(len(s.v)) - 1
}

// pop removes the oldest sample.
func (q *queue) pop() (units.Volts, units.Amps) {
	s := &q.segs[q.head]
	v, i := s.v[s.off], s.i[s.off]
	s.off++
	q.n--
	if s.off == len(s.v) {
		q.retire()
	}
	return v, i
}

// take removes the n oldest samples, all from the oldest run (n must not
// exceed what is left of it). The slices stay valid until the next push.
func (q *queue) take(n int) ([]units.Volts, []units.Amps) {
	s := &q.segs[q.head]
	v, i := s.v[s.off:s.off+n], s.i[s.off:s.off+n]
	s.off += n
	q.n -= n
	if s.off == len(s.v) {
		q.retire()
	}
	return v, i
}

// headLeft is how many samples are left of the oldest run; q.n must be > 0.
func (q *queue) headLeft() int {
	s := &q.segs[q.head]
	return len(s.v) - s.off
}

// retire drops the used-up oldest run, keeping its buffers for reuse.
func (q *queue) retire() {
	s := &q.segs[q.head]
	if len(q.free) < 8 {
		q.free = append(q.free, qseg{v: s.v[:0], i: s.i[:0]})
	}
	*s = qseg{}
	q.head++
	if q.head == len(q.segs) {
		q.segs, q.head = q.segs[:0], 0
	} else if q.head >= 64 && q.head >= len(q.segs)/2 {
		q.segs = q.segs[:copy(q.segs, q.segs[q.head:])]
		q.head = 0
	}
}

// push appends the run of samples v, i starting at index start.
func (q *queue) push(start uint64, v []units.Volts, i []units.Amps) {
	var s qseg
	if k := len(q.free); k > 0 {
		s = q.free[k-1]
		q.free = q.free[:k-1]
	}
	s.start, s.off = start, 0
	s.v, s.i = append(s.v[:0], v...), append(s.i[:0], i...)
	q.segs = append(q.segs, s)
	q.n += len(v)
}

// RecordSource is what Rows reads: a capture's header and its records in
// file order. *Reader implements it, and so does any wrapper of one (a
// cancellable reader, say), so every pass over the samples can be made
// from any source.
type RecordSource interface {
	Header() Header
	Next() (Record, error)
}

// NewRows reads r's sample records as rows. Other records are skipped.
func NewRows(r RecordSource) *Rows {
	n := len(r.Header().Channels)
	return &Rows{r: r, qs: make([]queue, n),
		row: Row{Present: make([]bool, n), V: make([]units.Volts, n), I: make([]units.Amps, n)},
		run: Run{Present: make([]bool, n), V: make([][]units.Volts, n), I: make([][]units.Amps, n)}}
}

// Next returns the next row; io.EOF at a clean end; the Reader's error
// (e.g. ErrTruncated) after the last row it could deliver.
func (rs *Rows) Next() (*Row, error) {
	if err := rs.fill(); err != nil {
		return nil, err
	}
	cur, found := rs.front()
	if !found {
		return nil, rs.end
	}
	row := &rs.row
	clear(row.Present)
	clear(row.V)
	clear(row.I)
	if rs.started && cur > rs.next {
		row.Index, row.Gap = rs.next, cur-rs.next
		rs.next = cur
		return row, nil
	}
	row.Index, row.Gap = cur, 0
	for c := range rs.qs {
		if q := &rs.qs[c]; q.len() > 0 && q.front() == cur {
			row.Present[c] = true
			row.V[c], row.I[c] = q.pop()
		}
	}
	rs.started, rs.next = true, cur+1
	return row, nil
}

// NextRun returns the next rows as one Run: the rows Next would return,
// in the same order, with the same Late count, but a block's worth at a
// time. Its slices are reused by the next call to Next or NextRun. Next and
// NextRun may be mixed.
func (rs *Rows) NextRun() (*Run, error) {
	if err := rs.fill(); err != nil {
		return nil, err
	}
	cur, found := rs.front()
	if !found {
		return nil, rs.end
	}
	run := &rs.run
	clear(run.Present)
	clear(run.V)
	clear(run.I)
	run.Index, run.N, run.Gap = cur, 0, 0
	if rs.started && cur > rs.next {
		run.Index, run.Gap = rs.next, cur-rs.next
		rs.next = cur
		return run, nil
	}
	// The run ends where a present channel's block ends or an absent one's
	// next sample begins. A channel with nothing queued while the reader
	// has more (fill stopped at maxAhead) may get samples from the next
	// read, as it would row by row: one row at a time then.
	n := int(^uint(0) >> 1)
	for c := range rs.qs {
		q := &rs.qs[c]
		switch {
		case q.len() == 0:
			if rs.end == nil {
				n = 1
			}
		case q.front() == cur:
			n = min(n, q.headLeft())
		default:
			n = min(n, int(min(q.front()-cur, uint64(n))))
		}
	}
	for c := range rs.qs {
		if q := &rs.qs[c]; q.len() > 0 && q.front() == cur {
			run.Present[c] = true
			run.V[c], run.I[c] = q.take(n)
		}
	}
	run.N = n
	rs.started, rs.next = true, cur+uint64(n)
	return run, nil
}

// front is the lowest index queued on any channel.
func (rs *Rows) front() (cur uint64, found bool) {
	for c := range rs.qs {
		if q := &rs.qs[c]; q.len() > 0 && (!found || q.front() < cur) {
			cur, found = q.front(), true
		}
	}
	return cur, found
}

// fill reads until every channel has a sample queued, the reader ends, or
// maxAhead samples are buffered.
func (rs *Rows) fill() error {
	for len(rs.qs) == 0 && rs.end == nil {
		// No channels (a header the Reader would refuse): no rows, but the
		// reader's end still ends the rows.
		if _, err := rs.r.Next(); err != nil {
			rs.end = err
		}
	}
	for rs.end == nil {
		total, empty := 0, false
		for c := range rs.qs {
			total += rs.qs[c].len()
			empty = empty || rs.qs[c].len() == 0
		}
		if !empty || total >= maxAhead {
			return nil
		}
		rec, err := rs.r.Next()
		if err != nil {
			rs.end = err
			if !errors.Is(err, io.EOF) && !errors.Is(err, ErrTruncated) {
				return err // an I/O error: stop now
			}
			return nil
		}
		if rec.Kind != KindSamples {
			continue
		}
		b := rec.Block
		q := &rs.qs[b.Channel]
		n := min(len(b.V), len(b.I))
		// A block's indices increase by one, so the samples behind what
		// was already emitted or queued are a prefix of it.
		skip := uint64(0)
		if rs.started && b.Start < rs.next {
			skip = rs.next - b.Start
		}
		if q.len() > 0 && b.Start <= q.last() {
			skip = max(skip, q.last()-b.Start+1)
		}
		skip = min(skip, uint64(n))
		rs.Late += skip // behind what was already emitted: a meter or writer fault
		if int(skip) < n {
			q.push(b.Start+skip, b.V[skip:n], b.I[skip:n])
		}
	}
	return nil
}
