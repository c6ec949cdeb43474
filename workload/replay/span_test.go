package replay

import (
	"errors"
	"math"
	"strings"
	"testing"

	"github.com/idlewatt/idlewatt/workload"
	"github.com/idlewatt/idlewatt/workload/trace"
)

// TestCheckSpan: a trace's furthest op against the target: refused beyond
// the end of a target to be created or an opened one (even an empty one),
// allowed when offsets wrap or the size is not yet known; an end past
// math.MaxInt64 allowed only when offsets wrap into a stated size.
func TestCheckSpan(t *testing.T) {
	op := trace.Op{Type: workload.OpRead, Offset: 2 << 20, Size: 4096}
	st := &trace.Stats{MaxEnd: op.End(), MaxEndOp: op, MaxEndN: 2}
	over := &trace.Stats{MaxEnd: math.MaxInt64, MaxEndOp: trace.Op{Type: workload.OpWrite, Offset: math.MaxInt64 - 10, Size: 4096}, MaxEndN: 1, EndOverflow: true}
	for _, c := range []struct {
		name string
		st   *trace.Stats
		s    Span
		want string // "" for no error
	}{
		{"created too small", st, Span{Size: 1 << 20, WouldCreate: true},
			"op 2 (read at offset 2097152, 4096 bytes): ends at byte 2101248: op beyond the end of the target (1048576 bytes, as --size would create it)"},
		{"opened too small", st, Span{Size: 1 << 20}, "op beyond the end of the target (1048576 bytes); use --wrap"},
		{"opened empty", st, Span{Size: 0}, "(0 bytes); use --wrap"},
		{"fits exactly", st, Span{Size: op.End(), WouldCreate: true}, ""},
		{"wraps", st, Span{Wrap: true, Size: 4096}, ""},
		{"not yet known", st, Span{Size: -1}, ""},
		{"overflow", over, Span{Wrap: true, Size: -1}, "op 1 (write at offset 9223372036854775797, 4096 bytes): ends beyond byte 9223372036854775807"},
		{"overflow wrapped into a size", over, Span{Wrap: true, Sized: true, Size: -1}, ""},
	} {
		err := CheckSpan(c.st, c.s)
		var se *SpanError
		switch {
		case c.want == "" && err != nil:
			t.Errorf("%s: %v, want none", c.name, err)
		case c.want != "" && (err == nil || !errors.As(err, &se) || !strings.Contains(err.Error(), c.want)):
			t.Errorf("%s: %v, want a *SpanError with %q", c.name, err, c.want)
		}
	}
}
