package replay

import (
	"fmt"
	"math"

	"github.com/idlewatt/idlewatt/workload/trace"
)

// Span is what CheckSpan knows of the target a trace will be replayed on.
type Span struct {
	Wrap  bool // offsets fold into the target (Config.Wrap)
	Sized bool // the target's size was given (a size to fold into)
	// Size is the target's size in bytes: as it will be created
	// (WouldCreate) or as it was opened; negative while not yet known (an
	// existing target before it opens).
	Size        int64
	WouldCreate bool
}

// SpanError is the op of a trace that no target as given can hold. N is
// its number in the trace (1-based).
type SpanError struct {
	N   int64
	Op  trace.Op
	Why string
}

func (e *SpanError) Error() string {
	return fmt.Sprintf("op %d (%s at offset %d, %d bytes): %s", e.N, e.Op.Type, e.Op.Offset, e.Op.Size, e.Why)
}

// CheckSpan refuses, from the trace's summary st (trace.Summarize), a trace
// whose furthest op the target cannot hold: before a target is created or
// opened for writing (an offset near 2^63 wrapped the span negative: a
// 4096-byte file was created, then the op refused, the file left), and
// again once an existing target is open and its size known. An op beyond
// the end is fine when offsets wrap; an end beyond math.MaxInt64 only when
// they wrap into a stated size. The error is a *SpanError.
func CheckSpan(st *trace.Stats, s Span) error {
	far := func(why string) error { return &SpanError{N: st.MaxEndN, Op: st.MaxEndOp, Why: why} }
	if st.EndOverflow && !(s.Wrap && s.Sized) {
		return far(fmt.Sprintf("ends beyond byte %d, the largest offset a file or device can have: no target holds it (give --wrap and --size to fold offsets into a target)", int64(math.MaxInt64)))
	}
	if s.Wrap || s.Size < 0 || st.MaxEnd <= s.Size {
		return nil
	}
	if s.WouldCreate {
		return far(fmt.Sprintf("ends at byte %d: op beyond the end of the target (%d bytes, as --size would create it); use --wrap to fold offsets into it, or a larger --size", st.MaxEnd, s.Size))
	}
	return far(fmt.Sprintf("ends at byte %d: op beyond the end of the target (%d bytes); use --wrap to fold offsets into it", st.MaxEnd, s.Size))
}
