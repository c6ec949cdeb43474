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

// Rows merges a capture's per-channel sample chunks into rows by sample
// index, in bounded memory: it buffers only as far ahead as the channels'
// chunks are skewed in the file (one flush's worth when written by Writer),
// and at most maxAhead samples before it stops waiting for a channel.
// The Row's slices are reused by the next call to Next.
type Rows struct {
	r       *Reader
	qs      []queue
	row     Row
	next    uint64 // first index not yet emitted
	started bool
	end     error // the reader's final error (io.EOF when clean)
	// Late counts samples dropped because their row had already been
	// emitted (out-of-order chunks; a Writer never produces them).
	Late uint64
}

const maxAhead = 1 << 20

type queue struct {
	idx  []uint64
	v    []units.Volts
	i    []units.Amps
	head int
}

func (q *queue) len() int { return len(q.idx) - q.head }

func (q *queue) push(idx uint64, v units.Volts, i units.Amps) {
	if q.head > 0 && q.head >= len(q.idx)/2 {
		n := copy(q.idx, q.idx[q.head:])
		copy(q.v, q.v[q.head:])
		copy(q.i, q.i[q.head:])
		q.idx, q.v, q.i, q.head = q.idx[:n], q.v[:n], q.i[:n], 0
	}
	q.idx, q.v, q.i = append(q.idx, idx), append(q.v, v), append(q.i, i)
}

// NewRows reads r's sample records as rows. Other records are skipped.
func NewRows(r *Reader) *Rows {
	n := len(r.Header().Channels)
	return &Rows{r: r, qs: make([]queue, n),
		row: Row{Present: make([]bool, n), V: make([]units.Volts, n), I: make([]units.Amps, n)}}
}

// Next returns the next row; io.EOF at a clean end; the Reader's error
// (e.g. ErrTruncated) after the last row it could deliver.
func (rs *Rows) Next() (*Row, error) {
	if err := rs.fill(); err != nil {
		return nil, err
	}
	var cur uint64
	found := false
	for c := range rs.qs {
		if q := &rs.qs[c]; q.len() > 0 && (!found || q.idx[q.head] < cur) {
			cur, found = q.idx[q.head], true
		}
	}
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
		if q := &rs.qs[c]; q.len() > 0 && q.idx[q.head] == cur {
			row.Present[c], row.V[c], row.I[c] = true, q.v[q.head], q.i[q.head]
			q.head++
		}
	}
	rs.started, rs.next = true, cur+1
	return row, nil
}

// fill reads until every channel has a sample queued, the reader ends, or
// maxAhead samples are buffered.
func (rs *Rows) fill() error {
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
		for k := range b.V {
			idx := b.Start + uint64(k)
			if rs.started && idx < rs.next || q.len() > 0 && idx <= q.idx[len(q.idx)-1] {
				rs.Late++ // behind what was already emitted: a meter or writer fault
				continue
			}
			q.push(idx, b.V[k], b.I[k])
		}
	}
	return nil
}
