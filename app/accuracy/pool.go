package accuracy

import (
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"time"
)

// PoolSource is one campaign a pooled table was made from.
type PoolSource struct {
	Dir      string          `json:"dir"`
	Seed     uint64          `json:"seed"`
	Drives   int             `json:"drives"`
	Coverage CoverageSummary `json:"coverage"`
	Verdicts VerdictSummary  `json:"verdicts"`
	GoalsMet bool            `json:"goals_met"`
}

// PoolOptions says which scored campaigns a pool reads and where it writes.
type PoolOptions struct {
	From      []string // campaign (or rescore) directories, each with accuracy.json
	Out       string
	Overwrite bool
}

// Pool scores several finished campaigns as one: their drives' checks, as
// each campaign (or its rescore) scored them, tabulated together — overall,
// per noise family over every seed, and per campaign — so the goals set
// for "≥ 200 drives × 3 seeds" are judged on 600 drives and each family on
// 75 rather than 25 (docs/analysis.md, "Pooled seeds"). It analyses
// nothing: rescore each campaign with the build to be judged first. Two
// campaigns of one seed would count drives twice and are refused.
func Pool(o PoolOptions) (*Campaign, error) {
	if len(o.From) < 2 {
		return nil, fmt.Errorf("--pool: %d campaign(s), want 2 or more", len(o.From))
	}
	var rs []DriveResult
	var srcs []PoolSource
	var first *Campaign
	var elapsed float64
	seeds := map[uint64]string{}
	for _, dir := range o.From {
		path := filepath.Join(dir, "accuracy.json")
		b, err := os.ReadFile(path)
		if err != nil {
			return nil, err
		}
		var c Campaign
		if err := json.Unmarshal(b, &c); err != nil {
			return nil, fmt.Errorf("%s: %w", path, err)
		}
		if c.Schema != Schema {
			return nil, fmt.Errorf("%s: schema %q, want %q", path, c.Schema, Schema)
		}
		if len(c.Pooled) > 0 {
			return nil, fmt.Errorf("%s: a pooled table already; pool the campaigns it was made from", path)
		}
		if prev, ok := seeds[c.Seed]; ok {
			return nil, fmt.Errorf("%s: seed %d again (also %s): its drives would count twice", path, c.Seed, prev)
		}
		seeds[c.Seed] = path
		if len(c.Results) == 0 {
			return nil, fmt.Errorf("%s: no drives", path)
		}
		if first == nil {
			first = &c
		} else if c.Phases != first.Phases {
			return nil, fmt.Errorf("%s: phases %+v differ from %s's %+v: not one campaign's design", path, c.Phases, o.From[0], first.Phases)
		}
		elapsed += c.ElapsedS
		rs = append(rs, c.Results...)
		srcs = append(srcs, PoolSource{Dir: dir, Seed: c.Seed, Drives: len(c.Results), Coverage: c.Coverage, Verdicts: c.Verdicts, GoalsMet: c.GoalsMet})
	}
	c := summariseCampaign(Options{Phases: first.Phases}, rs, time.Duration(elapsed*float64(time.Second)))
	c.Pooled = srcs
	return c, nil
}

// poolMarkdown lists the campaigns a pooled table holds.
func (c *Campaign) poolMarkdown(w io.Writer) {
	if len(c.Pooled) == 0 {
		return
	}
	var seeds []string
	for _, s := range c.Pooled {
		seeds = append(seeds, fmt.Sprint(s.Seed))
	}
	fmt.Fprintf(w, "Pooled: seeds %s (%d drives). Per campaign:\n\n", strings.Join(seeds, ", "), c.Drives)
	fmt.Fprintf(w, "| seed | drives | 95 %% intervals hold | false PASS | false FAIL | inconclusive | goals met | from |\n|---|---|---|---|---|---|---|---|\n")
	for _, s := range c.Pooled {
		fmt.Fprintf(w, "| %d | %d | %s | %d | %d | %d | %s | `%s` |\n", s.Seed, s.Drives, coverageText(s.Coverage), s.Verdicts.FalsePass, s.Verdicts.FalseFail, s.Verdicts.Inconclusive, yes(s.GoalsMet), s.Dir)
	}
	fmt.Fprintln(w)
}
