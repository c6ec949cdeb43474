package replay

import (
	"context"
	"testing"
	"time"

	"github.com/idlewatt/idlewatt/workload"
	"github.com/idlewatt/idlewatt/workload/trace"
)

// BenchmarkRecordedTiming measures how late each engine issues ops on this
// machine, now: 200 reads 1 ms apart (recorded timing, QD 4) per
// iteration, lateness = issue − due time. The unit tests only check that no
// op goes early (TestRecordedTimingHonoursGaps) and that the due times are
// the trace's (TestScheduleFollowsTrace); lateness depends on the load, so
// it is reported here, never asserted:
//
//	go test ./workload/replay -run '^$' -bench RecordedTiming -benchtime 5x
func BenchmarkRecordedTiming(b *testing.B) {
	for _, engine := range []string{"uring", "sync"} {
		b.Run(engine, func(b *testing.B) {
			tg := newTarget(b, 1<<20)
			ops := make([]trace.Op, 200)
			for i := range ops {
				ops[i] = trace.Op{Time: time.Duration(i) * time.Millisecond, Type: workload.OpRead, Offset: int64(i%64) * 4096, Size: 4096}
			}
			var mean, p99, worst, drift time.Duration
			for b.Loop() {
				res, err := Run(context.Background(), Config{QD: 4, Engine: engine}, &sliceReader{ops: ops}, tg, nil)
				if err != nil {
					b.Fatal(err)
				}
				mean += res.Lateness.Mean
				p99 = max(p99, res.Lateness.P99)
				worst = max(worst, res.Lateness.Max)
				drift = max(drift, res.Lateness.Drift)
			}
			b.ReportMetric(float64(mean.Microseconds())/float64(b.N), "mean_late_µs")
			b.ReportMetric(float64(p99.Microseconds()), "p99_late_µs")
			b.ReportMetric(float64(worst.Microseconds()), "max_late_µs")
			b.ReportMetric(float64(drift.Microseconds()), "last_op_late_µs")
		})
	}
}
