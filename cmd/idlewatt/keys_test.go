package main

import (
	"go/ast"
	"go/parser"
	"go/token"
	"io"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/idlewatt/idlewatt/app/config"
)

// TestConfigKeysCoverFlags: the config key of every flag of every command
// (declared beside its checks, internal/settings), and every key an opt*
// call of this package still names, is in app/config's table, or a user
// setting it would be refused as unknown.
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

	files, _ := filepath.Glob("*.go")
	fset := token.NewFileSet()
	helpers := map[string]int{"optString": 2, "optInt": 2, "optFloat": 2, "optDuration": 2, "optBool": 2,
		"where": 2, "optSet": 2, "outOptions": 1}
	for _, name := range files {
		if strings.HasSuffix(name, "_test.go") {
			continue
		}
		f, err := parser.ParseFile(fset, name, nil, 0)
		if err != nil {
			t.Fatal(err)
		}
		ast.Inspect(f, func(n ast.Node) bool {
			call, ok := n.(*ast.CallExpr)
			if !ok {
				return true
			}
			id, ok := call.Fun.(*ast.Ident)
			if !ok {
				return true
			}
			i, ok := helpers[id.Name]
			if !ok || len(call.Args) <= i {
				return true
			}
			if a, ok := call.Args[i].(*ast.BasicLit); ok {
				if key, _ := strconv.Unquote(a.Value); key != "" {
					if _, ok := keys[key]; !ok {
						t.Errorf("%s: %s(…, %q) names a key missing from app/config's table", fset.Position(call.Pos()), id.Name, key)
					}
				}
			}
			return true
		})
	}
}
