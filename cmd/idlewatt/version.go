package main

import (
	"fmt"
	"runtime"
	"runtime/debug"

	"github.com/spf13/cobra"

	"github.com/idlewatt/idlewatt/internal/buildinfo"
)

func init() {
	if info, ok := debug.ReadBuildInfo(); ok {
		version = buildinfo.Version(version, info)
	}
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
