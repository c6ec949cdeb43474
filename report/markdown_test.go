package report

import (
	"bytes"
	"os"
	"strings"
	"testing"

	"github.com/idlewatt/idlewatt/analysis"
)

// A drive name is the user's (--drive-name, drives[].name) or a capture's:
// "a\nb" split every table row it was in, "|" added a cell.
func TestMarkdownNameCells(t *testing.T) {
	f, err := os.Open("../fixtures/reports/small/report.json")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	r, err := analysis.ReadJSON(f)
	if err != nil {
		t.Fatal(err)
	}
	r.Drives[0].Name = "SSD\nline two | pipe"
	var b bytes.Buffer
	WriteMarkdown(&b, r)
	md := b.String()
	if !strings.Contains(md, `| SSD line two \| pipe |`) {
		t.Errorf("the name is not one escaped cell:\n%s", md)
	}
	for i, l := range strings.Split(md, "\n") {
		if strings.HasPrefix(l, "line two") {
			t.Errorf("line %d begins with the name's second line: %q", i+1, l)
		}
	}
}
