package main

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"

	"github.com/spf13/cobra"

	"github.com/idlewatt/idlewatt/capture"
)

func init() {
	register(func() *cobra.Command {
		c := &cobra.Command{
			Use:   "repair CAPTURE --out NEW",
			Short: "Write a clean capture of what a damaged capture still holds",
			Long: `Reads CAPTURE as report does — skipping damaged stretches, mending single
flipped bits, leaving out samples whose indices are already covered — and
writes NEW: every intact record, the holes as gaps with reason "damaged",
an end chunk, and host notes saying what was repaired. Bytes after the end
chunk are not copied. NEW must not exist (it is never CAPTURE, and never a
symbolic link); CAPTURE is only read.`,
			Args: cobra.ExactArgs(1),
			RunE: runRepair,
		}
		c.Flags().String("out", "", "the repaired capture to create (required; must not exist)")
		return c
	})
}

func runRepair(cmd *cobra.Command, args []string) error {
	in, out := args[0], optString(cmd, "out", "")
	if out == "" {
		return usageErr("repair: --out NEW is required")
	}
	if same, err := samePath(in, out); err == nil && same {
		return usageErr("repair: --out %s is the capture being repaired; choose a new file", out)
	}
	// What the summaries were computed over, so NEW's match.
	per, err := summaryPer(in)
	if err != nil {
		return inputErr(err)
	}
	r, err := capture.Open(in)
	if err != nil {
		return inputErr(err)
	}
	defer r.Close()
	h := r.Header()
	// capture.Create opens with O_CREATE|O_EXCL: it refuses an existing
	// file and a symbolic link in the last component, so the input (which
	// exists) can never be written.
	w, err := capture.Create(out, h, capture.Options{SummaryPer: per})
	if err != nil {
		if errors.Is(err, fs.ErrExist) {
			return usageErr("repair: %s exists; the repaired capture must be a new file", out)
		}
		return failErr("repair: %v", err)
	}
	fail := func(err error) error {
		w.Close()
		os.Remove(out) // created above with O_EXCL: ours
		return failErr("repair %s: %v", out, err)
	}
	res, err := capture.Salvage(w, r)
	if err != nil {
		return fail(err)
	}
	acc := r.Account()
	notes := acc.Notes()
	if res.End != nil {
		notes = append(notes, fmt.Sprintf("the input ends early: %v", res.End))
	}
	for _, n := range notes {
		if err := w.State(capture.StateEvent{Host: h.StartHost, Kind: capture.StateNote, Value: "repaired from " + filepath.Base(in) + ": " + n}); err != nil {
			return fail(err)
		}
	}
	if err := w.Close(); err != nil {
		return fail(err)
	}
	stderr := cmd.ErrOrStderr()
	if res.End != nil {
		fmt.Fprintf(stderr, "repair: %s: %v\n", in, res.End)
	}
	printAccount(stderr, "repair", &acc)
	held := res.Samples + acc.SamplesLost
	if u, ok := acc.Unaccounted(); ok {
		held = res.Samples + u
	}
	kept := 100.0
	if held > 0 {
		kept = 100 * float64(res.Samples) / float64(held)
	}
	cmd.Printf("%s: %d records, %d channel samples (%.3f %% of what %s held), %d damaged stretch(es) as gaps, %d flipped bit(s) mended, %d samples with covered indices left out\n",
		out, res.Records, res.Samples, kept, in, acc.DamageRegions, len(acc.Corrected), res.Rejected)
	return nil
}

// summaryPer is the samples-per-point of in's first summary, or 0 (the
// writer's default) if it has none before its end or damage.
func summaryPer(in string) (uint32, error) {
	r, err := capture.Open(in)
	if err != nil {
		return 0, err
	}
	defer r.Close()
	r.SkipSamples(true)
	for {
		rec, err := r.Next()
		if err != nil {
			return 0, nil
		}
		if rec.Kind == capture.KindSummary && rec.Summary.Per > 0 {
			return rec.Summary.Per, nil
		}
	}
}

// samePath reports whether a and b name the same file (b may not exist).
func samePath(a, b string) (bool, error) {
	fa, err := os.Stat(a)
	if err != nil {
		return false, err
	}
	fb, err := os.Stat(b)
	if err != nil {
		return false, err
	}
	return os.SameFile(fa, fb), nil
}
