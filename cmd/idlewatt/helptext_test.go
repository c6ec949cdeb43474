package main

import (
	"io"
	"strings"
	"testing"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
)

// pflag takes a back-quoted word in a flag's usage as the value's name:
// "see `idlewatt profiles`" showed in --help as "--profile idlewatt profiles".
func TestFlagUsageNoBackquotes(t *testing.T) {
	t.Parallel()
	var walk func(c *cobra.Command)
	walk = func(c *cobra.Command) {
		c.Flags().VisitAll(func(f *pflag.Flag) {
			if strings.Contains(f.Usage, "`") {
				name, _ := pflag.UnquoteUsage(f)
				t.Errorf("%s --%s: usage has a back quote, so --help shows the value as %q: %q", c.CommandPath(), f.Name, name, f.Usage)
			}
		})
		for _, s := range c.Commands() {
			walk(s)
		}
	}
	walk(newRootCmd(newCLI(io.Discard, io.Discard)))
}
