package main

import (
	"github.com/spf13/cobra"

	"github.com/idlewatt/idlewatt/app/config"
)

// Simulated drive profiles (docs/drive-profiles.md): the built-in ones and
// the user's under the config key profiles:; the hub emulator's ports take
// them (app/emuhub, --profile).

func init() {
	register(func() *cobra.Command {
		c := &cobra.Command{
			Use:   "profiles",
			Short: "List the simulated drive profiles (built-in and from the config's profiles:)",
			Args:  cobra.NoArgs,
			RunE: func(cmd *cobra.Command, _ []string) error {
				user, err := config.Profiles(cliOf(cmd).cfg)
				if err != nil {
					return err
				}
				return config.WriteProfiles(cmd.OutOrStdout(), user, get(cmd).Bool("json"))
			},
		}
		c.Flags().Bool("json", false, "print JSON (every parameter, keys as in the config)")
		return c
	})
}
