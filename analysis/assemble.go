package analysis

import (
	"math"

	"github.com/idlewatt/idlewatt/meter"
)

// assembler turns per-channel blocks into per-drive power: the sum over a
// drive's rails of V×I at each sample index, where every rail has a sample.
// Where any rail is missing, the drive's sample is missing. Rails of one
// port arrive as separate blocks, usually back to back; a rail that falls
// further behind than maxPending samples is given up on up to there (its
// late samples are counted and ignored), so memory stays bounded.
type assembler struct {
	drives     []*driveAsm
	byChannel  []chanRef // indexed by channel
	maxPending int
	recycle    func([]float64) // takes back power buffers block was given; may be nil
	// pool, if set, runs the drives' runs and missing stretches on its
	// workers (a run copied into its buffer); nil = here, as they come.
	pool *drivePool
}

type chanRef struct {
	drive, rail int // -1 drive: not analysed
}

type driveAsm struct {
	proc    *driveProc
	rails   []*railQ
	cur     uint64 // next drive index to emit
	started bool   // cur is set: every rail has shown its first index
	end     uint64 // emit nothing at or past this index
	scratch []float64
}

type railQ struct {
	seen bool
	next uint64 // every index below is known: data or missing
	segs []seg
	n    int // samples buffered
}

type seg struct {
	start uint64
	p     []float64
}

func (s seg) end() uint64 { return s.start + uint64(len(s.p)) }

// add takes a drive whose rails are channels proc.rails.
func (a *assembler) add(proc *driveProc) {
	da := &driveAsm{proc: proc, end: math.MaxUint64}
	for r, ch := range proc.rails {
		a.byChannel[ch] = chanRef{drive: len(a.drives), rail: r}
		da.rails = append(da.rails, &railQ{})
	}
	a.drives = append(a.drives, da)
}

func (a *assembler) put(p []float64) {
	if a.recycle != nil {
		a.recycle(p)
	}
}

// block takes channel ch's power from index start; p is the assembler's
// until it hands it back through recycle.
func (a *assembler) block(ch int, start uint64, p []float64) {
	if ch < 0 || ch >= len(a.byChannel) || a.byChannel[ch].drive < 0 {
		a.put(p)
		return
	}
	ref := a.byChannel[ch]
	d := a.drives[ref.drive]
	q := d.rails[ref.rail]
	n := len(p)
	skip := 0
	if !q.seen {
		q.seen, q.next = true, start
	}
	if lo := max(q.next, d.cur); start < lo {
		skip = int(min(lo-start, uint64(n)))
		d.proc.late += uint64(skip)
	}
	if skip < n {
		s := start + uint64(skip)
		q.segs = append(q.segs, seg{s, p[skip:]})
		q.n += n - skip
		q.next = s + uint64(n-skip)
	} else {
		a.put(p)
	}
	a.drain(d)
}

func (a *assembler) gap(g meter.Gap) {
	apply := func(ch int) {
		ref := a.byChannel[ch]
		if ref.drive < 0 {
			return
		}
		d := a.drives[ref.drive]
		q := d.rails[ref.rail]
		if !q.seen {
			q.seen, q.next = true, g.Start
		}
		if e := g.Start + g.Count; e > q.next {
			q.next = e
		}
		a.drain(d)
	}
	if g.Channel == -1 {
		for ch := range a.byChannel {
			apply(ch)
		}
		return
	}
	if g.Channel >= 0 && g.Channel < len(a.byChannel) {
		apply(g.Channel)
	}
}

// drain emits every index all rails know about. When one rail runs more
// than maxPending samples ahead, the others are given up on up to there.
func (a *assembler) drain(d *driveAsm) {
	if !d.started {
		// The drive starts where its last rail starts; earlier samples of the
		// other rails have no partner. A rail that never shows up is given
		// up on after maxPending samples.
		first, lead, all := uint64(0), uint64(0), true
		for _, q := range d.rails {
			if !q.seen {
				all = false
				continue
			}
			first = max(first, q.segStart())
			lead = max(lead, q.next)
		}
		if !all && !(lead > 0 && lead-d.firstSeen() > uint64(a.maxPending)) {
			return
		}
		d.started, d.cur = true, first
		for _, q := range d.rails {
			if !q.seen {
				q.seen, q.next = true, first
			}
		}
	}
	limit := d.end
	lead := uint64(0)
	for _, q := range d.rails {
		limit = min(limit, q.next)
		lead = max(lead, q.next)
	}
	if lead > limit && lead-limit > uint64(a.maxPending) {
		limit = max(limit, min(d.end, lead-uint64(a.maxPending)))
	}
	for d.cur < limit {
		end := limit
		missing := false
		for _, q := range d.rails {
			for len(q.segs) > 0 && q.segs[0].end() <= d.cur {
				q.n -= len(q.segs[0].p)
				a.put(q.segs[0].p)
				q.segs = q.segs[1:]
			}
			if len(q.segs) == 0 {
				missing = true
				continue
			}
			s := q.segs[0]
			if s.start > d.cur {
				missing = true
				end = min(end, s.start)
			} else {
				end = min(end, s.end())
			}
		}
		if missing {
			if a.pool != nil {
				a.pool.missing(d.proc, d.cur, end-d.cur)
			} else {
				d.proc.missing(d.cur, end-d.cur)
			}
			d.cur = end
			continue
		}
		n := int(end - d.cur)
		var ps []float64
		switch {
		case len(d.rails) == 1:
			s := d.rails[0].segs[0]
			o := int(d.cur - s.start)
			ps = s.p[o : o+n]
			if a.pool != nil {
				copy(a.pool.run(d.proc, d.cur, n), ps)
			}
		default:
			if a.pool != nil {
				ps = a.pool.run(d.proc, d.cur, n) // filled here, before the pool's next call
			} else {
				if cap(d.scratch) < n {
					d.scratch = make([]float64, n)
				}
				ps = d.scratch[:n]
			}
			rail := func(r int) []float64 {
				s := d.rails[r].segs[0]
				return s.p[int(d.cur-s.start):][:n]
			}
			// Two rails (5 V and 12 V) is the usual drive: one pass.
			x, y := rail(0), rail(1)
			for k := range ps {
				ps[k] = x[k] + y[k]
			}
			for r := 2; r < len(d.rails); r++ {
				x := rail(r)
				for k := range ps {
					ps[k] += x[k]
				}
			}
		}
		if a.pool == nil {
			d.proc.run(d.cur, ps)
		}
		d.cur = end
	}
	for _, q := range d.rails {
		if q.next < d.cur {
			q.next = d.cur
		}
		for len(q.segs) > 0 && q.segs[0].end() <= d.cur {
			q.n -= len(q.segs[0].p)
			a.put(q.segs[0].p)
			q.segs = q.segs[1:]
		}
	}
}

// segStart returns the first index the rail has buffered, or next.
func (q *railQ) segStart() uint64 {
	if len(q.segs) > 0 {
		return q.segs[0].start
	}
	return q.next
}

// firstSeen returns the lowest first index among rails seen.
func (d *driveAsm) firstSeen() uint64 {
	f := uint64(^uint64(0))
	for _, q := range d.rails {
		if q.seen {
			f = min(f, q.segStart())
		}
	}
	return f
}
