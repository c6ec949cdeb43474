package report

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/idlewatt/idlewatt/analysis"
	"github.com/idlewatt/idlewatt/capture/notes"
)

// compare.md lists each run's annotations with the run's label, escaped.
func TestCompareAnnotations(t *testing.T) {
	a, b := smallReport(t), smallReport(t)
	to := 3.0
	b.Annotations = []notes.Note{{AtS: 1.5, ToS: &to, Text: "fan <b>on</b> | loud"}}
	dir := t.TempDir()
	if err := Compare([]*analysis.Report{a, b}, []string{"before", "after"}, dir); err != nil {
		t.Fatal(err)
	}
	md, err := os.ReadFile(filepath.Join(dir, "compare.md"))
	if err != nil {
		t.Fatal(err)
	}
	if want := `| after | 1.5 | 3 | fan &lt;b&gt;on&lt;/b&gt; \| loud |`; !strings.Contains(string(md), "## Annotations") || !strings.Contains(string(md), want) {
		t.Errorf("compare.md has no annotation row %q:\n%s", want, md)
	}
	if strings.Count(string(md), "| before |") > 0 && strings.Contains(string(md), "| before | 1.5") {
		t.Error("the run without annotations got one")
	}
}
