package main

import (
	"errors"
	"io"
	"os"
	"strings"

	"github.com/spf13/cobra"

	"github.com/idlewatt/idlewatt/app/accuracy"
	"github.com/idlewatt/idlewatt/internal/textsafe"
)

func init() {
	register(func() *cobra.Command {
		c := &cobra.Command{
			Use:   "accuracy [--drives N] [--seed S] [--out DIR] [--parallel P] [--replay SEED:INDEX] [--max-cycles N] [--rescore DIR] [--pool DIR,DIR…]",
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
--pool DIR,DIR… tabulates scored campaigns (or rescores) of different seeds
as one: overall, per noise family over every seed, and per campaign.
Exit 0 when every goal is met, 1 when one is missed, 2 on bad input or when
the campaign cannot start.`,
			Args: cobra.NoArgs,
			RunE: runAccuracy,
		}
		declare(c.Flags(), accuracy.Flags...)
		return c
	})
}

func runAccuracy(cmd *cobra.Command, _ []string) error {
	var progress io.Writer
	if !get(cmd).Bool("quiet") {
		progress = cmd.ErrOrStderr()
	}
	command := "idlewatt " + strings.Join(os.Args[1:], " ")
	if from := get(cmd).List("pool"); len(from) > 0 {
		o, err := accuracy.ReadPool(get(cmd), from, defaultOut("accuracy"))
		if err != nil {
			return err
		}
		c, err := accuracy.Pool(o)
		if err != nil {
			return usageErr("%v", err)
		}
		if err := c.WriteFiles(o.Out, command, o.Overwrite); err != nil {
			return failErr("%v", err)
		}
		return campaignDone(cmd, c, o.Out, nil)
	}
	if from := get(cmd).String("rescore"); from != "" {
		o, err := accuracy.ReadRescore(get(cmd), from, defaultOut("accuracy"), progress)
		if err != nil {
			return err
		}
		c, err := accuracy.Rescore(cmd.Context(), o)
		if err != nil {
			return failErr("rescore of %s: %v", textsafe.Terminal(from), err)
		}
		if err := c.WriteFiles(o.Out, command, o.Overwrite); err != nil {
			return failErr("%v", err)
		}
		return campaignDone(cmd, c, o.Out, nil)
	}
	o, err := accuracy.ReadOptions(get(cmd), defaultOut("accuracy"), progress)
	if err != nil {
		return err
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
	if werr := c.WriteFiles(o.Out, command, o.Overwrite); werr != nil {
		return failErr("%v", werr)
	}
	return campaignDone(cmd, c, o.Out, err)
}

// campaignDone prints c and says how it ended: runErr cut it short, or a
// goal was missed.
func campaignDone(cmd *cobra.Command, c *accuracy.Campaign, out string, runErr error) error {
	c.Print(cmd.OutOrStdout(), out, get(cmd).Bool("json"))
	if runErr != nil {
		return failErr("%v; the %d drive(s) measured before it are in %s", runErr, c.Drives, out)
	}
	if !c.GoalsMet {
		return failErr("accuracy goals missed: %s", strings.Join(c.Missed, "; "))
	}
	return nil
}
