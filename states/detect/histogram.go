package detect

import (
	"fmt"
	"math"
	"sort"

	"github.com/idlewatt/idlewatt/units"
)

// LevelHistogram learns levels without supervision: feed it the power of
// samples taken with no I/O in flight, then call Levels.
type LevelHistogram struct {
	bins  []float64 // sample counts per log-power bin
	total float64
}

// Log-spaced bins from 0.1 mW to 30 W, 2 % wide: fine enough to separate
// levels a factor 1.3 apart, coarse enough to smooth noise.
const (
	histMin   = 1e-4
	histMax   = 30.0
	histRatio = 1.02
)

var histBins = int(math.Ceil(math.Log(histMax/histMin) / math.Log(histRatio)))

// histEdges[i] is the lower edge of bin i; a binary search over them costs
// less than a logarithm per sample.
var histEdges = func() []float64 {
	e := make([]float64, histBins)
	for i := range e {
		e[i] = histMin * math.Pow(histRatio, float64(i))
	}
	return e
}()

// Add counts one idle sample's (smoothed) power.
func (h *LevelHistogram) Add(p units.Watts) {
	w := float64(p)
	if h.bins == nil {
		h.bins = make([]float64, histBins)
	}
	if !(w > histMin) { // also catches NaN
		w = histMin
	}
	i := sort.SearchFloat64s(histEdges, w) - 1 // the last edge ≤ w
	if i < 0 {
		i = 0
	}
	h.bins[i]++
	h.total++
}

func binCenter(i int) float64 { return histMin * math.Pow(histRatio, float64(i)+0.5) }

// Levels finds the peaks of the histogram that hold at least minShare of the
// idle samples and names them from the top: the highest is idle; a peak under
// 10 mW is devslp; the next peaks down are slumber (lowest remaining) and
// partial. With fewer peaks, the states the drive evidently lacks stay zero.
func (h *LevelHistogram) Levels(minShare float64) (Levels, error) {
	ws, err := h.Peaks(minShare)
	if err != nil {
		return Levels{}, err
	}
	type peak struct{ w float64 }
	merged := make([]peak, len(ws))
	for i, w := range ws {
		merged[i] = peak{float64(w)}
	}
	var l Levels
	rest := merged
	if merged[0].w >= 0.010 {
		// The highest level is idle — unless even it is a few mW: then the
		// drive sat in DevSlp throughout and its idle level is unknown.
		l.Idle = units.Watts(merged[0].w)
		rest = merged[1:]
	}
	if n := len(rest); n > 0 && rest[n-1].w < 0.010 {
		l.DevSlp = units.Watts(rest[n-1].w)
		rest = rest[:n-1]
	}
	switch len(rest) {
	case 0:
	case 1:
		l.Slumber = units.Watts(rest[0].w)
	default:
		l.Partial = units.Watts(rest[0].w)
		l.Slumber = units.Watts(rest[len(rest)-1].w)
	}
	return l, nil
}

// Peaks returns the histogram's stable levels, highest first: the peaks
// that hold at least minShare of the idle samples, those closer than a
// factor 1.3 merged (one level blurred by noise). Levels names them as
// SATA states; an NVMe drive's are named from its power-state table
// (states/nvme.LearnLevels).
func (h *LevelHistogram) Peaks(minShare float64) ([]units.Watts, error) {
	if h.total == 0 {
		return nil, fmt.Errorf("detect: no idle samples to learn levels from")
	}
	// Smooth counts over ±3 bins (≈ ±6 %) so a noisy level forms one peak.
	sm := make([]float64, len(h.bins))
	for i := range h.bins {
		for j := i - 3; j <= i+3; j++ {
			if j >= 0 && j < len(h.bins) {
				sm[i] += h.bins[j]
			}
		}
	}
	type peak struct {
		w    float64
		mass float64
	}
	var peaks []peak
	for i := range sm {
		if sm[i] == 0 || (i > 0 && sm[i-1] > sm[i]) || (i+1 < len(sm) && sm[i+1] >= sm[i]) {
			continue
		}
		// Mass: the valley-to-valley area around the peak.
		lo, hi := i, i
		for lo > 0 && sm[lo-1] <= sm[lo] && sm[lo-1] > 0 {
			lo--
		}
		for hi+1 < len(sm) && sm[hi+1] <= sm[hi] && sm[hi+1] > 0 {
			hi++
		}
		var mass, wsum float64
		for j := lo; j <= hi; j++ {
			mass += h.bins[j]
			wsum += h.bins[j] * binCenter(j)
		}
		if mass/h.total >= minShare {
			peaks = append(peaks, peak{w: wsum / mass, mass: mass})
		}
	}
	if len(peaks) == 0 {
		return nil, fmt.Errorf("detect: no stable power level among %d idle samples", int(h.total))
	}
	sort.Slice(peaks, func(a, b int) bool { return peaks[a].w > peaks[b].w })
	// Merge peaks closer than a factor 1.3: one level blurred by noise.
	merged := peaks[:1]
	for _, p := range peaks[1:] {
		last := &merged[len(merged)-1]
		if last.w/p.w < 1.3 {
			tot := last.mass + p.mass
			last.w = (last.w*last.mass + p.w*p.mass) / tot
			last.mass = tot
			continue
		}
		merged = append(merged, p)
	}
	out := make([]units.Watts, len(merged))
	for i, p := range merged {
		out[i] = units.Watts(p.w)
	}
	return out, nil
}
