// Command gencap writes a synthetic review-like capture (synthcap.Review)
// for scripts/report-scale.sh and manual testing.
package main

import (
	"flag"
	"fmt"
	"os"

	"github.com/idlewatt/idlewatt/analysis/synthcap"
)

func main() {
	out := flag.String("out", "synthetic.iwc", "capture file to write")
	dur := flag.Duration("duration", 0, "length of the capture (e.g. 5m, 1h)")
	rate := flag.Float64("rate", 10000, "samples per second per channel")
	drift := flag.Float64("drift-ppm", 0, "meter clock drift")
	flag.Parse()
	if *dur <= 0 || *rate <= 0 {
		fmt.Fprintln(os.Stderr, "gencap: -duration and -rate must be positive")
		os.Exit(2)
	}
	if err := synthcap.Write(*out, synthcap.Review(*dur, *rate, *drift)); err != nil {
		fmt.Fprintln(os.Stderr, "gencap:", err)
		os.Exit(1)
	}
}
