package report

import (
	"strings"
	"testing"
	"time"

	"github.com/idlewatt/idlewatt/workload/replay"
)

// The consistency chart does not draw a partial last second as a stall.
func TestIOPSSeriesDropsPartialSecond(t *testing.T) {
	t.Parallel()
	res := replay.Result{PerSecond: []int64{900, 1000, 1000, 120}, Elapsed: 3120 * time.Millisecond}
	s, note := iopsSeries("d", res)
	if len(s.IOPS) != 3 || s.IOPS[2] != 1000 || !strings.Contains(note, "0.12 s") || !strings.Contains(note, "120 I/Os") {
		t.Errorf("partial last second: %v, note %q", s.IOPS, note)
	}
	res = replay.Result{PerSecond: []int64{900, 1000}, Elapsed: 2 * time.Second}
	s, note = iopsSeries("d", res)
	if len(s.IOPS) != 2 || note != "" {
		t.Errorf("whole seconds: %v, note %q", s.IOPS, note)
	}
}
