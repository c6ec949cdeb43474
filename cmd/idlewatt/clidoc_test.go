package main

import (
	"io"
	"os"
	"regexp"
	"strings"
	"testing"

	"github.com/spf13/cobra"
)

// TestCLIDocSynopses reads every `idlewatt …` synopsis of docs/cli.md
// against the command tree: the command it names exists, and so does
// every --flag it shows (on the command or inherited). A renamed or
// removed flag, or a command the doc still lists, fails here. The
// synopses' concrete examples (no placeholder) are run by
// TestREADMEExamples and TestDocExamples; these are checked for their
// words.
func TestCLIDocSynopses(t *testing.T) {
	t.Parallel()
	b, err := os.ReadFile("../../docs/cli.md")
	if err != nil {
		t.Fatal(err)
	}
	root := newRootCmd(newCLI(io.Discard, io.Discard))
	syn := regexp.MustCompile("`idlewatt ([^`]*)`").FindAllStringSubmatch(string(b), -1)
	if len(syn) < 30 {
		t.Fatalf("found %d synopses in docs/cli.md: its layout changed", len(syn))
	}
	flagRE := regexp.MustCompile(`(?:^|[\s\[|(])--([a-z][a-z0-9-]*)`)
	checked := 0
	for _, m := range syn {
		line := strings.ReplaceAll(m[1], `\|`, "|")
		words := strings.Fields(line)
		// The command path: leading lower-case words that name subcommands.
		c := root
		for _, w := range words {
			sub := findSub(c, w)
			if sub == nil {
				break
			}
			c = sub
		}
		if len(words) > 0 && strings.HasSuffix(words[0], ":") {
			continue // a line of output (`idlewatt record: live view on …`), not a synopsis
		}
		if c == root && len(words) > 0 && !strings.HasPrefix(words[0], "-") && words[0] != "COMMAND" {
			t.Errorf("docs/cli.md: `idlewatt %s`: no command %q", m[1], words[0])
			continue
		}
		for _, f := range flagRE.FindAllStringSubmatch(line, -1) {
			if f[1] == "help" {
				continue
			}
			if c.Flags().Lookup(f[1]) == nil && c.InheritedFlags().Lookup(f[1]) == nil && c.PersistentFlags().Lookup(f[1]) == nil {
				t.Errorf("docs/cli.md: `idlewatt %s`: %s has no flag --%s", m[1], c.CommandPath(), f[1])
			}
		}
		checked++
	}
	t.Logf("%d synopses checked", checked)

	// The command table: a row whose first cell is a command's synopsis
	// describes that command; every `--flag` quoted in the row is its.
	rows := 0
	code := regexp.MustCompile("`([^`]*)`")
	for _, l := range strings.Split(string(b), "\n") {
		if !strings.HasPrefix(l, "| `idlewatt ") {
			continue
		}
		cells := strings.Split(strings.ReplaceAll(l, `\|`, "¦"), "|")
		first := code.FindStringSubmatch(cells[1])
		if first == nil {
			continue
		}
		c := root
		for _, w := range strings.Fields(strings.TrimPrefix(first[1], "idlewatt ")) {
			sub := findSub(c, w)
			if sub == nil {
				break
			}
			c = sub
		}
		if c == root {
			continue
		}
		rows++
		for _, q := range code.FindAllStringSubmatch(strings.Join(cells[1:], "|"), -1) {
			if strings.HasPrefix(q[1], "idlewatt ") && !strings.HasPrefix(q[1], "idlewatt "+strings.TrimPrefix(c.CommandPath(), "idlewatt ")) {
				continue // another command's synopsis, named in the description
			}
			for _, f := range flagRE.FindAllStringSubmatch(q[1], -1) {
				if f[1] == "help" {
					continue
				}
				if c.Flags().Lookup(f[1]) == nil && c.InheritedFlags().Lookup(f[1]) == nil && root.Flags().Lookup(f[1]) == nil &&
					crossRef[c.Name()] != f[1] {
					t.Errorf("docs/cli.md, the row of %s: `%s`: no flag --%s", c.CommandPath(), q[1], f[1])
				}
			}
		}
	}
	if rows < 25 {
		t.Fatalf("found %d command rows in docs/cli.md: its layout changed", rows)
	}
	t.Logf("%d command rows checked", rows)
}

// crossRef: a command's row that names another command's flag in its
// prose (annotate: notes made on the live view, `--view` of record and the
// rest; version: the root's `--version`, which cobra adds when it runs).
var crossRef = map[string]string{"annotate": "view", "version": "version"}

func findSub(c *cobra.Command, name string) *cobra.Command {
	for _, s := range c.Commands() {
		if s.Name() == name || s.HasAlias(name) {
			return s
		}
	}
	return nil
}
