package report

import (
	"fmt"

	"github.com/idlewatt/idlewatt/internal/outfile"
	"github.com/idlewatt/idlewatt/report/chart"
	"github.com/idlewatt/idlewatt/workload/replay"
)

// iopsSeries is the run's completions per whole second. The last second is
// only partly covered when the run ended inside it; its count is not a
// second's worth and would read as a stall, so it is left out and the
// subtitle note says so.
func iopsSeries(name string, res replay.Result) (chart.IOPSSeries, string) {
	s := chart.IOPSSeries{Name: name}
	per := res.PerSecond
	note := ""
	if n := len(per); n > 0 {
		if covered := res.Elapsed.Seconds() - float64(n-1); covered < 1 {
			per = per[:n-1]
			note = fmt.Sprintf("; the last %.2f s (a partial second, %d I/Os) not drawn", max(covered, 0), res.PerSecond[n-1])
		}
	}
	for i, n := range per {
		s.T = append(s.T, float64(i))
		s.IOPS = append(s.IOPS, float64(n))
	}
	return s, note
}

// IOPSChart draws a replay or bench run's IOPS per second (the consistency
// chart) for the target name into path (.png or .svg) under o.
func IOPSChart(path, name string, res replay.Result, o outfile.Options) error {
	s, note := iopsSeries(name, res)
	fig, err := chart.IOPSConsistency([]chart.IOPSSeries{s}, chart.IOPSOpts{
		Title:    "Performance consistency: IOPS per second",
		Subtitle: fmt.Sprintf("%s, QD %d, %s%s", name, res.QD, res.Timing, note),
	})
	if err != nil {
		return err
	}
	return fig.SaveWith(path, o)
}
