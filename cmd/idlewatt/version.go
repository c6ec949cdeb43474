package main

import (
	"fmt"
	"runtime"

	"github.com/spf13/cobra"
)

func init() {
	register(func() *cobra.Command {
		return &cobra.Command{
			Use:   "version",
			Short: "Print the version",
			Args:  cobra.NoArgs,
			RunE: func(cmd *cobra.Command, args []string) error {
				fmt.Fprintf(cmd.OutOrStdout(), "idlewatt %s (%s %s/%s)\n", version, runtime.Version(), runtime.GOOS, runtime.GOARCH)
				return nil
			},
		}
	})
}
