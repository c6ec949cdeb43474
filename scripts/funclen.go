//go:build ignore

// funclen prints the longest functions (by lines, declaration to closing
// brace) in the non-test Go files below the current directory.
//
//	go run scripts/funclen.go [-n 5] [-tests]
package main

import (
	"flag"
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"
)

type fn struct {
	name  string
	pos   token.Position
	lines int
}

func main() {
	n := flag.Int("n", 5, "how many to print")
	tests := flag.Bool("tests", false, "include _test.go files")
	flag.Parse()
	fset := token.NewFileSet()
	var fns []fn
	err := filepath.WalkDir(".", func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() && path != "." && (strings.HasPrefix(d.Name(), ".") || d.Name() == "testdata") {
			return filepath.SkipDir
		}
		if d.IsDir() || !strings.HasSuffix(path, ".go") || (!*tests && strings.HasSuffix(path, "_test.go")) {
			return nil
		}
		f, err := parser.ParseFile(fset, path, nil, parser.SkipObjectResolution)
		if err != nil {
			return err
		}
		for _, decl := range f.Decls {
			fd, ok := decl.(*ast.FuncDecl)
			if !ok || fd.Body == nil {
				continue
			}
			name := fd.Name.Name
			if fd.Recv != nil && len(fd.Recv.List) == 1 {
				name = recv(fd.Recv.List[0].Type) + "." + name
			}
			start, end := fset.Position(fd.Pos()), fset.Position(fd.End())
			fns = append(fns, fn{name, start, end.Line - start.Line + 1})
		}
		return nil
	})
	if err != nil {
		fmt.Fprintln(os.Stderr, "funclen:", err)
		os.Exit(1)
	}
	sort.Slice(fns, func(i, j int) bool { return fns[i].lines > fns[j].lines })
	for _, f := range fns[:min(*n, len(fns))] {
		fmt.Printf("%4d  %s  %s:%d\n", f.lines, f.name, f.pos.Filename, f.pos.Line)
	}
}

func recv(e ast.Expr) string {
	switch t := e.(type) {
	case *ast.StarExpr:
		return recv(t.X)
	case *ast.IndexExpr:
		return recv(t.X)
	case *ast.Ident:
		return t.Name
	}
	return "?"
}
