package main

import (
	"io"
	"testing"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/idlewatt/idlewatt/app/config"
)

// TestConfigKeysCoverFlags: the config key of every flag of every command
// (declared beside its checks, internal/settings) is in app/config's
// table, or a user setting it would be refused as unknown.
func TestConfigKeysCoverFlags(t *testing.T) {
	t.Parallel()
	keys := config.Keys()
	n := 0
	var walk func(c *cobra.Command)
	walk = func(c *cobra.Command) {
		c.Flags().VisitAll(func(f *pflag.Flag) {
			for _, k := range f.Annotations[annKey] {
				n++
				if _, ok := keys[k]; !ok {
					t.Errorf("%s --%s: key %s is missing from app/config's table", c.CommandPath(), f.Name, k)
				}
			}
		})
		for _, s := range c.Commands() {
			walk(s)
		}
	}
	walk(newRootCmd(newCLI(io.Discard, io.Discard)))
	if n < 10 {
		t.Fatalf("found only %d flags with a config key: the walk is broken", n)
	}

}
