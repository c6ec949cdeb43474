package analysis_test

import (
	"fmt"
	"log"

	"github.com/idlewatt/idlewatt/analysis"
)

// Analyze a capture: two streaming passes over the file give one report, the
// numbers every output (terminal, report.json, report.md, summary.csv,
// charts) shows. Each figure with a 95 % interval has its u95 beside it;
// FormatPM prints the pair the way report.md does.
func Example() {
	r, err := analysis.Analyze("../fixtures/hostile/six-seconds.iwcap", analysis.DefaultOptions())
	if err != nil {
		log.Fatal(err)
	}
	fmt.Printf("%s, %d channels at %g samples/s, complete %v\n", r.Capture.MeterKind, r.Capture.Channels, r.Capture.RateHz, r.Capture.Complete)
	for _, d := range r.Drives {
		fmt.Printf("port %d %q: %.3f s, %d samples\n", d.Port, d.Name, d.DurationS, d.Samples.Count)
		fmt.Printf("  active idle %s W, average %s W, peak %s W, energy %s J\n",
			analysis.FormatPM(d.ActiveIdleW, d.ActiveIdleU95W, 4), analysis.FormatPM(d.AverageW, d.AverageU95W, 4),
			analysis.FormatV(d.PeakW, 4), analysis.FormatPM(d.EnergyJ, d.EnergyU95J, 3))
		fmt.Printf("  residency active %.3f, idle %.3f\n", d.Residency.Active, d.Residency.Idle)
	}
	// Output:
	// hub, 2 channels at 100 samples/s, complete true
	// port 1 "port 1": 6.000 s, 600 samples
	//   active idle 0.39992 ± 0.00070 W, average 0.39992 ± 0.00070 W, peak 0.3999 W, energy 2.3995 ± 0.0042 J
	//   residency active 0.000, idle 1.000
}
