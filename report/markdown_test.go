package report

import (
	"bytes"
	"os"
	"strings"
	"testing"

	"github.com/idlewatt/idlewatt/analysis"
	"github.com/idlewatt/idlewatt/capture/notes"
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

// Annotations are listed with their text made inert; a report of an
// interval says so first.
func TestMarkdownAnnotationsAndInterval(t *testing.T) {
	to := 42.0
	r := &analysis.Report{Interval: &analysis.IntervalReport{FromS: 10, ToS: 20},
		Annotations: []notes.Note{{AtS: 12.5, Text: "fan <script>x</script> [link](http://e) | *b*\nnext"}, {AtS: 40, ToS: &to, Text: "door", Source: "cli"}}}
	var b strings.Builder
	WriteMarkdown(&b, r)
	md := b.String()
	if !strings.Contains(md, "**This report covers only 10–20 s of the capture**") || strings.Index(md, "covers only") > strings.Index(md, "## Summary") {
		t.Errorf("no interval line before the summary:\n%s", md)
	}
	want := `| 12.5 | – | fan &lt;script&gt;x&lt;/script&gt; \[link\]\(http://e\) \| \*b\* next |  |`
	if !strings.Contains(md, want) {
		t.Errorf("annotation row missing or not escaped; want %q in:\n%s", want, md)
	}
	if !strings.Contains(md, "| 40 | 42 | door | cli |") {
		t.Errorf("interval annotation row missing:\n%s", md)
	}
}
