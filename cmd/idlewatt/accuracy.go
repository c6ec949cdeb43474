package main

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/spf13/cobra"

	"github.com/idlewatt/idlewatt/app/accuracy"
	"github.com/idlewatt/idlewatt/internal/outfile"
	"github.com/idlewatt/idlewatt/internal/textsafe"
)

func init() {
	register(func() *cobra.Command {
		c := &cobra.Command{
			Use:   "accuracy [--drives N] [--seed S] [--out DIR] [--parallel P] [--replay SEED:INDEX] [--max-cycles N] [--rescore DIR]",
			Short: "Truth-recovery campaign: random simulated drives through the whole chain, every metric against the model's truth",
			Long: `Draws N random drive profiles from the documented parameter space
(docs/drive-profiles.md, "Parameter space"), each with a meter noise family,
runs them four to an emulated hub on a pseudo-terminal through the whole
chain (capture, analysis, DevSlp verification) — blind: the analysis never
sees a profile — compares every reported metric with the drive models' truth
and tabulates the errors against the goals, overall and per noise family
(docs/analysis.md, "Truth-recovery campaign"). Writes accuracy.json, accuracy.md and each hub's run (runs/) into
--out. (seed, drive index) replays a drive exactly: --replay SEED:INDEX.
--rescore DIR analyses the captures of the campaign in DIR again with this
build and scores them against DIR's truth (same drives, same samples: an
analysis change judged without a new campaign's spread); --out gets
accuracy.json, accuracy.md and runs/HUB/report.json.
Exit 0 when every goal is met, 1 when one is missed, 2 on bad input or when
the campaign cannot start.`,
			Args: cobra.NoArgs,
			RunE: runAccuracy,
		}
		f := c.Flags()
		f.Int("drives", 200, "drives to draw")
		f.Uint64("seed", 1, "campaign seed")
		f.String("out", "", "output directory (default idlewatt-accuracy-<time>)")
		f.Int("parallel", 1, "hubs measured at once")
		f.StringSlice("replay", nil, "rerun only these drives, each SEED:INDEX (repeatable; all must share one seed)")
		f.Bool("short", false, "short phases (the CI campaign's; a short run is not expected to meet the goals)")
		f.Int("max-cycles", 0, "DevSlp cycles at most per drive while its entry is not resolved to 0.5 ms (default 192; --short: 2)")
		f.Bool("json", false, "print accuracy.json instead of the table")
		f.Bool("overwrite", false, "replace the campaign files in an existing --out")
		f.Bool("quiet", false, "no progress lines")
		f.String("rescore", "", "score the captures of the campaign in this directory again with this build's analysis (no new runs)")
		return c
	})
}

func runAccuracy(cmd *cobra.Command, _ []string) error {
	if from := optString(cmd, "rescore", ""); from != "" {
		return runRescore(cmd, from)
	}
	n, err := optInt(cmd, "drives", "")
	if err != nil {
		return err
	}
	if n < 1 || n > 100000 {
		return usageErr("%s: %d drives, want 1–100000", where(cmd, "drives", ""), n)
	}
	par, err := optInt(cmd, "parallel", "")
	if err != nil {
		return err
	}
	if par < 1 || par > 64 {
		return usageErr("%s: %d, want 1–64", where(cmd, "parallel", ""), par)
	}
	seedS := optString(cmd, "seed", "")
	var seed uint64
	if _, err := fmt.Sscan(seedS, &seed); err != nil || strings.HasPrefix(strings.TrimSpace(seedS), "-") {
		return usageErr("%s: %q is not a non-negative integer", where(cmd, "seed", ""), seedS)
	}
	o := accuracy.Options{Drives: n, Seed: seed, Parallel: par}
	replays, _ := cmd.Flags().GetStringSlice("replay")
	for i, r := range replays {
		s, idx, err := accuracy.ParseReplay(r)
		if err != nil {
			return usageErr("--replay: %v", err)
		}
		if i > 0 && s != o.Seed {
			return usageErr("--replay %s: every replayed drive must share one seed (%d)", r, o.Seed)
		}
		o.Seed = s
		o.Replay = append(o.Replay, idx)
	}
	o.Phases = accuracy.DefaultPhases()
	if b, _ := cmd.Flags().GetBool("short"); b {
		o.Phases = accuracy.ShortPhases()
	}
	if cmd.Flags().Changed("max-cycles") {
		mc, err := optInt(cmd, "max-cycles", "")
		if err != nil {
			return err
		}
		if mc < o.Phases.Cycles || mc > 1000 {
			return usageErr("%s: %d, want %d (the cycles planned) to 1000", where(cmd, "max-cycles", ""), mc, o.Phases.Cycles)
		}
		o.Phases.MaxCycles = mc
	}
	o.Out = optString(cmd, "out", "")
	o.Overwrite, _ = cmd.Flags().GetBool("overwrite")
	if o.Out == "" {
		o.Out = defaultOut("accuracy")
	}
	overwrite := o.Overwrite
	if err := accuracy.CheckOut(o.Out, overwrite); err != nil {
		return usageErr("--out: %v", err)
	}
	if err := outfile.Dir(o.Out); err != nil {
		return usageErr("--out: %v", err)
	}
	if !optBool(cmd, "quiet", "") {
		o.Progress = cmd.ErrOrStderr()
		what := fmt.Sprintf("%d drives (seed %d)", n, o.Seed)
		if len(o.Replay) > 0 {
			what = fmt.Sprintf("replay of %s", strings.Join(replays, ", "))
		}
		fmt.Fprintf(cmd.ErrOrStderr(), "accuracy: %s, %d hub(s) at once, output in %s\n", what, par, textsafe.Terminal(o.Out))
	}
	c, err := accuracy.Run(cmd.Context(), o)
	if errors.Is(err, accuracy.ErrCannotStart) {
		return usageErr("%v", err)
	}
	if c == nil {
		if err != nil && strings.HasPrefix(err.Error(), "internal error") {
			return &codedError{code: exitInternal, err: err}
		}
		return failErr("%v", err)
	}
	command := "idlewatt " + strings.Join(os.Args[1:], " ")
	if werr := c.WriteFiles(o.Out, command, overwrite); werr != nil {
		return failErr("%v", werr)
	}
	printCampaign(cmd, c, o.Out)
	if err != nil {
		return failErr("%v; the %d drive(s) measured before it are in %s", err, c.Drives, o.Out)
	}
	if !c.GoalsMet {
		return failErr("accuracy goals missed: %s", strings.Join(c.Missed, "; "))
	}
	return nil
}

// printCampaign prints c's table (or accuracy.json with --json).
func printCampaign(cmd *cobra.Command, c *accuracy.Campaign, out string) {
	w := cmd.OutOrStdout()
	if optBool(cmd, "json", "") {
		enc := json.NewEncoder(w)
		enc.SetIndent("", "  ")
		_ = enc.Encode(c)
		return
	}
	c.Table(w)
	fmt.Fprintf(w, "written to %s (accuracy.md, accuracy.json, runs/)\n", textsafe.Terminal(out))
}

// runRescore is accuracy --rescore FROM.
func runRescore(cmd *cobra.Command, from string) error {
	for _, f := range []string{"drives", "seed", "replay", "short", "max-cycles"} {
		if cmd.Flags().Changed(f) {
			return usageErr("--rescore: --%s does not apply (the campaign in %s says which drives and phases)", f, from)
		}
	}
	if _, err := os.Stat(filepath.Join(from, "accuracy.json")); err != nil {
		return usageErr("--rescore %s: not a campaign's directory: %v", from, err)
	}
	par, err := optInt(cmd, "parallel", "")
	if err != nil {
		return err
	}
	if par < 1 || par > 64 {
		return usageErr("%s: %d, want 1–64", where(cmd, "parallel", ""), par)
	}
	o := accuracy.RescoreOptions{From: from, Out: optString(cmd, "out", ""), Parallel: par}
	o.Overwrite, _ = cmd.Flags().GetBool("overwrite")
	if o.Out == "" {
		o.Out = defaultOut("accuracy")
	}
	if a, b := filepath.Clean(o.Out), filepath.Clean(from); a == b {
		return usageErr("--out %s: the campaign rescored is there; name another directory", o.Out)
	}
	if err := accuracy.CheckOut(o.Out, o.Overwrite); err != nil {
		return usageErr("--out: %v", err)
	}
	if err := outfile.Dir(o.Out); err != nil {
		return usageErr("--out: %v", err)
	}
	if !optBool(cmd, "quiet", "") {
		o.Progress = cmd.ErrOrStderr()
	}
	c, err := accuracy.Rescore(cmd.Context(), o)
	if err != nil {
		return failErr("rescore of %s: %v", textsafe.Terminal(from), err)
	}
	command := "idlewatt " + strings.Join(os.Args[1:], " ")
	if err := c.WriteFiles(o.Out, command, o.Overwrite); err != nil {
		return failErr("%v", err)
	}
	printCampaign(cmd, c, o.Out)
	if !c.GoalsMet {
		return failErr("accuracy goals missed: %s", strings.Join(c.Missed, "; "))
	}
	return nil
}
