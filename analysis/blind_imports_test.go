package analysis_test

import (
	"go/parser"
	"go/token"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"testing"
)

const module = "github.com/idlewatt/idlewatt"

// answerKeys are the packages an estimator must never reach: the
// simulators (their profiles are the truth a campaign scores against),
// the emulators that render them, and the host's control of links and
// drives (what the host asked for reaches analysis only as the capture's
// events). docs/architecture.md, "Who may import whom".
var answerKeys = []string{
	"states/drivesim", "states/nvme/sim", "meter/hub/hubemu", "meter/ppk2/ppk2emu",
	"states/nvme/nvmehost", "states/alpm", "app",
}

// TestAnalysisIsBlind follows every project import of analysis' non-test
// files, whatever their build tags, down to the leaves, and fails if one
// reaches a simulator, an emulator or host control.
func TestAnalysisIsBlind(t *testing.T) {
	root, err := filepath.Abs("..")
	if err != nil {
		t.Fatal(err)
	}
	from := map[string]string{} // package → the package that first imported it
	queue := []string{}
	seed := func(dir string) {
		filepath.WalkDir(filepath.Join(root, dir), func(p string, d os.DirEntry, err error) error {
			if err == nil && d.IsDir() && d.Name() != "testdata" {
				rel, _ := filepath.Rel(root, p)
				if _, ok := from[rel]; !ok {
					from[rel] = ""
					queue = append(queue, rel)
				}
			}
			return nil
		})
	}
	seed("analysis")
	fset := token.NewFileSet()
	for len(queue) > 0 {
		pkg := queue[0]
		queue = queue[1:]
		files, _ := filepath.Glob(filepath.Join(root, pkg, "*.go"))
		for _, f := range files {
			if strings.HasSuffix(f, "_test.go") {
				continue
			}
			pf, err := parser.ParseFile(fset, f, nil, parser.ImportsOnly)
			if err != nil {
				t.Fatal(err)
			}
			for _, is := range pf.Imports {
				ip, _ := strconv.Unquote(is.Path.Value)
				if !strings.HasPrefix(ip, module+"/") {
					continue
				}
				dep := strings.TrimPrefix(ip, module+"/")
				if _, seen := from[dep]; !seen {
					from[dep] = pkg
					queue = append(queue, dep)
				}
			}
		}
	}
	var bad []string
	for p := range from {
		for _, k := range answerKeys {
			if p == k || strings.HasPrefix(p, k+"/") {
				chain := p
				for q := from[p]; q != ""; q = from[q] {
					chain = q + " → " + chain
				}
				bad = append(bad, chain)
			}
		}
	}
	sort.Strings(bad)
	for _, b := range bad {
		t.Errorf("analysis reaches %s", b)
	}
	if len(from) < 10 {
		t.Fatalf("only %d packages followed: the walk did not find analysis", len(from))
	}
}
