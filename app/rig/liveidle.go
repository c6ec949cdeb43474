package rig

import (
	"context"
	"fmt"
	"math"
	"sort"
	"strings"
	"time"

	"github.com/idlewatt/idlewatt/analysis"
	"github.com/idlewatt/idlewatt/capture"
	"github.com/idlewatt/idlewatt/hostclock"
)

// DefaultActiveIdleU95Pct is active_idle_u95_pct's default: an active idle
// known to ±0.5 % (95 %) is within a ±1 % goal with room for the report's
// own interval, which it computes afresh over all the run's quiet time.
const DefaultActiveIdleU95Pct = 0.5

// activeIdleStep is how much longer the active-idle phase runs each time
// some drive's live estimate is not yet resolved.
const activeIdleStep = 500 * time.Millisecond

// NoteActiveIdle is the capture note that says why the active-idle phase
// stopped after more than active_idle ("active-idle 3.5s: …").
const NoteActiveIdle = "active-idle "

// extendActiveIdle runs the active-idle phase on after d, in steps of
// activeIdleStep up to active_idle_max, while some drive's live active idle
// (analysis.QuietLevel over the phase's samples, median-centred) has a 95 % half-width wider than liveMargin × active_idle_u95_pct of
// its level. Why it stopped, when it ran on, is a capture note and a run
// note.
func (r *Rig) extendActiveIdle(ctx context.Context, d time.Duration) error {
	limit := r.cfg.ActiveIdleMax
	if r.live == nil || limit <= d {
		return nil
	}
	want := r.cfg.ActiveIdleU95Pct
	if want == 0 {
		want = DefaultActiveIdleU95Pct
	}
	for ran := d; ; {
		open, status := r.activeIdleOpen(want)
		stop := ""
		switch {
		case len(open) == 0 && ran > d:
			stop = fmt.Sprintf("%v: every drive's active idle resolved to ±%.2g %% (%s)", ran, want, status)
		case len(open) == 0:
			return nil
		case ran >= limit:
			stop = fmt.Sprintf("%v: not resolved to ±%.2g %% in active_idle_max: %s (%s)", ran, want, strings.Join(open, ", "), status)
		}
		if stop != "" {
			r.state(capture.StateEvent{Host: hostclock.Now(), Port: 0, Kind: capture.StateNote, Value: NoteActiveIdle + stop})
			r.note("active-idle phase %s", stop)
			return nil
		}
		step := min(activeIdleStep, limit-ran)
		if err := r.wait(ctx, step); err != nil {
			return err
		}
		ran += step
	}
}

// activeIdleOpen lists the drives whose live active idle is not resolved
// to want % (a drive with no estimate yet counts as unresolved), and a
// status line of every drive's estimate.
func (r *Rig) activeIdleOpen(want float64) (open []string, status string) {
	var parts []string
	drives := append([]*Drive(nil), r.drives...)
	sort.Slice(drives, func(a, b int) bool { return drives[a].Config.Port < drives[b].Config.Port })
	for _, d := range drives {
		port := d.Config.Port
		// Median-centred: the phase runs under max_performance, so its quiet
		// samples are active idle, and the drive's profile (a simulator's
		// answer key) is not for an estimator to read.
		ps, rate := r.live.power(port)
		w, u, ok := analysis.QuietLevel(ps, rate, 0, 0)
		switch {
		case !ok || w <= 0:
			open = append(open, fmt.Sprintf("port %d", port))
			parts = append(parts, fmt.Sprintf("port %d: no estimate", port))
		default:
			pct := 100 * float64(u) / float64(w)
			if pct > liveMargin*want || math.IsNaN(pct) {
				open = append(open, fmt.Sprintf("port %d", port))
			}
			parts = append(parts, fmt.Sprintf("port %d: %.4g W ± %.2g %%", port, float64(w), pct))
		}
	}
	return open, strings.Join(parts, "; ")
}
