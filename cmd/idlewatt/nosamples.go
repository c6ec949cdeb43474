package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"

	"github.com/spf13/cobra"

	"github.com/idlewatt/idlewatt/capture"
)

// errNoSamples is the one account every command that reads a capture gives
// of a capture that holds no samples — a header only, or a header and
// marks, events or statistics, cut before its first samples chunk (docs/
// cli.md, "Damaged captures"): bad input, exit 2, from report, plot, export
// and repair alike. (plot used to exit 2 with "no data to plot" while the
// others exited 0 with nothing in what they wrote.)
var errNoSamples = errors.New("the capture holds no samples")

// noSamplesErr is errNoSamples for path, with where reading stopped (stop:
// the reader's error, nil when the capture ended with its end chunk), as bad
// input.
func noSamplesErr(path string, stop error) error {
	why := "it ends with its end chunk"
	if stop != nil && !errors.Is(stop, io.EOF) {
		why = stop.Error()
	}
	return inputErr(fmt.Errorf("%s: %w (%s); there is nothing to read", path, errNoSamples, why))
}

// requireSamples reads path up to its first sample and returns
// noSamplesErr (after printing the reader's account as "who: note:" lines on
// stderr, as export and repair do) when there is none. A capture that cannot
// be opened returns nil: the command's own read reports that, as before.
// For regular files (the commands that read a capture twice); export, which
// also reads a FIFO, checks as it streams.
func requireSamples(ctx context.Context, cmd *cobra.Command, who, path string) error {
	if fi, err := os.Stat(path); err != nil || !fi.Mode().IsRegular() {
		return nil // a FIFO would block the open: the command refuses it
	}
	r, err := capture.Open(path)
	if err != nil {
		return nil
	}
	defer r.Close()
	var stop error
	for {
		if err := context.Cause(ctx); err != nil {
			return nil // the command's own read says it was interrupted
		}
		rec, err := r.Next()
		if err != nil {
			if !errors.Is(err, io.EOF) && !errors.Is(err, capture.ErrTruncated) {
				return nil // not a cut or damage: the command's own read reports it
			}
			stop = err
			break
		}
		if rec.Kind == capture.KindSamples && rec.Block != nil && rec.Block.Len() > 0 {
			return nil
		}
	}
	acc := r.Account()
	printAccount(cmd.ErrOrStderr(), who, &acc)
	return noSamplesErr(path, stop)
}
