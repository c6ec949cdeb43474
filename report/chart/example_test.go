package chart_test

import (
	"fmt"
	"math"
	"os"
	"path/filepath"

	"github.com/idlewatt/idlewatt/report/chart"
)

// A capture is streamed through a Decimator block by block; the envelope it
// returns is what PowerOverTime draws.
func Example() {
	dec, err := chart.NewDecimator(chart.DecimatorOpts{Buckets: 500, Span: 10})
	if err != nil {
		panic(err)
	}
	block := make([]float64, 1000) // one 0.1 s meter block at 10 kS/s
	for b := 0; b < 100; b++ {
		t0 := float64(b) / 10
		for i := range block {
			block[i] = 0.4 // idle
			if t0 >= 2 && t0 < 3 {
				block[i] = 1.8 + 0.2*math.Sin(float64(i)) // I/O burst
			}
		}
		dec.AddUniform(t0, 1e-4, block)
	}
	env := dec.Envelope()
	fig, err := chart.PowerOverTime([]chart.Trace{{
		Name:   "JMF667H 128 GB",
		Power:  env,
		IO:     []chart.Interval{{Start: 2, End: 3}},
		States: []chart.StateSpan{{Start: 0, End: 2, State: "idle"}, {Start: 2, End: 3, State: "active"}, {Start: 3, End: 10, State: "idle"}},
		Notes:  []chart.Annotation{{T: 6, Text: "DEVSLP asserted"}},
	}}, chart.PowerOpts{Title: "Power over time"})
	if err != nil {
		panic(err)
	}
	dir, _ := os.MkdirTemp("", "chart")
	defer os.RemoveAll(dir)
	if err := fig.Save(filepath.Join(dir, "power.svg")); err != nil {
		panic(err)
	}
	fmt.Printf("%d rows, %.1f W peak at %.2f s\n", env.Len(), env.Max[120], env.T[120])
	// Output: 500 rows, 2.0 W peak at 2.41 s
}
