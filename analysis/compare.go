package analysis

import (
	"fmt"
	"math"
	"sort"
	"strings"
)

// CompareNotes says what makes the runs' averages and energies not
// comparable as they stand: different workloads (their "workload:" phases)
// or measured durations more than 10 % apart. Empty for one run.
func CompareNotes(reports []*Report, labels []string) []string {
	if len(reports) < 2 {
		return nil
	}
	var notes []string
	wl := func(r *Report) string {
		seen := map[string]bool{}
		var w []string
		for _, d := range r.Drives {
			for _, ph := range d.Phases {
				if strings.HasPrefix(ph.Name, "workload:") && !seen[ph.Name] {
					seen[ph.Name] = true
					w = append(w, ph.Name)
				}
			}
		}
		sort.Strings(w)
		if len(w) == 0 {
			return "no workload"
		}
		return strings.Join(w, ", ")
	}
	first := wl(reports[0])
	for i, r := range reports[1:] {
		if w := wl(r); w != first {
			notes = append(notes, fmt.Sprintf("the runs played different workloads (%s: %s; %s: %s): their averages and energies compare different work, not only different drives", labels[0], first, labels[i+1], w))
			break
		}
	}
	lo, hi := math.Inf(1), math.Inf(-1)
	var loL, hiL string
	for i, r := range reports {
		for _, d := range r.Drives {
			if d.Samples.Count == 0 {
				continue
			}
			if dur := float64(d.DurationS); dur < lo {
				lo, loL = dur, labels[i]
			}
			if dur := float64(d.DurationS); dur > hi {
				hi, hiL = dur, labels[i]
			}
		}
	}
	if lo > 0 && hi > 1.1*lo {
		notes = append(notes, fmt.Sprintf("measured durations differ (%.1f s in %s, %.1f s in %s): energies scale with duration; compare averages", lo, loL, hi, hiL))
	}
	return notes
}

// MaxCompareW bounds a headline power compare accepts: the bound above
// which the analysis treats a sample as invalid (|V·I| > 1 MW), so no
// report idlewatt wrote from a capture can exceed it.
const MaxCompareW = 1e6

// maxCompareS bounds a measured duration compare accepts (about 32 years).
const maxCompareS = 1e9

// CheckCompareInput refuses a report whose headline values — the ones
// compare tables and charts — are impossible: ±Inf, negative, or beyond
// MaxCompareW (energy beyond MaxCompareW × duration_s), naming the key as
// drives[i].key. null (NaN, not measured) is accepted: compare shows it as
// —. A hand-edited or damaged report.json with active_idle_w −1e308 used
// to be charted without a note.
func CheckCompareInput(r *Report) error {
	for i, d := range r.Drives {
		dur := float64(d.DurationS)
		if math.IsNaN(dur) {
			dur = 0
		}
		for _, v := range []struct {
			key string
			val float64
			max float64
		}{
			{"duration_s", float64(d.DurationS), maxCompareS},
			{"active_idle_w", float64(d.ActiveIdleW), MaxCompareW},
			{"average_w", float64(d.AverageW), MaxCompareW},
			{"peak_w", float64(d.PeakW), MaxCompareW},
			{"peak_windows.1s_w", float64(d.PeakWindows.W1s), MaxCompareW},
			{"energy_j", float64(d.EnergyJ), MaxCompareW * math.Min(dur, maxCompareS)},
			{"devslp.power_w", float64(d.DevSlp.PowerW), MaxCompareW},
			{"active_idle_u95_w", deref(d.ActiveIdleU95W), MaxCompareW},
			{"average_u95_w", deref(d.AverageU95W), MaxCompareW},
			{"energy_u95_j", deref(d.EnergyU95J), MaxCompareW * math.Min(dur, maxCompareS)},
		} {
			x := v.val
			switch {
			case math.IsNaN(x): // null: not measured
			case math.IsInf(x, 0):
				return fmt.Errorf("drives[%d].%s (drive %q): %g is not a finite number", i, v.key, d.Name, x)
			case x < 0:
				return fmt.Errorf("drives[%d].%s (drive %q): %g is negative, not a drive's power, energy or duration; compare refuses it rather than chart it", i, v.key, d.Name, x)
			case x > v.max:
				return fmt.Errorf("drives[%d].%s (drive %q): %g is beyond any drive's (at most %g); compare refuses it rather than chart it", i, v.key, d.Name, x, v.max)
			}
		}
	}
	return nil
}

// deref is *u, or NaN (not measured) for nil.
func deref[Q ~float64](u *Q) float64 {
	if u == nil {
		return math.NaN()
	}
	return float64(*u)
}
