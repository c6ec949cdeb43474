package progress

import (
	"bytes"
	"strings"
	"testing"
	"time"
)

// TestLine: on a virtual clock, nothing is printed for a step's
// first two seconds, then a line a second naming the step and how far it
// is; a new step starts its own two seconds; names are escaped.
func TestLine(t *testing.T) {
	t.Parallel()
	var b bytes.Buffer
	now := time.Unix(1000, 0)
	p := New(&b, "report", func() time.Time { return now })
	var off int64
	p.Passes("c\x1b[2J.iwcap", func() int32 { return 2 }, func() float64 { return float64(off) / 1000 })
	for _, step := range []struct {
		dt   time.Duration
		off  int64
		want string
	}{
		{time.Second, 100, ""},
		{900 * time.Millisecond, 200, ""},
		{100 * time.Millisecond, 250, "report: reading c\\x1b[2J.iwcap (pass 2): 25 % after 2 s\n"},
		{500 * time.Millisecond, 300, ""},
		{500 * time.Millisecond, 500, "report: reading c\\x1b[2J.iwcap (pass 2): 50 % after 3 s\n"},
	} {
		b.Reset()
		now = now.Add(step.dt)
		off = step.off
		p.Tick()
		if b.String() != step.want {
			t.Fatalf("at +%v: printed %q, want %q", step.dt, b.String(), step.want)
		}
	}
	p.Step("building report.html", nil)
	b.Reset()
	now = now.Add(time.Second)
	p.Tick()
	if b.Len() != 0 {
		t.Fatalf("a new step printed at once: %q", b.String())
	}
	now = now.Add(1500 * time.Millisecond)
	p.Tick()
	if got := b.String(); !strings.HasPrefix(got, "report: building report.html after 2 s") {
		t.Fatalf("printed %q", got)
	}
}
