// Package internal_test checks the rule the folder stands for: internal/
// holds leaf helpers only. A package under internal/ may import the
// standard library, third-party modules, units, hostclock and other
// internal/ packages — nothing else of the project (no meter, capture,
// analysis, report, app, cmd). units and hostclock are held to the same
// rule, so the whole set is closed: nothing it imports, directly or
// through each other, reaches back up the data path.
//
// The check reads the import blocks of every non-test .go file whatever
// its build tags (go/parser, ImportsOnly), so a file built only on
// another platform cannot hide an edge. Test files may import what they
// need (a test is not part of the package's graph); internal/testutil,
// testlong, browsertest and conntest are for them alone, which the last
// check holds.
package internal_test

import (
	"fmt"
	"go/parser"
	"go/token"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"testing"
)

const module = "github.com/idlewatt/idlewatt"

// leafRoots are the folders (relative to the module root) whose packages
// must be leaves, and the module paths those packages may import.
var leafRoots = []string{"internal", "units", "hostclock"}

// allowed reports whether a leaf may import the project package p (a path
// relative to the module).
func allowed(p string) bool {
	for _, r := range leafRoots {
		if p == r || strings.HasPrefix(p, r+"/") {
			return true
		}
	}
	return false
}

// violations walks root/dir for every leaf root and returns one line per
// import of a project package a leaf may not import, as
// "file: imports path", sorted.
func violations(root string) ([]string, error) {
	var out []string
	fset := token.NewFileSet()
	for _, lr := range leafRoots {
		err := filepath.WalkDir(filepath.Join(root, lr), func(path string, d fs.DirEntry, err error) error {
			if err != nil {
				return err
			}
			if d.IsDir() {
				if name := d.Name(); path != filepath.Join(root, lr) && (name == "testdata" || strings.HasPrefix(name, ".") || strings.HasPrefix(name, "_")) {
					return filepath.SkipDir
				}
				return nil
			}
			if !strings.HasSuffix(path, ".go") || strings.HasSuffix(path, "_test.go") {
				return nil
			}
			f, err := parser.ParseFile(fset, path, nil, parser.ImportsOnly)
			if err != nil {
				return err
			}
			rel, _ := filepath.Rel(root, path)
			for _, is := range f.Imports {
				ip, err := strconv.Unquote(is.Path.Value)
				if err != nil {
					return fmt.Errorf("%s: import %s: %v", rel, is.Path.Value, err)
				}
				if ip != module && !strings.HasPrefix(ip, module+"/") {
					continue
				}
				if p := strings.TrimPrefix(strings.TrimPrefix(ip, module), "/"); !allowed(p) {
					out = append(out, fmt.Sprintf("%s: imports %s", filepath.ToSlash(rel), p))
				}
			}
			return nil
		})
		if err != nil {
			return nil, err
		}
	}
	sort.Strings(out)
	return out, nil
}

// testOnly are the packages only _test.go files may import.
var testOnly = []string{module + "/internal/testutil", module + "/internal/testlong", module + "/internal/browsertest", module + "/internal/conntest"}

// testOnlyImports returns one line per non-test .go file under root that
// imports a testOnly package, sorted.
func testOnlyImports(root string) ([]string, error) {
	var out []string
	fset := token.NewFileSet()
	err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			if name := d.Name(); path != root && (name == "testdata" || name == "fixtures" || strings.HasPrefix(name, ".") || strings.HasPrefix(name, "_")) {
				return filepath.SkipDir
			}
			return nil
		}
		if !strings.HasSuffix(path, ".go") || strings.HasSuffix(path, "_test.go") {
			return nil
		}
		f, err := parser.ParseFile(fset, path, nil, parser.ImportsOnly)
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(root, path)
		for _, is := range f.Imports {
			ip, _ := strconv.Unquote(is.Path.Value)
			for _, p := range testOnly {
				if ip == p {
					out = append(out, fmt.Sprintf("%s: imports %s", filepath.ToSlash(rel), strings.TrimPrefix(p, module+"/")))
				}
			}
		}
		return nil
	})
	sort.Strings(out)
	return out, err
}

func TestTestHelpersOnlyInTests(t *testing.T) {
	v, err := testOnlyImports("..")
	if err != nil {
		t.Fatal(err)
	}
	for _, line := range v {
		t.Errorf("%s: a test helper, for _test.go files only", line)
	}
}

func TestInternalHoldsOnlyLeaves(t *testing.T) {
	v, err := violations("..")
	if err != nil {
		t.Fatal(err)
	}
	for _, line := range v {
		t.Errorf("%s: a leaf may import only internal/…, units and hostclock (DESIGN.md; app/doc.go)", line)
	}
}

// TestViolationsCatchesAnUpwardImport runs the check on a small tree of
// its own, so the test above cannot pass by reading nothing.
func TestViolationsCatchesAnUpwardImport(t *testing.T) {
	root := t.TempDir()
	write := func(rel, src string) {
		t.Helper()
		p := filepath.Join(root, filepath.FromSlash(rel))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(src), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write("internal/ok/ok.go", `package ok
import (
	"fmt"
	"golang.org/x/sys/unix"
	"`+module+`/units"
	"`+module+`/hostclock"
	"`+module+`/internal/other"
)`)
	write("internal/bad/bad_linux.go", "//go:build ignore\n\npackage bad\nimport _ \""+module+"/meter/hub\"\n")
	write("internal/bad/bad_test.go", "package bad\nimport _ \""+module+"/app/rig\"\n")
	write("internal/bad/testdata/x.go", "package x\nimport _ \""+module+"/report\"\n")
	write("units/u.go", "package units\nimport _ \""+module+"/analysis\"\n")
	write("hostclock/h.go", "package hostclock\n")
	write("meter/m.go", "package meter\nimport _ \""+module+"/internal/testutil\"\n")
	write("meter/m_test.go", "package meter\nimport _ \""+module+"/internal/testutil\"\n")

	got, err := violations(root)
	if err != nil {
		t.Fatal(err)
	}
	want := []string{
		"internal/bad/bad_linux.go: imports meter/hub",
		"units/u.go: imports analysis",
	}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("violations:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	got, err = testOnlyImports(root)
	if err != nil {
		t.Fatal(err)
	}
	if w := "meter/m.go: imports internal/testutil"; len(got) != 1 || got[0] != w {
		t.Errorf("test-only imports: %q, want [%q]", got, w)
	}
}
