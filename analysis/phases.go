package analysis

import "sort"

// phaseSet collects StatePhase events. Port 0 events apply to every drive.
type phaseSet struct {
	events []phaseEvent
}

type phaseEvent struct {
	t    int64
	port int
	name string
}

// endPhase is the phase name that ends the current phase without starting
// another.
const endPhase = "end"

func (ps *phaseSet) add(t int64, port int, name string) {
	ps.events = append(ps.events, phaseEvent{t, port, name})
}

// cursor returns a phase cursor for port and the phase names it indexes, in
// order of first appearance.
func (ps *phaseSet) cursor(port int) (phaseCursor, []string) {
	var ev []phaseEvent
	for _, e := range ps.events {
		if e.port == 0 || e.port == port {
			ev = append(ev, e)
		}
	}
	sort.SliceStable(ev, func(i, j int) bool { return ev[i].t < ev[j].t })
	c := phaseCursor{}
	var names []string
	idx := map[string]int{}
	for _, e := range ev {
		i := -1
		if e.name != endPhase && e.name != "" {
			var ok bool
			if i, ok = idx[e.name]; !ok {
				i = len(names)
				idx[e.name] = i
				names = append(names, e.name)
			}
		}
		c.marks = append(c.marks, phaseMark{e.t, e.name})
		c.index = append(c.index, i)
	}
	return c, names
}

// phaseAt returns the phase index at host time t, by binary search (I/O
// events are not in issue order, so they cannot use the cursor).
func (c *phaseCursor) phaseAt(t int64) int {
	i := sort.Search(len(c.marks), func(i int) bool { return c.marks[i].t > t })
	if i == 0 {
		return -1
	}
	return c.index[i-1]
}

// spans returns the [start, end) host-time spans of each phase, ending the
// last at end.
func (c *phaseCursor) spans(names []string, end int64) []phaseSpan {
	var out []phaseSpan
	for i, m := range c.marks {
		if c.index[i] < 0 {
			continue
		}
		e := end
		if i+1 < len(c.marks) {
			e = c.marks[i+1].t
		}
		out = append(out, phaseSpan{names[c.index[i]], m.t, e})
	}
	return out
}

type phaseSpan struct {
	name string
	s, e int64
}
