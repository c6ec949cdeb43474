package analysis_test

import (
	"testing"

	"github.com/idlewatt/idlewatt/analysis"
)

// A format 1 capture's only summary level is 1000 samples wide: the whole
// view of a 6 s capture at 100 S/s was one point at 5 s (a 30 s one three
// points, the axis 5–25 s). Too coarse a level is not drawn; the samples are.
func TestPlotFormat1CoarseSummaries(t *testing.T) {
	for _, c := range []struct {
		path       string
		start, end float64 // the capture's first and last sample, s
	}{
		{"../fixtures/hostile/six-seconds.iwcap", 0, 5.99},
		{"../fixtures/hostile/chunked-30s.iwcap", 0, 29.99},
	} {
		pd, err := analysis.PlotTraces(c.path, analysis.PlotOptions{Buckets: 2000})
		if err != nil {
			t.Fatalf("%s: %v", c.path, err)
		}
		for _, tr := range pd.Traces {
			p := tr.Power
			n := p.Len()
			if n < 100 || p.T[0] > c.start+0.1 || p.T[n-1] < c.end-0.1 {
				t.Errorf("%s %s: %d points from %v to %v s, want the whole %v–%v s", c.path, tr.Name, n, p.T[0], p.T[n-1], c.start, c.end)
			}
		}
	}
}
