package pslevel

import (
	"fmt"
	"math"
	"sort"

	"github.com/idlewatt/idlewatt/states/detect"
	"github.com/idlewatt/idlewatt/units"
)

// Level is one NVMe power state's steady idle draw as state detection
// uses it, with the latencies its descriptor declares.
type Level struct {
	PS             int         `json:"ps"`
	W              units.Watts `json:"power_w"`
	NonOperational bool        `json:"non_operational"`
	EntryLatencyUs uint32      `json:"entry_lat_us"`
	ExitLatencyUs  uint32      `json:"exit_lat_us"`
	// Source is "table" (the descriptor's maximum power, or the given
	// operational idle power) or "learned" (a level of the capture).
	Source string `json:"source"`
}

// Sort orders levels highest first, keeping the order of equal ones.
func Sort(l []Level) {
	sort.SliceStable(l, func(a, b int) bool { return l[a].W > l[b].W })
}

// Learn learns a drive's levels from the idle samples of a capture
// (powers with no I/O in flight): the stable levels of their histogram
// (detect.LevelHistogram) are named from the table's levels, each table
// level taking the nearest learned level within a factor 3 (a drive
// draws less than a state's declared maximum, rarely a third of it). A
// table level with no learned level near it keeps its table power; a
// learned level no table level is near is reported in unnamed.
func Learn(table []Level, idle []units.Watts) (levels []Level, unnamed []units.Watts, err error) {
	var h detect.LevelHistogram
	for _, w := range idle {
		h.Add(w)
	}
	peaks, err := h.Peaks(0.02)
	if err != nil {
		return nil, nil, err
	}
	levels = append([]Level(nil), table...)
	Sort(levels)
	used := make([]bool, len(peaks))
	for i := range levels {
		best, bd := -1, math.Log(3)
		for j, p := range peaks {
			if d := math.Abs(math.Log(float64(p) / float64(levels[i].W))); !used[j] && d <= bd {
				best, bd = j, d
			}
		}
		if best >= 0 {
			used[best] = true
			levels[i].W, levels[i].Source = peaks[best], "learned"
		}
	}
	for j, p := range peaks {
		if !used[j] {
			unnamed = append(unnamed, p)
		}
	}
	// The table's order (highest first) must survive the learning.
	for i := 1; i < len(levels); i++ {
		if levels[i].W >= levels[i-1].W {
			return nil, nil, fmt.Errorf("nvme: learned levels of PS%d (%v) and PS%d (%v) are out of the table's order: the capture cannot tell them apart", levels[i-1].PS, levels[i-1].W, levels[i].PS, levels[i].W)
		}
	}
	return levels, unnamed, nil
}

// Classify returns the index in levels (highest first) of the level
// nearest w on a log scale, the thresholds at the geometric means of
// neighbours as states/detect places them; -1 without levels.
func Classify(levels []Level, w units.Watts) int {
	if len(levels) == 0 {
		return -1
	}
	for i := 0; i+1 < len(levels); i++ {
		if float64(w) > math.Sqrt(float64(levels[i].W)*float64(levels[i+1].W)) {
			return i
		}
	}
	return len(levels) - 1
}

// Ceiling is the threshold above which a power no longer counts as
// level i: the geometric mean with the next higher level (+Inf for the
// highest).
func Ceiling(levels []Level, i int) units.Watts {
	if i <= 0 {
		return units.Watts(math.Inf(1))
	}
	return units.Watts(math.Sqrt(float64(levels[i].W) * float64(levels[i-1].W)))
}

// Of returns the index of power state ps among levels, -1 if absent.
func Of(levels []Level, ps int) int {
	for i, l := range levels {
		if l.PS == ps {
			return i
		}
	}
	return -1
}
