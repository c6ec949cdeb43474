//go:build ignore

// docnames lists the names the documentation gives that the tree does not
// hold: a repository path (analysis/learn.go, states/detect), or a Go
// identifier qualified by its package path or name (analysis/judge.JudgeCycle,
// `stat.MeanStdErr`) that no .go file of that package declares (test files
// included: docs name Fuzz and Test functions). It reads README.md,
// docs/*.md and every doc.go, prints one line per stale name and exits 1
// when there is one. Run it after moving or renaming a package:
//
//	go run scripts/docnames.go
package main

import (
	"bufio"
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
)

// roots are the top-level folders a repository path in the docs starts with.
var roots = []string{"analysis", "app", "capture", "cmd", "fixtures", "firmware", "hostclock", "internal", "meter",
	"report", "scripts", "states", "units", "workload", "docs"}

var (
	pathRE = regexp.MustCompile(`(?:^|[^\w./-])((?:` + strings.Join(roots, "|") + `)(?:/[\w.+-]+)+)`)
	// `pkg.Ident` with a short package name, as prose writes it.
	qualRE = regexp.MustCompile("`([a-z][a-z0-9]*)\\.([A-Z]\\w*)")
)

type tree struct {
	exists map[string]bool            // every file and folder
	pkgs   map[string]map[string]bool // folder → identifiers its .go files declare
	names  map[string][]string        // package name → folders
}

func load() (*tree, error) {
	t := &tree{exists: map[string]bool{}, pkgs: map[string]map[string]bool{}, names: map[string][]string{}}
	fset := token.NewFileSet()
	err := filepath.WalkDir(".", func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() && p != "." && strings.HasPrefix(d.Name(), ".") {
			return filepath.SkipDir
		}
		t.exists[filepath.ToSlash(p)] = true
		if d.IsDir() || !strings.HasSuffix(p, ".go") {
			return nil
		}
		f, err := parser.ParseFile(fset, p, nil, parser.SkipObjectResolution)
		if err != nil {
			return nil // a file that does not parse declares nothing here
		}
		dir := filepath.ToSlash(filepath.Dir(p))
		ids := t.pkgs[dir]
		if ids == nil {
			ids = map[string]bool{}
			t.pkgs[dir] = ids
			if !strings.HasSuffix(f.Name.Name, "_test") {
				t.names[f.Name.Name] = append(t.names[f.Name.Name], dir)
			}
		}
		declared(f, ids)
		return nil
	})
	return t, err
}

// declared adds every top-level name of f, its methods and its struct
// types' fields to ids.
func declared(f *ast.File, ids map[string]bool) {
	for _, d := range f.Decls {
		switch d := d.(type) {
		case *ast.FuncDecl:
			ids[d.Name.Name] = true
		case *ast.GenDecl:
			for _, s := range d.Specs {
				switch s := s.(type) {
				case *ast.TypeSpec:
					ids[s.Name.Name] = true
					if st, ok := s.Type.(*ast.StructType); ok {
						for _, fl := range st.Fields.List {
							for _, n := range fl.Names {
								ids[n.Name] = true
							}
						}
					}
				case *ast.ValueSpec:
					for _, n := range s.Names {
						ids[n.Name] = true
					}
				}
			}
		}
	}
}

// stale returns the names on line that the tree does not hold.
func (t *tree) stale(line string) []string {
	var out []string
	for _, m := range pathRE.FindAllStringSubmatch(line, -1) {
		p := strings.TrimRight(m[1], ".,:;)/")
		if strings.ContainsAny(p, "*<>{}") || strings.HasSuffix(p, "-") || strings.HasPrefix(p, "firmware/build/") {
			continue // a pattern, a placeholder, a build output
		}
		if t.exists[p] {
			continue
		}
		if i := strings.LastIndex(p, "."); i > 0 && t.pkgs[p[:i]] != nil {
			if !t.pkgs[p[:i]][p[i+1:]] {
				out = append(out, p)
			}
			continue
		}
		out = append(out, p)
	}
	for _, m := range qualRE.FindAllStringSubmatch(line, -1) {
		pkg, id := m[1], m[2]
		dirs := t.names[pkg]
		if len(dirs) == 0 || strings.ToUpper(id) == id {
			continue // not a package name; an ALLCAPS placeholder (devslp.PORT)
		}
		found := false
		for _, d := range dirs {
			found = found || t.pkgs[d][id]
		}
		if !found {
			out = append(out, pkg+"."+id)
		}
	}
	return out
}

func main() {
	t, err := load()
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(2)
	}
	docs, _ := filepath.Glob("docs/*.md")
	docs = append(docs, "README.md")
	for p := range t.exists {
		if strings.HasSuffix(p, "/doc.go") {
			docs = append(docs, p)
		}
	}
	sort.Strings(docs)
	n := 0
	for _, doc := range docs {
		f, err := os.Open(doc)
		if err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(2)
		}
		sc := bufio.NewScanner(f)
		sc.Buffer(nil, 1<<20)
		for ln := 1; sc.Scan(); ln++ {
			for _, s := range t.stale(sc.Text()) {
				fmt.Printf("%s:%d: %s\n", doc, ln, s)
				n++
			}
		}
		f.Close()
	}
	if n > 0 {
		os.Exit(1)
	}
}
