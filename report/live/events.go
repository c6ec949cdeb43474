package live

// liveEvent is one thing the page draws besides power, in the order it
// was seen: kind "phase" (Text from T on), "pin" (DEVSLP asserted On at T;
// Src "meter" or "host"), "mark" (Text at T), "busy" (I/O busy from T to
// T2; a later event with the same ID replaces it), "io" (Ops and Bytes
// issued in fine bucket K), "note" (an annotation at T, to T2 if set).
type liveEvent struct {
	Seq   uint64  `json:"seq"`
	Kind  string  `json:"kind"`
	Port  int     `json:"port"`
	T     float64 `json:"t"`
	T2    float64 `json:"t2,omitempty"`
	Text  string  `json:"text,omitempty"`
	On    bool    `json:"on,omitempty"`
	Src   string  `json:"src,omitempty"`
	ID    int     `json:"id,omitempty"`
	K     int64   `json:"k,omitempty"`
	Ops   uint64  `json:"ops,omitempty"`
	Bytes uint64  `json:"bytes,omitempty"`
}

// eventLog keeps the last len(buf) events; seq numbers them from 1.
type eventLog struct {
	buf  []liveEvent
	next uint64 // seq of the next event
}

func (l *eventLog) init(n int) { l.buf, l.next = make([]liveEvent, n), 1 }

func (l *eventLog) add(e liveEvent) {
	e.Seq = l.next
	l.buf[int(l.next%uint64(len(l.buf)))] = e
	l.next++
}

// since returns the events after seq (at most max of them, oldest first)
// and whether some after seq were already overwritten.
func (l *eventLog) since(seq uint64, maxN int) (out []liveEvent, lost bool) {
	first := seq + 1
	if oldest := l.next - min(l.next-1, uint64(len(l.buf))); first < oldest {
		first, lost = oldest, seq > 0 || oldest > 1
	}
	for s := first; s < l.next && len(out) < maxN; s++ {
		out = append(out, l.buf[int(s%uint64(len(l.buf)))])
	}
	return out, lost
}
