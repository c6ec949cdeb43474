package analysis

import (
	"math"

	"github.com/idlewatt/idlewatt/analysis/series"
)

// distBins is the number of bins of the power histogram and CDF charts.
const distBins = 300

// distributions turns each drive's power histogram into the chart's
// histogram, over one range for all drives so they compare bin by bin:
// from the lowest to the highest non-empty bin of any drive, logarithmic
// when that spans more than a decade (a drive in DevSlp sits at mW, active
// at W). Each log-binned count goes in at the middle of its values; values that read
// as 0 W go in as underflow. The charts cost nothing per sample. Nil when no
// drive has a sample above 0 W.
func distributions(names []string, hs []*Histogram) []series.Distribution {
	lo, hi := math.Inf(1), math.Inf(-1)
	for _, h := range hs {
		for i, c := range h.bins {
			if c == 0 {
				continue
			}
			l, w := binLow(i)
			lo, hi = math.Min(lo, l), math.Max(hi, l+w)
		}
		if h.over > 0 {
			hi = math.Max(hi, h.maxV)
		}
	}
	if !(lo < hi) {
		return nil
	}
	log := hi/lo > 10
	var out []series.Distribution
	for k, h := range hs {
		ch, err := series.NewHist(lo, hi, distBins, log)
		if err != nil {
			return nil
		}
		for i, c := range h.bins {
			if c > 0 {
				ch.AddN(h.binMid(i), float64(c))
			}
		}
		if h.under > 0 {
			ch.AddN(lo/2, float64(h.under))
		}
		if h.over > 0 {
			ch.AddN(h.maxV, float64(h.over))
		}
		out = append(out, series.Distribution{Name: names[k], Hist: ch})
	}
	return out
}
