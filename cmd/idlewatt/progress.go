package main

import (
	"github.com/spf13/cobra"

	"github.com/idlewatt/idlewatt/capture"
	"github.com/idlewatt/idlewatt/internal/progress"
)

// startProgress starts the progress line of cmd on its stderr
// (internal/progress), its ticker under the panic guard; Stop it.
func startProgress(cmd *cobra.Command, who string) *progress.Line {
	return progress.Start(cmd.ErrOrStderr(), who, func(f func()) { goSafe(cmd.ErrOrStderr(), f) })
}

// requireSamples is capture.RequireSamples for who: the account of a
// capture without samples is printed as "who: note:" lines on stderr, as
// export and repair do, before the error.
func requireSamples(cmd *cobra.Command, who, path string) error {
	acc, err := capture.RequireSamples(cmd.Context(), path)
	if acc != nil {
		printAccount(cmd.ErrOrStderr(), who, acc)
	}
	return err
}
