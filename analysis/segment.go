package analysis

import "sort"

// Activity is what I/O says a drive was doing at an instant.
type Activity uint8

// Activities, from I/O segmentation.
const (
	Idle   Activity = 0 // no I/O outstanding and the settle tail is over
	Busy   Activity = 1 // from the first issue to the last completion of overlapping I/O
	Settle Activity = 2 // within the settle time after a busy interval
)

func (a Activity) String() string {
	switch a {
	case Busy:
		return "busy"
	case Settle:
		return "settle"
	}
	return "idle"
}

// span is a closed host-time interval [s, e] in ns.
type span struct{ s, e int64 }

// spanSet collects I/O intervals and merges the overlapping ones. I/O arrives
// in completion order, roughly in time, so most events extend the last span;
// the rest are appended and folded in by an occasional sort-and-merge, which
// keeps memory proportional to the number of disjoint busy intervals.
type spanSet struct {
	spans   []span
	gap     int64 // spans closer than this merge: the drive never got to rest between them
	compact int   // length after the last compaction
}

func (ss *spanSet) add(s, e int64) {
	if e < s {
		s, e = e, s
	}
	if n := len(ss.spans); n > 0 {
		l := &ss.spans[n-1]
		if s >= l.s && s <= l.e+ss.gap {
			if e > l.e {
				l.e = e
			}
			return
		}
	}
	ss.spans = append(ss.spans, span{s, e})
	if len(ss.spans) > 2*ss.compact+4096 {
		ss.merge()
	}
}

// merge sorts and merges in place.
func (ss *spanSet) merge() {
	sp := ss.spans
	sort.Slice(sp, func(i, j int) bool { return sp[i].s < sp[j].s })
	out := sp[:0]
	for _, x := range sp {
		if n := len(out); n > 0 && x.s <= out[n-1].e+ss.gap {
			if x.e > out[n-1].e {
				out[n-1].e = x.e
			}
			continue
		}
		out = append(out, x)
	}
	ss.spans = out
	ss.compact = len(out)
}

// activityCursor answers Activity for nondecreasing times in amortised O(1).
type activityCursor struct {
	spans  []span // sorted, disjoint
	settle int64
	i      int
}

func (c *activityCursor) at(t int64) Activity {
	for c.i+1 < len(c.spans) && c.spans[c.i+1].s <= t {
		c.i++
	}
	if len(c.spans) == 0 || c.spans[c.i].s > t {
		return Idle
	}
	sp := c.spans[c.i]
	switch {
	case t <= sp.e:
		return Busy
	case t <= sp.e+c.settle:
		return Settle
	}
	return Idle
}

// next returns the host time at which the activity answered for t may next
// change, so a caller can process a run of samples without asking per sample.
func (c *activityCursor) next(t int64) int64 {
	const never = int64(^uint64(0) >> 1)
	a := c.at(t)
	nextStart := never
	if len(c.spans) > 0 {
		if c.spans[c.i].s > t {
			nextStart = c.spans[c.i].s
		} else if c.i+1 < len(c.spans) {
			nextStart = c.spans[c.i+1].s
		}
	}
	switch a {
	case Busy:
		return c.spans[c.i].e + 1
	case Settle:
		return min(c.spans[c.i].e+c.settle+1, nextStart)
	}
	return nextStart
}

// phaseMark is the start of a named phase on the host clock; name "" ends
// the current phase without starting another.
type phaseMark struct {
	t    int64
	name string
}

// phaseCursor answers the phase index (into names) for nondecreasing times;
// -1 is outside any phase.
type phaseCursor struct {
	marks []phaseMark
	index []int // phase index per mark, -1 for an end mark
	i     int   // marks[:i] have started
}

func (c *phaseCursor) at(t int64) int {
	for c.i < len(c.marks) && c.marks[c.i].t <= t {
		c.i++
	}
	if c.i == 0 {
		return -1
	}
	return c.index[c.i-1]
}

// next returns the host time of the next phase change after t.
func (c *phaseCursor) next(t int64) int64 {
	c.at(t)
	if c.i < len(c.marks) {
		return c.marks[c.i].t
	}
	return int64(^uint64(0) >> 1)
}
