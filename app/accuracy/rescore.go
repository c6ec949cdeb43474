package accuracy

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sort"
	"sync"
	"time"

	"github.com/idlewatt/idlewatt/analysis"
	"github.com/idlewatt/idlewatt/app/rig"
	"github.com/idlewatt/idlewatt/internal/outfile"
	"github.com/idlewatt/idlewatt/report"
)

// RescoreOptions says where a rescore reads and writes.
type RescoreOptions struct {
	From      string // a campaign's directory: accuracy.json and runs/
	Out       string // where accuracy.json, accuracy.md and runs/ go
	Parallel  int    // captures analysed at once; default 1
	Overwrite bool
	Progress  io.Writer
}

// Rescore analyses a finished campaign's captures again with this build's
// analysis and scores them against the truth that campaign computed: the
// same drives, sample for sample the same captures, so a change of the
// analysis is judged without the run-to-run spread of a new campaign. Each
// hub run's capture (From/runs/HUB/capture.iwcap) is analysed as a run
// analyses it and its report.json written to Out/runs/HUB beside a copy of
// the run's measure.json (the live DevSlp verdicts, kept for the record:
// the verdict scored is this build's, report.json's); truth and case are
// the campaign's (accuracy.json).
func Rescore(ctx context.Context, o RescoreOptions) (*Campaign, error) {
	b, err := os.ReadFile(filepath.Join(o.From, "accuracy.json"))
	if err != nil {
		return nil, err
	}
	var src Campaign
	if err := json.Unmarshal(b, &src); err != nil {
		return nil, fmt.Errorf("%s: %w", filepath.Join(o.From, "accuracy.json"), err)
	}
	if src.Schema != Schema {
		return nil, fmt.Errorf("%s: schema %q, want %q", filepath.Join(o.From, "accuracy.json"), src.Schema, Schema)
	}
	hubs := map[string][]int{}
	for i, r := range src.Results {
		hubs[filepath.Base(r.Dir)] = append(hubs[filepath.Base(r.Dir)], i)
	}
	names := make([]string, 0, len(hubs))
	for h := range hubs {
		names = append(names, h)
	}
	sort.Strings(names)
	start := time.Now()
	rs := make([]DriveResult, len(src.Results))
	copy(rs, src.Results)
	jobs := make(chan string)
	var wg sync.WaitGroup
	var mu sync.Mutex
	done := 0
	for range max(1, o.Parallel) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for h := range jobs {
				dir := filepath.Join(o.Out, "runs", h)
				err := reanalyse(filepath.Join(o.From, "runs", h), dir, o.Overwrite)
				mu.Lock()
				for _, i := range hubs[h] {
					rescored(&rs[i], dir, err)
				}
				done++
				if o.Progress != nil {
					fmt.Fprintf(o.Progress, "rescore: %d/%d %s, %s\n", done, len(names), h, time.Since(start).Round(time.Second))
				}
				mu.Unlock()
			}
		}()
	}
	for _, h := range names {
		if ctx.Err() != nil {
			break
		}
		jobs <- h
	}
	close(jobs)
	wg.Wait()
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	opts := Options{Seed: src.Seed, Replay: src.Replay, Phases: src.Phases}
	return summariseCampaign(opts, rs, time.Since(start)), nil
}

// reanalyse writes the report.json of the capture in from into dir, with a
// copy of from's measure.json.
func reanalyse(from, dir string, overwrite bool) error {
	oo := outfile.Options{Overwrite: overwrite}
	if err := outfile.Dir(dir); err != nil {
		return err
	}
	meas, err := os.ReadFile(filepath.Join(from, report.FileMeasure))
	if err != nil {
		return err
	}
	opts := analysis.DefaultOptions()
	opts.States = &analysis.StateOptions{}
	rep, err := analysis.Analyze(filepath.Join(from, rig.CaptureFile), opts)
	if err != nil {
		return fmt.Errorf("analysis: %w", err)
	}
	if err := report.WriteJSONFile(filepath.Join(dir, "report.json"), rep, oo); err != nil {
		return err
	}
	return outfile.WriteFile(filepath.Join(dir, report.FileMeasure), meas, oo)
}

// rescored scores r again from the outputs in dir.
func rescored(r *DriveResult, dir string, err error) {
	r.Dir = dir
	if r.Truth == nil {
		return // the campaign's run failed on it: it stays failed
	}
	var m Measured
	if err == nil {
		m, err = Extract(dir, r.Case.Port)
	}
	if err != nil {
		r.Error = fmt.Sprintf("rescore: %v", err)
		r.Measured, r.Checks, r.Breaks = nil, nil, nil
		return
	}
	// The verdict is this build's: report.json's, not the run's live one
	// that measure.json keeps (the same analysis gives both, so a rescore
	// that kept measure.json's scored the capture build's verdicts, not
	// the build it judges). The reason then is the report's too.
	if m.reportVerdict != "" && m.reportVerdict != m.Verdict {
		m.Verdict, m.VerdictReason = m.reportVerdict, m.reportReason
	}
	r.Measured = &m
	r.Checks = compare(r.Truth, &m)
	r.Verdict = verdictOutcome(r.Truth.Verdict, m.Verdict)
	r.Breaks = breaksOf(r.Checks, r.Verdict)
}
